"""local-rag: a fully local, offline, multi-turn retrieval-augmented generation stack."""

from __future__ import annotations

__version__ = "0.1.0"

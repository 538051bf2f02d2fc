"""The thin ``local-rag`` command line. Each subcommand module imports its stage lazily."""

from __future__ import annotations

from local_rag.cli.main import main

__all__ = ["main"]

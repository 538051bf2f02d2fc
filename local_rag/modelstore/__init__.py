"""Model files under ``models/``: the manifest, checksums, and resolving a model name to files."""

from __future__ import annotations

from local_rag.modelstore.manifest import Manifest, ModelEntry, ModelFile, file_sha256, resolve_model

__all__ = ["Manifest", "ModelEntry", "ModelFile", "file_sha256", "resolve_model"]

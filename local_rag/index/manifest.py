"""The index manifest: what an index was built from, checked on every load."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from local_rag.errors import IndexError_

FORMAT_VERSION = 1
MANIFEST_FILE = "manifest.json"


@dataclass
class IndexManifest:
    name: str
    created: str
    package_version: str
    corpus_source: str
    corpus_hash: str
    passages: int
    chunks: int
    chunker: dict[str, Any]
    sparse: dict[str, Any] | None = None
    dense: dict[str, Any] | None = None
    skipped: int = 0
    backend: str = "local"  # where the vectors and BM25 terms live: local (FAISS + bm25s files) or qdrant
    format_version: int = FORMAT_VERSION
    history: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, float] = field(default_factory=dict)  # seconds per build step, peak RSS

    def save(self, folder: Path) -> None:
        tmp = folder / (MANIFEST_FILE + ".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, folder / MANIFEST_FILE)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def load(cls, folder: Path) -> IndexManifest:
        path = folder / MANIFEST_FILE
        if not folder.exists():
            raise IndexError_(f"no index at {folder}; build one with `local-rag index build CORPUS --index {folder.name}`")
        if not path.exists():
            raise IndexError_(f"{folder} is not a local-rag index (no {MANIFEST_FILE}); rebuild it with `local-rag index build`")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            manifest = cls(**data)
        except (json.JSONDecodeError, TypeError, UnicodeDecodeError) as exc:
            raise IndexError_(f"{path} is corrupt ({exc}); rebuild the index with `local-rag index build`") from exc
        if manifest.format_version != FORMAT_VERSION:
            raise IndexError_(
                f"{folder} has index format {manifest.format_version}, this local-rag reads {FORMAT_VERSION}; rebuild it"
            )
        return manifest

"""The indexes of a folder, listed and deleted: ``local-rag index list`` and ``local-rag index delete``.

Before, the only list was ``ls indexes/``, and deleting an index with ``rm -rf`` left its lock files, the re-scorer
record `train adapt` kept for it (``NAME.adapted.yaml``, applied to the next index built under that name) and the
vectors an interrupted build kept (``.NAME.embedding``).
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from local_rag.adaptation import adaptation_file
from local_rag.embed.journal import journal_folder
from local_rag.errors import BadInputError, IndexError_
from local_rag.index.lock import writing
from local_rag.index.manifest import MANIFEST_FILE, IndexManifest
from local_rag.modelstore.manifest import folder_bytes


@dataclass
class IndexSummary:
    """One index as `index list` shows it; ``problem`` is set (and the counts are 0) when it cannot be read."""

    name: str
    passages: int = 0
    chunks: int = 0
    size: int = 0  # bytes on disk
    changed: str = ""  # when it was last written
    source: str = ""  # the corpus or folder it follows
    dense: str = ""  # the embedder, or "" for a sparse-only index
    backend: str = "local"
    problem: str = ""
    adapted: bool = False  # `train adapt` kept a re-scorer for it
    kept_vectors: bool = False  # an interrupted build kept vectors for it

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def list_indexes(indexes_dir: Path) -> list[IndexSummary]:
    """Every index folder under ``indexes_dir`` (hidden ones, such as a build's temporary folder, left out), by
    name; a folder without a readable manifest is listed with the reason."""
    if not indexes_dir.is_dir():
        return []
    out = []
    for path in sorted(p for p in indexes_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        summary = IndexSummary(path.name, size=folder_bytes(path), adapted=adaptation_file(indexes_dir, path.name).is_file(),
                               kept_vectors=journal_folder(indexes_dir, path.name).is_dir())
        if not (path / MANIFEST_FILE).exists():
            summary.problem = f"not an index (no {MANIFEST_FILE})"
            out.append(summary)
            continue
        try:
            manifest = IndexManifest.load(path)
        except IndexError_ as exc:
            summary.problem = str(exc)
            out.append(summary)
            continue
        summary.passages, summary.chunks = manifest.passages, manifest.chunks
        summary.changed = str(manifest.history[-1].get("at", "")) if manifest.history else manifest.created
        summary.source = manifest.folder or manifest.followed_source()  # the absolute folder, when it is known
        summary.dense = str(manifest.dense.get("model", "")) if manifest.dense else ""
        summary.backend = manifest.backend
        out.append(summary)
    return out


def index_folder(indexes_dir: Path, name: str) -> Path:
    """The folder of the index ``name`` that `list_indexes` lists.

    Raises:
        BadInputError: no such folder (the names there are listed).
    """
    path = indexes_dir / name
    if not name or name.startswith(".") or "/" in name or not path.is_dir():
        names = ", ".join(s.name for s in list_indexes(indexes_dir)) or "none"
        raise BadInputError(f"no index {name!r} in {indexes_dir} (indexes there: {names})")
    return path


def delete_index(indexes_dir: Path, name: str, lock_timeout_s: float = 600.0) -> int:
    """Delete the index ``name`` with what belongs to it (lock files, adaptation record, kept vectors), holding its
    writer lock so no build or sync is cut off; the bytes freed. A trained re-scorer stays in ``models/``.

    Raises:
        BadInputError: no index of that name (`index_folder`).
    """
    path = index_folder(indexes_dir, name)
    freed = folder_bytes(path)
    with writing(path, lock_timeout_s):
        shutil.rmtree(path)
        for extra in (adaptation_file(indexes_dir, name), journal_folder(indexes_dir, name)):
            if extra.is_dir():
                freed += folder_bytes(extra)
                shutil.rmtree(extra, ignore_errors=True)
            elif extra.is_file():
                freed += extra.stat().st_size
                extra.unlink()
    return freed  # `writing` removed the lock files: the index is gone

"""The content digest of a passage and the order-independent hash of a corpus (recorded in index manifests; the
demo and `index build` compare them to know whether a corpus changed)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from local_rag.records import Passage


def passage_digest(passage: Passage) -> str:
    """sha256 of the passage's title, text and url."""
    return hashlib.sha256(f"{passage.title}\x00{passage.text}\x00{passage.url}".encode()).hexdigest()


def corpus_hash(digests: Mapping[str, str]) -> str:
    """sha256 over ``passage id -> digest`` in id order: the same corpus in any order gives the same hash."""
    digest = hashlib.sha256()
    for pid in sorted(digests):
        digest.update(f"{pid}\x00{digests[pid]}\n".encode())
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (what `local_rag.index.sync` compares)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

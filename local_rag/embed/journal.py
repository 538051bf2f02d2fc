"""The vectors an index write has embedded so far, kept on disk batch by batch, so an interrupted `index build`,
`index add` or `index sync` goes on where it stopped: before, Ctrl-C, a crash or a closed laptop lost every vector
(an hour of embedding on a large folder on two cores).

A batch is found again by the digest of its texts (prefixes included) and the model's checksum: `Embedder.embed`
sorts texts by length and cuts batches the same way each run, so a batch read back is the batch it would embed, and
its vectors are bit for bit those it would compute (padding depends on the batch). Stale batches (another corpus,
another model) are never matched, only carried until the write that made them succeeds and removes the folder.

Files, in ``indexes/.<name>.embedding/``: ``meta.json`` (model checksum and dimension; another one empties the
journal), ``vectors.f32`` (rows appended), ``batches.jsonl`` (a line per batch, written after its rows: a torn last
line or rows without a line are ignored), ``lock`` (one writer: a second build of the same name embeds without it).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
from pathlib import Path
from typing import IO

import numpy as np

log = logging.getLogger("local_rag.embed")


def journal_folder(indexes_dir: Path, index: str) -> Path:
    return indexes_dir / f".{index}.embedding"


class EmbeddingJournal:
    """Batches of vectors by the digest of their texts, for one model; `open` returns None when another process
    holds it."""

    def __init__(self, folder: Path, checksum: str, dimension: int, lock: IO[str]) -> None:
        self.folder = folder
        self.checksum = checksum
        self.dimension = dimension
        self._lock = lock
        self._batches: dict[str, tuple[int, int]] = {}  # digest -> (first row, rows)
        self._rows = 0
        self.reused = 0  # rows read back in this run
        self.broken = False  # a write failed (a full disk): nothing more is kept
        self._load()
        self.kept_before = self._rows
        self._vectors = (folder / "vectors.f32").open("ab")
        self._vectors.truncate(self._rows * dimension * 4)  # rows of a batch whose line was never written
        self._lines = (folder / "batches.jsonl").open("a", encoding="utf-8")

    @classmethod
    def open(cls, folder: Path, checksum: str, dimension: int) -> EmbeddingJournal | None:
        """The journal in ``folder``; None when another process holds it or it cannot be written (the write goes
        on without one: a journal never stops an index write)."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
            lock = (folder / "lock").open("w")
        except OSError:
            return None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            log.warning("note: another process is embedding for this index (%s): this one keeps no journal", folder)
            return None
        try:
            return cls(folder, checksum, dimension, lock)
        except OSError as exc:
            lock.close()
            log.warning("note: cannot keep the vectors in %s (%s): an interruption will lose them", folder,
                        exc.strerror or exc)
            return None

    def _load(self) -> None:
        meta = {"checksum": self.checksum, "dimension": self.dimension}
        meta_path = self.folder / "meta.json"
        try:
            same = json.loads(meta_path.read_text(encoding="utf-8")) == meta
        except (OSError, ValueError):
            same = False
        if not same:
            for name in ("vectors.f32", "batches.jsonl"):
                (self.folder / name).unlink(missing_ok=True)
            meta_path.write_text(json.dumps(meta), encoding="utf-8")
            return
        size = (self.folder / "vectors.f32").stat().st_size if (self.folder / "vectors.f32").exists() else 0
        try:
            lines = (self.folder / "batches.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        for line in lines:
            try:
                entry = json.loads(line)
                key, rows = str(entry["key"]), int(entry["rows"])
            except (ValueError, KeyError, TypeError):
                break  # a torn last line: what follows it was never confirmed
            if (self._rows + rows) * self.dimension * 4 > size:
                break
            self._batches[key] = (self._rows, rows)
            self._rows += rows
        if len(self._batches) < len(lines):  # keep the file in step with what was read
            (self.folder / "batches.jsonl").write_text(
                "".join(json.dumps({"key": k, "rows": r}) + "\n" for k, (_, r) in self._batches.items()),
                encoding="utf-8")

    @staticmethod
    def key(texts: list[str], kind: str) -> str:
        digest = hashlib.sha256(kind.encode())
        for text in texts:
            digest.update(b"\x00" + text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()[:32]

    def get(self, texts: list[str], kind: str) -> np.ndarray | None:
        found = self._batches.get(self.key(texts, kind))
        if found is None or found[1] != len(texts):
            return None
        first, rows = found
        vectors = np.fromfile(self.folder / "vectors.f32", dtype=np.float32, count=rows * self.dimension,
                              offset=first * self.dimension * 4)
        self.reused += rows
        return vectors.reshape(rows, self.dimension)

    def add(self, texts: list[str], kind: str, vectors: np.ndarray) -> None:
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        key = self.key(texts, kind)
        if self.broken or key in self._batches or rows.shape != (len(texts), self.dimension):
            return  # kept once: the rows of each line follow the previous line's
        try:
            self._vectors.write(rows.tobytes())
            self._vectors.flush()
            self._lines.write(json.dumps({"key": key, "rows": len(texts)}) + "\n")
            self._lines.flush()
        except OSError as exc:  # a full disk: embedding goes on, unkept (a batch without its line is read past)
            self.broken = True
            log.warning("note: cannot keep more vectors in %s (%s): an interruption will lose those embedded from "
                        "now on", self.folder, exc.strerror or exc)
            return
        self._batches[key] = (self._rows, len(texts))
        self._rows += len(texts)

    @property
    def rows(self) -> int:
        return self._rows

    def close(self) -> None:
        for fh in (self._vectors, self._lines, self._lock):
            try:
                fh.close()
            except OSError:
                pass  # the flush of a full disk: what was confirmed is read back

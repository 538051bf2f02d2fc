"""The chunk list of an index, read by offset: ``chunks.jsonl`` memory-mapped, a table of line offsets (8 bytes a
row) built at open, and a row parsed only when a search returns it.

Holding the list as Python objects cost ~1 KB a chunk (1.7 GiB at a million 256-token chunks, docs/benchmarks/scale.md)
and a full JSON parse at every open; a search touches a few dozen rows. The file's checksum is still verified whole at
open (`local_rag.index.integrity`), so a corrupt row is caught before any search.

Example:
    >>> chunks = ChunkFile(Path("indexes/demo/chunks.jsonl"))  # doctest: +SKIP
    >>> len(chunks), chunks[0].passage_id  # doctest: +SKIP
"""

from __future__ import annotations

import json
import mmap
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar, overload

import numpy as np

from local_rag.errors import IndexError_
from local_rag.records import Chunk

T = TypeVar("T")
BLOCK = 1 << 24  # bytes scanned for line ends at a time


def line_starts(blocks: Iterable[bytes]) -> np.ndarray:
    """Offsets of every line's start and, last, of the end (``len(result) - 1`` lines; a last line without its
    newline counts), from the file's bytes given in consecutive blocks."""
    parts = [np.zeros(1, dtype=np.int64)]
    size, last = 0, 10
    for block in blocks:
        if block:
            parts.append(np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10).astype(np.int64) + (size + 1))
            size, last = size + len(block), block[-1]
    starts = np.concatenate(parts)
    return np.append(starts, np.int64(size)) if last != 10 else starts


class ChunkFile(Sequence[Chunk]):
    """The rows of a ``chunks.jsonl`` file as a read-only sequence of `Chunk` (row i = line i).

    Raises:
        IndexError_: the file is missing or unreadable (at open), or a row is not a chunk (when read).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            with self.path.open("rb") as fh:
                # the scan reads blocks (page cache) rather than the map, so no page of the map is resident until a
                # row is read
                self._starts = line_starts(iter(lambda: fh.read(BLOCK), b""))
                self._data: bytes | mmap.mmap = b""
                if self._starts[-1]:
                    self._data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise IndexError_(f"{self.path} is missing or unreadable ({exc}); rebuild the index") from exc

    def __len__(self) -> int:
        return len(self._starts) - 1

    @overload
    def __getitem__(self, row: int) -> Chunk: ...

    @overload
    def __getitem__(self, row: slice) -> list[Chunk]: ...

    def __getitem__(self, row: int | slice) -> Chunk | list[Chunk]:
        if isinstance(row, slice):
            return [self._parse(i) for i in range(*row.indices(len(self)))]
        n = len(self)
        if not -n <= row < n:
            raise IndexError(f"chunk row {row} out of range ({n} rows)")
        return self._parse(row % n)

    def __iter__(self) -> Iterator[Chunk]:
        return (self._parse(i) for i in range(len(self)))

    def _parse(self, row: int) -> Chunk:
        line = self._data[int(self._starts[row]) : int(self._starts[row + 1])]
        try:
            return Chunk(**json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError) as exc:
            raise IndexError_(f"{self.path}: row {row} is not a chunk ({exc}); rebuild the index") from exc

    def scan(self, key: re.Pattern[bytes], convert: Callable[[bytes], T]) -> list[T] | None:
        """``convert`` of ``key``'s first group in every row, found by one regular-expression pass over the file (no
        row parsed); None unless ``key`` is found exactly once in each row."""
        found = [(m.start(), m.group(1)) for m in key.finditer(self._data)] if len(self) else []
        if len(found) != len(self):
            return None
        rows = np.searchsorted(self._starts, np.fromiter((s for s, _ in found), dtype=np.int64, count=len(found)),
                               side="right") - 1
        if not np.array_equal(rows, np.arange(len(self))):
            return None
        return [convert(value) for _, value in found]

    def nbytes(self) -> int:
        """RAM this object holds besides the mapped file: the offset table."""
        return int(self._starts.nbytes)

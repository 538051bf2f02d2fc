"""Disk and RAM of an index for a number of chunks, from the curves the scale benchmark measured.

FAISS sizes follow the index structure, with the constants checked against the benchmark's builds (10k to 1M rows,
docs/benchmarks/scale.md): ``Flat`` 4d bytes a row; ``HNSWM`` 4d + 2M links of 4 bytes x 1.03 (upper levels);
``IVFn,SQ8`` d + 8 (the id) a row plus the n centroids; ``IVFn,PQm`` m + 8 plus centroids and codebooks. A FAISS
index is read whole into RAM, so its RAM is its disk size. bm25s stores 8 bytes per posting (score and row) and
is memory-mapped: its RAM is at most its disk size, and a query touches only the columns of its terms. The chunk
list (`IndexFolder.chunks`, a `local_rag.index.chunkfile.ChunkFile`) holds 8 bytes a row in RAM, the offset of its
line in the memory-mapped ``chunks.jsonl``.

Example:
    >>> faiss_bytes("Flat", 1_000_000, 384) / 2**20
    1464.84375
"""

from __future__ import annotations

import re

from local_rag.index.factory import resolve_factory

ID_BYTES = 8
HNSW_LEVELS = 1.03  # links above level 0, and the level tables: measured 1,807 bytes a row for HNSW32 at d=384
POSTING_BYTES = 8.0  # bm25s: float32 score + int32 row per (term, chunk)
POSTINGS_PER_TOKEN = 0.234  # distinct stemmed non-stopword terms per chunk token: 5.4 MB for 11.6k 256-token clapnq chunks
OFFSET_BYTES = 8  # a row of the chunk list's offset table (int64)


def faiss_bytes(factory: str, rows: int, dim: int) -> int:
    """Bytes of a FAISS index (on disk and in RAM) for ``rows`` vectors of dimension ``dim``."""
    factory = resolve_factory(factory, rows)
    code = 4 * dim
    if "SQ8" in factory:
        code = dim
    elif m := re.search(r"PQ(\d+)", factory):
        code = int(m.group(1))
    if m := re.match(r"HNSW(\d+)", factory):
        return int(rows * (code + 2 * int(m.group(1)) * 4 * HNSW_LEVELS))
    if m := re.match(r"IVF(\d+)", factory):
        lists = int(m.group(1))
        codebooks = 256 * dim * 4 if "PQ" in factory else 2 * dim * 4 if "SQ" in factory else 0
        return rows * (code + ID_BYTES) + lists * dim * 4 + codebooks
    return rows * code


def bm25_bytes(rows: int, postings_per_row: float) -> int:
    """Bytes of the bm25s matrix (the vocabulary adds well under 1% at any size measured)."""
    return int(rows * postings_per_row * POSTING_BYTES)


def postings_per_chunk(chunk_tokens: int) -> float:
    """Distinct indexed terms of a chunk of ``chunk_tokens`` model tokens (fitted on the pool and synthetic corpora)."""
    return POSTINGS_PER_TOKEN * chunk_tokens


def chunk_list_bytes(rows: int) -> int:
    """RAM of the chunk list an open index holds: its line-offset table (a row is parsed from the memory-mapped file
    when a search returns it; before session 16 every chunk was a Python object, ~1 KB a 256-token chunk)."""
    return (rows + 1) * OFFSET_BYTES

"""What a search scoped to some documents (`local_rag.retrieve.scope`) costs, against the same search unscoped, at
collection sizes no test reaches: the table of documents (one scan of ``chunks.jsonl``, once per opened index), a
scope's resolution (once per scope), BM25 with a ``weight_mask``, and exact dense search over the scope's stored
vectors against FAISS over all rows.

Synthetic rows stand in for a collection (random unit vectors; texts of 100 words drawn from a 20,000-word
vocabulary, 20 chunks a document, the documents in 1,000 folders ``f000``-``f999``): the costs depend on the sizes,
not on what the text says. ``scripts/bench_scope.py`` runs it.
"""

from __future__ import annotations

import functools
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any  # Any: the JSON figures

import numpy as np

CHUNKS_PER_DOC = 20
FOLDERS = 1000
WORDS = 100
SCOPES = {0.001: "f000", 0.01: "f00?/*", 0.1: "f0??/*", 0.5: "f[0-4]??/*", 1.0: "*"}  # share of the rows: the pattern


def _timed(fn: Callable[[], object], repeat: int) -> float:
    """The median seconds of ``repeat`` calls (after one untimed call)."""
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def doc_id(row: int, rows: int) -> str:
    doc, docs = row // CHUNKS_PER_DOC, max(1, rows // CHUNKS_PER_DOC)
    return f"f{doc * FOLDERS // docs:03d}/doc{doc:07d}.md"


def write_chunks(path: Path, rows: int, rng: np.random.Generator) -> None:
    """A ``chunks.jsonl`` of ``rows`` rows in the shape an index writes (text of `WORDS` words)."""
    vocab = [f"w{i}" for i in range(20_000)]
    with path.open("w", encoding="utf-8") as fh:
        for start in range(0, rows, 10_000):
            words = rng.integers(0, len(vocab), size=(min(10_000, rows - start), WORDS))
            for i, line in enumerate(words, start):
                text = " ".join(vocab[w] for w in line)
                fh.write(json.dumps({"id": f"c{i}", "passage_id": f"p{i}", "doc_id": doc_id(i, rows), "text": text, "title": "",
                                     "url": "", "start": 0, "end": len(text), "page": 0, "section": ""}) + "\n")


def run(rows: int, bm25_rows: int, work: Path, repeat: int = 5, seed: int = 0) -> dict[str, Any]:
    """The figures for one collection size (``bm25_rows``: the BM25 index's rows, smaller: bm25s indexing of a million
    synthetic texts alone takes most of an hour on 2 cores)."""
    from local_rag.index.chunkfile import ChunkFile
    from local_rag.index.dense import DenseIndex
    from local_rag.index.segments import SegmentedSparse
    from local_rag.retrieve.scope import Scope, document_table, resolve
    from local_rag.settings import DenseConfig, SparseConfig

    rng = np.random.default_rng(seed)
    work.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {"rows": rows, "documents": rows // CHUNKS_PER_DOC, "bm25_rows": bm25_rows}

    chunks_path = work / "chunks.jsonl"
    if not chunks_path.exists() or ChunkFile(chunks_path).__len__() != rows:
        write_chunks(chunks_path, rows, rng)
    out["chunks_jsonl_mb"] = round(chunks_path.stat().st_size / 2**20, 1)
    started = time.perf_counter()
    chunks = ChunkFile(chunks_path)
    names, codes = document_table(chunks)
    out["document_table_s"] = round(time.perf_counter() - started, 3)

    vectors = rng.normal(size=(rows, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    dense = DenseIndex.build(vectors, DenseConfig(factory="auto"))  # what `index build` makes at this size
    dense._tune()  # nprobe / efSearch of the settings, as `DenseIndex.load` sets them
    out["dense_factory"] = dense.factory
    del vectors
    query = np.asarray(dense.vectors[7], dtype=np.float32)[None, :]
    out["dense_all_ms"] = round(1000 * _timed(lambda: dense.search(query, 300), repeat), 2)

    bm25_texts = [" ".join(f"w{w}" for w in line) for line in rng.integers(0, 20_000, size=(bm25_rows, WORDS))]
    config = SparseConfig(stemmer="", stopwords="")
    (work / "sparse").mkdir(exist_ok=True)
    SegmentedSparse.build(bm25_texts, config, work / "sparse")
    sparse = SegmentedSparse.load(work / "sparse", config)
    del bm25_texts
    bm25_query = ["w17 w250 w4096"]
    out["bm25_all_ms"] = round(1000 * _timed(lambda: sparse.search(bm25_query, 300), repeat), 2)

    cells = []
    for share, pattern in SCOPES.items():
        scope = Scope.of([pattern])
        started = time.perf_counter()
        scoped = resolve(scope, names, codes)
        resolve_s = time.perf_counter() - started
        mask = scoped.mask
        bm25_mask = mask[:bm25_rows]
        cell = {"share": share, "pattern": pattern, "scoped_rows": scoped.rows,
                "resolve_s": round(resolve_s, 3),
                "dense_scoped_ms": round(1000 * _timed(functools.partial(dense.search_rows, query, 300, mask), repeat), 2)}
        if bm25_mask.any():
            cell["bm25_scoped_ms"] = round(1000 * _timed(functools.partial(sparse.search, bm25_query, 300, mask=bm25_mask), repeat), 2)
        cells.append(cell)
    out["cells"] = cells
    return out

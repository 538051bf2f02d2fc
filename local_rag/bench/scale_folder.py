"""The ``folder`` cell of the scale benchmark: `index add` of 1% new passages through a real index folder.

The folder is assembled from the cells already built at that size (the BM25 segment and the FAISS index the
``auto`` factory would choose, hard-linked, plus chunks, passage digests, stored vectors and a manifest), so that
nothing is built twice. Then `local_rag.index.folder.add_documents` adds the new passages exactly as
``local-rag index add`` does, with an embedder that looks the synthetic vectors up: the figure is the index's cost
of an add (open, chunk, BM25 segment, FAISS add, write, swap), without the embedding, which costs the same per
passage at any index size (see docs/benchmarks.md for MiniLM's throughput).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from local_rag import __version__
from local_rag.bench.scale_cells import DENSE, cell_dir, disk_mb, peak_mb, rss_parts
from local_rag.bench.synthetic import Basis, synthetic_ids, synthetic_texts, synthetic_vectors
from local_rag.corpus.digest import corpus_hash, passage_digest
from local_rag.embed.base import Embedder, Kind
from local_rag.index.factory import FLAT_MAX, resolve_factory
from local_rag.index.folder import (
    _chunk_passages,
    _chunker_section,
    _dense_section,
    _sparse_section,
    add_documents,
)
from local_rag.index.manifest import IndexManifest
from local_rag.records import Passage

NAME = "i29-scale"


class LookupEmbedder(Embedder):
    """Returns the given vectors of known texts (the synthetic corpus's); embeds nothing."""

    backend = "sentence-transformers"

    def __init__(self, config: Any, name: str, texts: list[str], vectors: np.ndarray) -> None:
        super().__init__(config)
        self.name, self.checksum, self.dimension = name, "synthetic", int(vectors.shape[1])
        self.rows = {t: i for i, t in enumerate(texts)}
        self.vectors = vectors

    def embed_batch(self, texts: list[str], kind: Kind) -> np.ndarray:
        return self.vectors[[self.rows[t] for t in texts]]


def _link_tree(source: Path, target: Path) -> None:
    for item in source.rglob("*"):
        if item.is_file():
            (target / item.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
            os.link(item, target / item.relative_to(source))


def folder_add(work: Path, basis: Basis, size: int, settings: Any) -> dict[str, Any]:
    kind = "flat" if size < FLAT_MAX else next(k for k in ("ivf-sq8", "hnsw") if (cell_dir(work, size, k) / "faiss.index").exists())
    settings = settings.model_copy(deep=True)
    settings.indexes_dir = cell_dir(work, size, "folder")
    settings.index = NAME
    settings.chunker.tokenizer, settings.chunker.size, settings.chunker.overlap = "whitespace", 100_000, 0
    settings.dense.factory = resolve_factory(DENSE[kind], size)
    settings.retrieval.retrievers = ["bm25", "dense"]
    shutil.rmtree(settings.indexes_dir, ignore_errors=True)
    folder = settings.index_dir
    started = time.perf_counter()
    passages = [Passage(id=i, text=t, title="") for i, t in zip(synthetic_ids(0, size), synthetic_texts(basis, 0, size), strict=True)]
    chunks, _ = _chunk_passages(settings, passages, False)
    (folder / "dense").mkdir(parents=True)
    with (folder / "chunks.jsonl").open("w", encoding="utf-8") as fh:
        for chunk in chunks:
            fh.write(json.dumps(chunk.to_json(), ensure_ascii=False) + "\n")
    digests = {p.id: passage_digest(p) for p in passages}
    (folder / "passages.json").write_text(json.dumps(digests), encoding="utf-8")
    _link_tree(cell_dir(work, size, "bm25"), folder / "sparse")
    os.link(cell_dir(work, size, kind) / "faiss.index", folder / "dense" / "faiss.index")
    np.save(folder / "dense" / "vectors.f16.npy", synthetic_vectors(basis, 0, size).astype(np.float16))
    new = max(1, size // 100)
    new_texts = synthetic_texts(basis, size, size + new)
    embedder = LookupEmbedder(settings.embedder, settings.embedder.model, new_texts, synthetic_vectors(basis, size, size + new))
    dense = _dense_section(settings, embedder)
    assert dense is not None
    manifest = IndexManifest(
        name=NAME, created="", package_version=__version__, corpus_source="synthetic", corpus_hash=corpus_hash(digests),
        passages=len(passages), chunks=len(chunks), chunker=_chunker_section(settings, "whitespace"),
        sparse=_sparse_section(settings), dense=dense,
    )
    manifest.save(folder)
    assemble_s = time.perf_counter() - started
    del passages, chunks, digests
    corpus = work / f"add-{size}.jsonl"
    with corpus.open("w", encoding="utf-8") as fh:
        for pid, text in zip(synthetic_ids(size, size + new), new_texts, strict=True):
            fh.write(json.dumps({"_id": pid, "title": "", "text": text, "url": ""}) + "\n")
    peak_before = peak_mb()
    started = time.perf_counter()
    after = add_documents(settings, corpus, embedder=embedder, progress=False)
    add_s = time.perf_counter() - started
    segments = json.loads((folder / "sparse" / "segments.json").read_text(encoding="utf-8"))["segments"]
    result = {"dense_kind": kind, "factory": settings.dense.factory, "added": new, "add_s": round(add_s, 2),
              "assemble_s": round(assemble_s, 1), "passages_after": after.passages, "sparse_s": after.stats.get("sparse_s"),
              "faiss_s": after.stats.get("faiss_s"), "segments": len(segments), "peak_rss_mb": round(peak_mb(), 1),
              "peak_rss_before_add_mb": round(peak_before, 1)}
    shutil.rmtree(settings.indexes_dir, ignore_errors=True)
    return result


def chunk_list(work: Path, basis: Basis, size: int, reads: int = 2000) -> dict[str, Any]:
    """The ``chunks`` cell: an index's chunk list at ``size`` chunks, opened as a `ChunkFile` (offsets, rows parsed
    when read) and parsed whole as every index was before session 16 (`read_chunks`), each in a fresh process
    (`open_cost`): open time, the memory each holds, and the time of ``reads`` random row reads."""
    import subprocess
    import sys

    from local_rag.index.folder import CHUNKS_FILE
    from local_rag.records import Chunk

    folder = cell_dir(work, size, "chunks")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    with (folder / CHUNKS_FILE).open("w", encoding="utf-8") as fh:
        for pid, text in zip(synthetic_ids(0, size), synthetic_texts(basis, 0, size), strict=True):
            chunk = Chunk(id=f"{pid}#0", passage_id=pid, doc_id=pid, text=text, end=len(text))
            fh.write(json.dumps(chunk.to_json(), ensure_ascii=False) + "\n")
    result: dict[str, Any] = {"rows": size, "file_mb": round(disk_mb(folder / CHUNKS_FILE), 1)}
    code = ("import json, sys; from local_rag.bench.scale_folder import open_cost; "
            "print(json.dumps(open_cost(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))")
    for method in ("offsets", "parsed"):
        proc = subprocess.run([sys.executable, "-c", code, str(folder), method, str(size), str(reads)],
                              capture_output=True, text=True, check=True)
        result[method] = json.loads(proc.stdout.strip().splitlines()[-1])
    shutil.rmtree(folder, ignore_errors=True)
    return result


def open_cost(folder: str, method: str, size: int, reads: int) -> dict[str, float]:
    """Open the chunk list of ``folder`` one way (``offsets`` or ``parsed``) in this (fresh) process and read
    ``reads`` random rows: open wall and CPU time, the anonymous and file-backed RSS it added (MiB; file-backed pages
    are the kernel's page cache, dropped under memory pressure), and the time of one row read."""
    import random

    from local_rag.index.chunkfile import ChunkFile
    from local_rag.index.folder import CHUNKS_FILE, read_chunks

    rows = random.Random(0).sample(range(size), min(reads, size))
    anon0, file0 = rss_parts()
    cpu0, started = time.process_time(), time.perf_counter()
    chunks = ChunkFile(Path(folder) / CHUNKS_FILE) if method == "offsets" else read_chunks(Path(folder))
    opened, cpu = time.perf_counter() - started, time.process_time() - cpu0
    started = time.perf_counter()
    found = [chunks[r].passage_id for r in rows]
    read_s = time.perf_counter() - started
    anon1, file1 = rss_parts()
    if found != [synthetic_ids(r, r + 1)[0] for r in rows]:
        raise AssertionError("a row read is not the row written")
    return {"open_s": round(opened, 3), "open_cpu_s": round(cpu, 3), "anon_rss_added_mb": round(anon1 - anon0, 1),
            "file_rss_added_mb": round(file1 - file0, 1), "read_us": round(read_s / len(rows) * 1e6, 2)}

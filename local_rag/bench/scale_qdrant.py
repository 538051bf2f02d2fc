"""The ``qdrant`` cell of the scale benchmark: the embedded Qdrant backend beside the local one (FAISS + bm25s).

``build``: a local-backend index folder of the synthetic corpus (`build_index` with vectors looked up, nothing
embedded; one chunk per passage; FAISS by the ``auto`` rule: ``Flat`` below 200k rows, exact like Qdrant's local
mode), then, in a fresh process (its own peak RSS), `rebuild_index` of a copy with ``backend.name: qdrant``: what
``local-rag index rebuild --backend qdrant`` does, re-embedding nothing. Its wall and CPU time, peak RSS and the
size of the Qdrant storage are the figures.

``query``: both folders opened with `open_index` in this process (load wall and CPU, RSS added), then per query and
per backend the hybrid retrieval of the ``hybrid`` cell: BM25 top 30 + dense top 30 + RRF, no query embedding. Thread
CPU and wall p50/p95; the overlap of Qdrant's top 10 (fused, BM25, dense) with the local backend's, and for how many
queries the BM25 and dense top-10 scores are the same rank by rank (the same ranking up to the order of tied rows). The first
``queries`` basis queries only: local mode scores every point of a sparse query in Python (seconds a query at 100k).

Qdrant's local mode is qdrant-client's test form: an exact search engine written in Python (numpy for dense, a
Python loop per point for sparse), with SQLite storage. It is not the Qdrant server (Rust, HNSW, inverted index), which
this machine cannot run (no server installs from PyPI); its figures say what the tests and a small collection cost.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.bench.scale_cells import cell_dir, disk_mb, peak_mb, rss_mb
from local_rag.bench.scale_folder import NAME, LookupEmbedder
from local_rag.bench.synthetic import Basis, synthetic_ids, synthetic_texts, synthetic_vectors
from local_rag.index.folder import build_index, open_index, rebuild_index

QUERIES = 50
DEPTH, K = 30, 10
LOCAL, QDRANT = f"{NAME}-local", f"{NAME}-qdrant"


def _settings(work: Path, size: int, settings: Any, backend: str) -> Any:
    out = settings.model_copy(deep=True)
    out.indexes_dir = cell_dir(work, size, "qdrant")
    out.index = QDRANT if backend == "qdrant" else LOCAL
    out.backend.name = backend
    out.chunker.tokenizer, out.chunker.size, out.chunker.overlap = "whitespace", 100_000, 0  # one chunk a passage
    out.dense.factory = "auto"
    out.retrieval.retrievers = ["bm25", "dense"]
    return out


def qdrant_build(work: Path, basis: Basis, size: int, settings: Any) -> dict[str, Any]:
    local = _settings(work, size, settings, "local")
    shutil.rmtree(local.indexes_dir, ignore_errors=True)
    local.indexes_dir.mkdir(parents=True)
    texts = synthetic_texts(basis, 0, size)
    corpus = local.indexes_dir / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as fh:
        for pid, text in zip(synthetic_ids(0, size), texts, strict=True):
            fh.write(json.dumps({"_id": pid, "title": "", "text": text, "url": ""}) + "\n")
    embedder = LookupEmbedder(local.embedder, local.embedder.model, texts, synthetic_vectors(basis, 0, size))
    cpu0, started = time.process_time(), time.perf_counter()
    manifest = build_index(local, corpus, embedder=embedder, progress=False)
    out: dict[str, Any] = {"local_build_s": round(time.perf_counter() - started, 2),
                           "local_build_cpu_s": round(time.process_time() - cpu0, 2),
                           "local_factory": manifest.dense["faiss_factory"] if manifest.dense else None,
                           "local_disk_mb": round(disk_mb(local.index_dir), 1)}
    del embedder, texts
    corpus.unlink()
    shutil.copytree(local.index_dir, local.indexes_dir / QDRANT, copy_function=os.link)
    code = ("import json, sys; from pathlib import Path; from local_rag.bench.scale_qdrant import convert; "
            "print(json.dumps(convert(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))")
    proc = subprocess.run([sys.executable, "-c", code, str(work), str(size), json.dumps(settings.model_dump(mode="json"))],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"the conversion to Qdrant failed:\n{proc.stderr[-4000:]}")
    out.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def convert(work: Path, size: int, settings_json: str) -> dict[str, Any]:
    """`rebuild_index` of the copied folder with the Qdrant backend, in this (fresh) process."""
    from local_rag.settings import Settings

    qdrant = _settings(work, size, Settings.model_validate(json.loads(settings_json)), "qdrant")
    before = peak_mb()
    cpu0, started = time.process_time(), time.perf_counter()
    rebuild_index(qdrant, backend=qdrant.backend)
    return {"convert_s": round(time.perf_counter() - started, 2), "convert_cpu_s": round(time.process_time() - cpu0, 2),
            "convert_peak_rss_mb": round(peak_mb(), 1), "peak_rss_before_mb": round(before, 1),
            "qdrant_storage_mb": round(disk_mb(qdrant.index_dir / "qdrant"), 1)}


def _rrf(lists: list[np.ndarray]) -> list[int]:
    fused: dict[int, float] = {}
    for rows in lists:
        for rank, row in enumerate(rows.tolist(), start=1):
            if row >= 0:
                fused[row] = fused.get(row, 0.0) + 1 / (60 + rank)
    return [row for row, _ in sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:K]]


def _percentiles(values: list[float]) -> dict[str, float]:
    ms = np.asarray(values) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2), "p95_ms": round(float(np.percentile(ms, 95)), 2)}


def _run(folder: Any, basis: Basis, queries: int) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Hybrid retrieval of the first ``queries`` basis queries through an open index folder."""
    times: dict[str, list[float]] = {f"{part}_{clock}": [] for part in ("bm25", "dense", "hybrid") for clock in ("wall", "cpu")}
    found: dict[str, list[Any]] = {"bm25": [], "dense": [], "hybrid": [], "bm25_scores": [], "dense_scores": []}
    for query, vector in zip(basis.queries[:queries], basis.query_vectors[:queries], strict=True):
        w0, c0 = time.perf_counter(), time.thread_time()
        s_rows, s_scores = folder.sparse.search([query], DEPTH)
        w1, c1 = time.perf_counter(), time.thread_time()
        d_rows, d_scores = folder.dense.search(vector[None, :], DEPTH)
        fused = _rrf([s_rows[0], d_rows[0]])
        w2, c2 = time.perf_counter(), time.thread_time()
        for part, wall, cpu in (("bm25", w1 - w0, c1 - c0), ("dense", w2 - w1, c2 - c1), ("hybrid", w2 - w0, c2 - c0)):
            times[f"{part}_wall"].append(wall)
            times[f"{part}_cpu"].append(cpu)
        found["bm25"].append(s_rows[0][:K].tolist())
        found["dense"].append(d_rows[0][:K].tolist())
        found["hybrid"].append(fused)
        found["bm25_scores"].append(s_scores[0][:K].tolist())
        found["dense_scores"].append(d_scores[0][:K].tolist())
    stats = {part: {**_percentiles(times[f"{part}_wall"]),
                    **{f"cpu_{k}": v for k, v in _percentiles(times[f"{part}_cpu"]).items()}}
             for part in ("bm25", "dense", "hybrid")}
    return stats, found


def _open(settings: Any) -> tuple[Any, dict[str, float]]:
    before, cpu0, started = rss_mb(), time.process_time(), time.perf_counter()
    folder = open_index(settings)
    return folder, {"load_s": round(time.perf_counter() - started, 2), "load_cpu_s": round(time.process_time() - cpu0, 2),
                    "index_rss_mb": round(rss_mb() - before, 1)}


def qdrant_query(work: Path, basis: Basis, size: int, settings: Any, queries: int = QUERIES) -> dict[str, Any]:
    import faiss

    faiss.omp_set_num_threads(1)  # one thread per query, as in the other cells
    out: dict[str, Any] = {"queries": min(queries, len(basis.queries)), "depth": DEPTH}
    found = {}
    for backend in ("local", "qdrant"):
        folder, load = _open(_settings(work, size, settings, backend))
        stats, found[backend] = _run(folder, basis, queries)
        out[backend] = {**load, **stats}
        del folder
    for part in ("bm25", "dense", "hybrid"):
        pairs = list(zip(found["qdrant"][part], found["local"][part], strict=True))
        out[f"{part}_overlap_at_10"] = round(float(np.mean([len(set(q) & set(lo)) / K for q, lo in pairs])), 4)
        out[f"{part}_identical"] = sum(q == lo for q, lo in pairs)
    for part in ("bm25", "dense"):  # equal scores rank by rank: the same ranking up to the order of tied rows
        pairs = list(zip(found["qdrant"][f"{part}_scores"], found["local"][f"{part}_scores"], strict=True))
        out[f"{part}_same_scores"] = sum(len(q) == len(lo) and np.allclose(q, lo, rtol=1e-4, atol=1e-5) for q, lo in pairs)
    out["peak_rss_mb"] = round(peak_mb(), 1)
    return out

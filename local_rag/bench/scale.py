"""``local-rag bench-scale``: build time, memory, disk, load time, latency, recall and ``add`` cost of each index
type at 10k, 100k, 1M (and more) passages, on synthetic corpora (`local_rag.bench.synthetic`).

Each (size, index type) cell runs in a child process (so that its peak RSS is its own) in two steps: ``build``
(build, save, then append 1% new rows and save again) and ``query`` (load from disk, 200 single queries and the same
in batches of 32, recall@10 against exact search, a small sweep of nprobe / efSearch). Results are JSON files, one
per cell and step, under ``work/results``: a run that stops resumes at the first missing cell. Sizes run
ascending. The ``hybrid`` cell times BM25 + HNSW + RRF per query, the ``folder`` cell `index add` of 1% new
passages through the real index folder (no embedding: vectors are given), the ``chunks`` cell the open index's
chunk list (offset table against the whole list parsed), the ``qdrant`` cell the embedded Qdrant backend beside the
local one (`local_rag.bench.scale_qdrant`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.bench.scale_cells import DENSE, cell_dir, disk_mb, peak_mb, rss_mb
from local_rag.bench.synthetic import Basis, synthetic_texts, synthetic_vectors
from local_rag.index.factory import resolve_factory

KINDS = [*DENSE, "bm25", "hybrid", "folder", "chunks", "qdrant"]
SWEEP = {"hnsw": ("efSearch", [32, 64, 128, 256]), "ivf-sq8": ("nprobe", [8, 16, 32, 64]),
         "ivf-pq": ("nprobe", [8, 16, 32, 64])}
TRAIN_PER_LIST = 50  # k-means training points per IVF list (FAISS warns below 39)
STREAM_ABOVE = 1_000_000  # above this many rows a dense cell makes and adds its vectors in batches of this many
BATCH = 32
K = 10


def percentiles(times_s: list[float], cpu_s: list[float] | None = None) -> dict[str, float]:
    """p50/p95 of wall times in ms, and of this thread's CPU times when given (the machine is shared: CPU time is
    what a query costs on an idle core, wall time what it took here)."""
    ms = np.asarray(times_s) * 1000
    out = {"p50_ms": round(float(np.percentile(ms, 50)), 3), "p95_ms": round(float(np.percentile(ms, 95)), 3)}
    if cpu_s is not None:
        cpu = np.asarray(cpu_s) * 1000
        out.update(cpu_p50_ms=round(float(np.percentile(cpu, 50)), 3), cpu_p95_ms=round(float(np.percentile(cpu, 95)), 3))
    return out


class Clock:
    """Wall and thread-CPU seconds of a block: ``with Clock() as c: ...; c.wall, c.cpu``."""

    def __enter__(self) -> Clock:
        self._wall, self._cpu = time.perf_counter(), time.thread_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall, self.cpu = time.perf_counter() - self._wall, time.thread_time() - self._cpu


# ---------------------------------------------------------------- dense


def exact_truth(work: Path, basis: Basis, size: int) -> np.ndarray:
    """Exact top-10 rows of each query (inner product over all rows), cached per size."""
    path = work / f"truth-{size}.npy"
    if path.exists():
        cached: np.ndarray = np.load(path)
        return cached
    import faiss

    best = np.full((len(basis.queries), K), -np.inf, dtype=np.float32)
    rows = np.full((len(basis.queries), K), -1, dtype=np.int64)
    step = 200_000
    for start in range(0, size, step):
        block = synthetic_vectors(basis, start, min(size, start + step))
        scores, idx = faiss.knn(basis.query_vectors, block, K, metric=faiss.METRIC_INNER_PRODUCT)
        both_s = np.concatenate([best, scores], axis=1)
        both_r = np.concatenate([rows, idx + start], axis=1)
        order = np.argsort(-both_s, axis=1)[:, :K]
        best, rows = np.take_along_axis(both_s, order, 1), np.take_along_axis(both_r, order, 1)
    np.save(path, rows)
    return rows


def build_dense(work: Path, basis: Basis, size: int, kind: str) -> dict[str, Any]:
    """Build, save, add 1% and save again. Above `STREAM_ABOVE` rows the vectors are never all in memory (10M float32
    rows are 15 GB): they are made and added `STREAM_ABOVE` rows at a time, IVF is trained on the first rows (the rows
    are independent draws, so the first ones are a random sample), and everything runs on one thread (the CPU time
    of OpenMP threads spinning beside other jobs would count against the build)."""
    import faiss

    factory = resolve_factory(DENSE[kind], size)
    streamed = size > STREAM_ABOVE
    vectors = None if streamed else synthetic_vectors(basis, 0, size)
    threads = 1 if streamed else os.cpu_count() or 1
    rss_data = rss_mb()
    cpu0 = time.process_time()
    started = time.perf_counter()
    index = faiss.index_factory(basis.dimension, factory, faiss.METRIC_INNER_PRODUCT)
    made_cpu = 0.0  # CPU seconds spent making synthetic rows inside the timed build (streamed only)
    if not index.is_trained:
        # k-means on one thread: its many small parallel sections stall when other jobs share the two cores
        faiss.omp_set_num_threads(1)
        ivf = faiss.extract_index_ivf(index)
        if hasattr(index, "do_polysemous_training"):
            index.do_polysemous_training = False  # minutes of annealing for a Hamming filter never used here
        train = min(size, TRAIN_PER_LIST * ivf.nlist)
        if vectors is not None:
            index.train(vectors[np.sort(np.random.default_rng(1).choice(size, size=train, replace=False))])
        else:
            made = time.process_time()
            sample = synthetic_vectors(basis, 0, train)
            made_cpu += time.process_time() - made
            index.train(sample)
            del sample
    faiss.omp_set_num_threads(threads)
    if vectors is not None:
        index.add(vectors)
    else:
        for start in range(0, size, STREAM_ABOVE):
            made = time.process_time()
            batch = synthetic_vectors(basis, start, min(size, start + STREAM_ABOVE))
            made_cpu += time.process_time() - made
            index.add(batch)
            del batch
    build_s = time.perf_counter() - started
    folder = cell_dir(work, size, kind)
    folder.mkdir(parents=True, exist_ok=True)
    faiss.write_index(index, str(folder / "faiss.index"))
    out = {"factory": factory, "build_s": round(build_s, 3), "build_cpu_s": round(time.process_time() - cpu0, 3), "peak_rss_mb": round(peak_mb(), 1),
           "rss_data_mb": round(rss_data, 1), "disk_mb": round(disk_mb(folder / "faiss.index"), 2),
           "raw_vectors_mb": round(size * basis.dimension * 4 / 2**20, 2), "threads": threads}
    if streamed:
        out.update(streamed_rows=STREAM_ABOVE, make_rows_cpu_s=round(made_cpu, 3))
    del vectors
    added = synthetic_vectors(basis, size, size + max(1, size // 100))
    cpu0 = time.process_time()
    started = time.perf_counter()
    index.add(added)
    faiss.write_index(index, str(folder / "faiss-add.index"))
    out["add_1pct_s"] = round(time.perf_counter() - started, 3)
    out["add_1pct_cpu_s"] = round(time.process_time() - cpu0, 3)
    (folder / "faiss-add.index").unlink()
    return out


def _tune(index: Any, kind: str, value: int) -> None:
    import faiss

    if kind == "hnsw":
        index.hnsw.efSearch = value
    elif kind.startswith("ivf"):
        faiss.extract_index_ivf(index).nprobe = value


def _time_queries(search: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], queries: np.ndarray) -> tuple[dict[str, float], dict[str, float], np.ndarray]:
    single, single_cpu, rows = [], [], []
    for i in range(len(queries)):
        with Clock() as c:
            _, r = search(queries[i : i + 1])
        single.append(c.wall)
        single_cpu.append(c.cpu)
        rows.append(r[0])
    batch, batch_cpu = [], []
    for start in range(0, len(queries), BATCH):
        with Clock() as c:
            search(queries[start : start + BATCH])
        batch.append(c.wall)
        batch_cpu.append(c.cpu)
    stats = percentiles(batch, batch_cpu)
    per_query = {k.replace("_ms", "_per_query_ms"): round(v / BATCH, 3) for k, v in stats.items()}
    return percentiles(single, single_cpu), {**stats, **per_query}, np.asarray(rows)


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return round(float(np.mean([len(set(f.tolist()) & set(t.tolist())) / K for f, t in zip(found, truth, strict=True)])), 4)


def query_dense(work: Path, basis: Basis, size: int, kind: str) -> dict[str, Any]:
    import faiss

    truth = exact_truth(work, basis, size)
    faiss.omp_set_num_threads(1)  # one thread per query, as the server runs retrieval; a batch is one call
    before = rss_mb()
    started = time.perf_counter()
    index = faiss.read_index(str(cell_dir(work, size, kind) / "faiss.index"))
    load_s = time.perf_counter() - started
    out: dict[str, Any] = {"load_s": round(load_s, 3), "index_rss_mb": round(rss_mb() - before, 1), "sweep": []}

    def search(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return index.search(q, K)

    param, values = SWEEP.get(kind, ("", [0]))
    for value in values:
        _tune(index, kind, value)
        single, batch, rows = _time_queries(search, basis.query_vectors)
        out["sweep"].append({param or "exact": value, "single": single, "batch": batch, "recall_at_10": recall(rows, truth)})
    return out


# ---------------------------------------------------------------- sparse


def build_bm25(work: Path, basis: Basis, size: int, settings: Any) -> dict[str, Any]:
    from local_rag.index.segments import SegmentedSparse

    texts = synthetic_texts(basis, 0, size)
    rss_data = rss_mb()
    folder = cell_dir(work, size, "bm25")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    cpu0 = time.process_time()
    started = time.perf_counter()
    SegmentedSparse.build(texts, settings.sparse, folder)
    out = {"build_s": round(time.perf_counter() - started, 3), "build_cpu_s": round(time.process_time() - cpu0, 3), "peak_rss_mb": round(peak_mb(), 1),
           "rss_data_mb": round(rss_data, 1), "disk_mb": round(disk_mb(folder), 2),
           "text_mb": round(sum(len(t) for t in texts) / 2**20, 1)}
    del texts
    added = synthetic_texts(basis, size, size + max(1, size // 100))
    target = cell_dir(work, size, "bm25-add")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    cpu0 = time.process_time()
    started = time.perf_counter()
    SegmentedSparse.append(folder, target, added, settings.sparse)
    out["add_1pct_s"] = round(time.perf_counter() - started, 3)
    out["add_1pct_cpu_s"] = round(time.process_time() - cpu0, 3)
    return out


def query_bm25(work: Path, basis: Basis, size: int, settings: Any) -> dict[str, Any]:
    from local_rag.index.segments import SegmentedSparse

    out: dict[str, Any] = {}
    for label, kind in (("one_segment", "bm25"), ("after_add", "bm25-add")):
        before = rss_mb()
        started = time.perf_counter()
        index = SegmentedSparse.load(cell_dir(work, size, kind), settings.sparse)
        load_s = time.perf_counter() - started
        single, single_cpu, batch, batch_cpu = [], [], [], []
        for query in basis.queries:
            with Clock() as c:
                index.search([query], K)
            single.append(c.wall)
            single_cpu.append(c.cpu)
        for start in range(0, len(basis.queries), BATCH):
            with Clock() as c:
                index.search(basis.queries[start : start + BATCH], K)
            batch.append(c.wall)
            batch_cpu.append(c.cpu)
        out[label] = {"load_s": round(load_s, 3), "index_rss_mb": round(rss_mb() - before, 1),
                      "single": percentiles(single, single_cpu), "batch": percentiles(batch, batch_cpu),
                      "segments": len(index.retrievers)}
    return out


def query_hybrid(work: Path, basis: Basis, size: int, settings: Any) -> dict[str, Any]:
    """BM25 (segmented, after the 1% add) + each ANN index built (HNSW efSearch 128, IVF-SQ8 nprobe 64) + RRF per
    query, query embedding not included."""
    import faiss

    faiss.omp_set_num_threads(1)
    out = {}
    for kind, value in (("hnsw", settings.dense.ef_search), ("ivf-sq8", 64)):
        if (cell_dir(work, size, kind) / "faiss.index").exists():
            out[kind] = _hybrid(work, basis, size, settings, kind, value)
    if not out:
        raise RuntimeError(f"no ANN index built at {size}")
    return out


def _hybrid(work: Path, basis: Basis, size: int, settings: Any, kind: str, value: int) -> dict[str, Any]:
    import faiss

    from local_rag.index.segments import SegmentedSparse

    sparse = SegmentedSparse.load(cell_dir(work, size, "bm25-add"), settings.sparse)
    dense = faiss.read_index(str(cell_dir(work, size, kind) / "faiss.index"))
    _tune(dense, kind, value)
    depth = K * 3
    times, cpu = [], []
    for query, vector in zip(basis.queries, basis.query_vectors, strict=True):
        clock = Clock().__enter__()
        s_rows, _ = sparse.search([query], depth)
        _, d_rows = dense.search(vector[None, :], depth)
        fused: dict[int, float] = {}
        for rows in (s_rows[0], d_rows[0]):
            for rank, row in enumerate(rows.tolist(), start=1):
                if row >= 0:
                    fused[row] = fused.get(row, 0.0) + 1 / (60 + rank)
        sorted(fused.items(), key=lambda item: -item[1])[:K]
        clock.__exit__()
        times.append(clock.wall)
        cpu.append(clock.cpu)
    return {"single": percentiles(times, cpu), "param": value, "depth": depth}


# ---------------------------------------------------------------- driver


def run_cell(work: Path, basis: Basis, size: int, kind: str, step: str, settings: Any) -> dict[str, Any]:
    if kind in DENSE:
        return build_dense(work, basis, size, kind) if step == "build" else query_dense(work, basis, size, kind)
    if kind == "bm25":
        return build_bm25(work, basis, size, settings) if step == "build" else query_bm25(work, basis, size, settings)
    if kind == "hybrid":
        return query_hybrid(work, basis, size, settings) if step == "query" else {}
    if kind == "folder":
        from local_rag.bench.scale_folder import folder_add

        return folder_add(work, basis, size, settings) if step == "query" else {}
    if kind == "chunks":
        from local_rag.bench.scale_folder import chunk_list

        return chunk_list(work, basis, size) if step == "query" else {}
    if kind == "qdrant":
        from local_rag.bench.scale_qdrant import qdrant_build, qdrant_query

        return qdrant_build(work, basis, size, settings) if step == "build" else qdrant_query(work, basis, size, settings)
    raise ValueError(kind)


def result_path(work: Path, size: int, kind: str, step: str) -> Path:
    return work / "results" / f"{size}-{kind}-{step}.json"


def run_all(work: Path, sizes: list[int], kinds: list[str], profile: str | None, basis: int = 4000,
            log: Callable[[str], None] = print) -> list[Path]:
    """Run every missing (size, kind, step) cell in a child process, sizes ascending; returns the result files."""
    done = []
    cmd = [sys.executable, "-m", "local_rag.bench.scale", str(work), "0", "basis", "build", profile or "", str(basis)]
    if subprocess.run(cmd, check=False).returncode != 0:  # embeds the basis once, outside every measured cell
        raise RuntimeError("embedding the basis failed")
    for size in sorted(sizes):
        for kind in kinds:
            for step in ("build", "query"):
                path = result_path(work, size, kind, step)
                if not path.exists():
                    log(f"[scale] {size} {kind} {step} ...")
                    started = time.perf_counter()
                    cmd = [sys.executable, "-m", "local_rag.bench.scale", str(work), str(size), kind, step, profile or "",
                           str(basis)]
                    proc = subprocess.run(cmd, check=False)
                    if proc.returncode != 0:
                        log(f"[scale] {size} {kind} {step} failed (exit {proc.returncode}); skipping the rest of {kind}")
                        break
                    log(f"[scale] {size} {kind} {step} done in {time.perf_counter() - started:.0f} s")
                done.append(path)
    return done


def _child(argv: list[str]) -> None:
    from local_rag.bench.synthetic import POOL_DIR, load_basis
    from local_rag.settings import load_settings

    work, size, kind, step, profile = Path(argv[0]), int(argv[1]), argv[2], argv[3], argv[4] or "cpu-test"
    settings = load_settings(profile)
    basis = load_basis(work, POOL_DIR, settings, size=int(argv[5]), progress=kind == "basis")
    if kind == "basis":
        return
    queue = work / "queue.json"  # more cells asked for while this run holds the machine: run them now, in order
    if kind == "hybrid" and step == "build" and queue.exists():
        plan = json.loads(queue.read_text(encoding="utf-8"))
        queue.unlink()
        for sizes, kinds in plan:
            run_all(work, sizes, kinds, profile, int(argv[5]))
    started = time.perf_counter()
    result = run_cell(work, basis, size, kind, step, settings)
    result.update({"size": size, "kind": kind, "step": step, "wall_s": round(time.perf_counter() - started, 2),
                   "load_avg": os.getloadavg()})
    path = result_path(work, size, kind, step)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


if __name__ == "__main__":
    _child(sys.argv[1:])

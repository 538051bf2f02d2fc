"""``local-rag index verify [--deep]``: every problem of an index folder, one line each, never a traceback.

The plain check compares every file with the sha256 recorded in the manifest and the parts with each other (chunk,
passage and row counts, the corpus hash). ``--deep`` also reads the contents (`local_rag.index.integrity`): vector
norms and NaN/inf, FAISS against the stored vectors, the BM25 matrix structure and the chunk texts' digest.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from local_rag.corpus.digest import corpus_hash
from local_rag.errors import IndexError_
from local_rag.index import integrity
from local_rag.index.dense import INDEX_FILE, VECTORS_FILE
from local_rag.index.folder import CHUNKS_FILE, PASSAGES_FILE, index_text, manifest_header, read_chunks
from local_rag.index.lock import reading
from local_rag.index.manifest import IndexManifest
from local_rag.index.segments import SegmentedSparse
from local_rag.settings import Settings


def verify_index(path: Path, deep: bool = False) -> list[str]:
    """Problems of the index folder at ``path`` (empty when it is sound)."""
    with reading(path):
        try:
            return _verify(path, deep)
        except IndexError_ as exc:
            return [str(exc)]
        except (OSError, ValueError, KeyError, TypeError, EOFError, RecursionError, MemoryError) as exc:
            return [f"unreadable: {type(exc).__name__}: {exc}"]


def _verify(path: Path, deep: bool) -> list[str]:
    manifest = IndexManifest.load(path)
    problems = integrity.verify_files(path, manifest.integrity)
    try:
        chunks = read_chunks(path)
    except IndexError_ as exc:
        return problems + [str(exc)]
    if len(chunks) != manifest.chunks:
        problems.append(f"manifest says {manifest.chunks} chunks, {CHUNKS_FILE} has {len(chunks)}")
    try:
        digests = json.loads((path / PASSAGES_FILE).read_text(encoding="utf-8"))
        if not isinstance(digests, dict):
            problems.append(f"{PASSAGES_FILE} is not an object")
        else:
            if corpus_hash(digests) != manifest.corpus_hash:
                problems.append("corpus hash in the manifest does not match passages.json")
            if {c.passage_id for c in chunks} != set(digests):
                problems.append("chunks and passages.json list different passages")
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        problems.append(f"{PASSAGES_FILE} unreadable: {exc}")
    if manifest.backend == "qdrant":
        from local_rag.index.backends.qdrant import verify_qdrant

        problems += verify_qdrant(path, len(chunks), manifest.dense["dimension"] if manifest.dense else None)
    elif manifest.sparse is not None:
        problems += _sparse(path / "sparse", len(chunks), deep)
    if manifest.dense is not None and manifest.backend == "local":
        problems += _dense(path / "dense", manifest, len(chunks), deep)
    if deep:
        header = manifest_header(manifest)
        problems += integrity.chunk_problems(manifest.integrity, [index_text(c, header) for c in chunks])
    return problems


def _sparse(folder: Path, n_chunks: int, deep: bool) -> list[str]:
    segments = SegmentedSparse.read_meta(folder)
    if segments:  # BM25 in segments (local_rag.index.segments): each checked against its own rows
        if sum(m["rows"] for m in segments) != n_chunks:
            return [f"sparse segments hold {sum(m['rows'] for m in segments)} rows for {n_chunks} chunks"]
        return [p for m in segments for p in _sparse_one(folder / m["dir"], m["rows"], deep)]
    return _sparse_one(folder, n_chunks, deep)


def _sparse_one(folder: Path, n_chunks: int, deep: bool) -> list[str]:
    params = folder / "params.index.json"
    if not params.exists():
        return ["sparse index files missing"]
    try:
        data = json.loads(params.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return [f"sparse params unreadable ({exc})"]
    n_docs = data.get("num_docs") if isinstance(data, dict) else None
    if n_docs != n_chunks:
        return [f"sparse index has {n_docs} rows for {n_chunks} chunks"]
    return integrity.bm25_problems(folder, n_chunks) if deep else []


def _dense(folder: Path, manifest: IndexManifest, n_chunks: int, deep: bool) -> list[str]:
    from local_rag._optional import require

    dense = manifest.dense or {}  # called only for an index with a dense part

    faiss = require("faiss", "dense retrieval")
    try:
        index = faiss.read_index(str(folder / INDEX_FILE))
        vectors = np.load(folder / VECTORS_FILE, mmap_mode="r", allow_pickle=False)
    except (RuntimeError, ValueError, OSError, EOFError, MemoryError) as exc:
        return [f"dense index unreadable ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"]
    problems = []
    if vectors.ndim != 2:
        return [f"stored vectors have shape {vectors.shape}"]
    if index.ntotal != n_chunks or vectors.shape[0] != n_chunks:
        problems.append(f"dense index has {index.ntotal} rows and {vectors.shape[0]} stored vectors for {n_chunks} chunks")
    if vectors.shape[1] != dense["dimension"] or index.d != vectors.shape[1]:
        problems.append(f"dense vectors have dimension {vectors.shape[1]} (FAISS {index.d}), manifest says "
                        f"{dense['dimension']}")
    if deep and not problems:
        problems += integrity.vector_problems(vectors)
        problems += integrity.faiss_problems(
            index, vectors, lossy=any(k in str(dense['factory']) for k in ("PQ", "SQ", "LSH"))
        )
    return problems


def load_check_cost(settings: Settings, repeats: int = 5) -> dict[str, float]:
    """What the load-time integrity check costs `open_index`, warm page cache (where its share is largest).

    Wall time with and without the check (interleaved medians) and the CPU time of the load and of the check
    alone (``time.process_time``, all threads): on a machine shared with other jobs the wall-clock difference is
    noise, the CPU times are not. ``check_cpu_share`` is the figure the 5% target is held to.
    """
    import statistics
    import time

    from local_rag.index.folder import open_index

    def timed(check: bool) -> tuple[float, float]:
        saved = integrity.start_load_check
        if not check:
            integrity.start_load_check = lambda folder, recorded: integrity.LoadCheck(folder, [])  # type: ignore[assignment]
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            open_index(settings, derived=True)
            return time.perf_counter() - wall, time.process_time() - cpu
        finally:
            integrity.start_load_check = saved

    timed(True)  # warm the page cache
    with_check, without = [], []
    for _ in range(repeats):
        with_check.append(timed(True))
        without.append(timed(False))
    manifest = IndexManifest.load(settings.index_dir)
    alone = []
    for _ in range(repeats):
        cpu = time.process_time()
        integrity.check_at_load(settings.index_dir, manifest.integrity)
        alone.append(time.process_time() - cpu)
    load_cpu = statistics.median(c for _, c in without)
    check_cpu = statistics.median(alone)
    return {
        "load_s": round(statistics.median(w for w, _ in without), 4),
        "load_with_check_s": round(statistics.median(w for w, _ in with_check), 4),
        "load_cpu_s": round(load_cpu, 4), "load_with_check_cpu_s": round(statistics.median(c for _, c in with_check), 4),
        "check_cpu_s": round(check_cpu, 4), "check_cpu_share": round(check_cpu / load_cpu, 4),
        "bytes": sum(p.stat().st_size for p in integrity.index_files(settings.index_dir)),
    }

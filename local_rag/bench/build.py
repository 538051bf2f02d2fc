"""Index build throughput on a fixed slice of a corpus: chunking, bm25s, embedding and FAISS, each timed alone
(in memory: nothing is written), as ``scripts/bench_retrieval.py`` measures it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from local_rag.settings import Settings

POOL_CORPORA = Path(__file__).resolve().parents[2].parent / "shared" / "mtrag" / "corpora" / "pool"


def default_corpus(index: str) -> Path:
    """The MTRAG pool corpus of an ``mtrag-<domain>`` index when it is there, else the bundled documentation."""
    domain = index.removeprefix("mtrag-")
    pool = POOL_CORPORA / f"{domain}.jsonl"
    if index.startswith("mtrag-") and pool.is_file():
        return pool
    from local_rag.demo import docs_folder

    return docs_folder()


def build_throughput(settings: Settings, embedder: Any, corpus: str | Path, n: int = 500) -> dict[str, Any]:
    """Passages/s of each build step over the first ``n`` passages of ``corpus`` (``embedder`` None: no dense)."""
    from local_rag.corpus.readers import read_corpus
    from local_rag.index.dense import DenseIndex
    from local_rag.index.folder import _chunk_passages, index_text
    from local_rag.index.sparse import SparseIndex

    passages = []
    for p in read_corpus(Path(corpus)):
        passages.append(p)
        if len(passages) >= n:
            break
    out: dict[str, Any] = {"corpus": str(corpus), "passages": len(passages)}
    if not passages:
        return out
    started = time.perf_counter()
    chunks, _ = _chunk_passages(settings, passages, progress=False)
    chunk_s = time.perf_counter() - started
    texts = [index_text(c, settings.chunker.header) for c in chunks]
    started = time.perf_counter()
    SparseIndex.build(texts, settings.sparse)
    bm25_s = time.perf_counter() - started
    out.update({"chunks": len(chunks), "chunking_passages_per_s": round(len(passages) / chunk_s, 1),
                "bm25_passages_per_s": round(len(passages) / bm25_s, 1)})
    if embedder is not None:
        started = time.perf_counter()
        vectors = embedder.embed(texts, kind="passage", for_index=True)
        embed_s = time.perf_counter() - started
        started = time.perf_counter()
        DenseIndex.build(vectors, settings.dense)
        faiss_s = time.perf_counter() - started
        total = chunk_s + bm25_s + embed_s + faiss_s
        out.update({"embedding_passages_per_s": round(len(passages) / embed_s, 1),
                    "embedding_chunks_per_s": round(len(chunks) / embed_s, 1),
                    "faiss_vectors_per_s": round(len(chunks) / faiss_s, 1),
                    "embedder": getattr(embedder, "name", ""), "embedder_dtype": getattr(embedder, "dtype", ""),
                    "faiss_factory": settings.dense.factory})
    else:
        total = chunk_s + bm25_s
    out["total_passages_per_s"] = round(len(passages) / total, 1)
    return out

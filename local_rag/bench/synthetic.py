"""Synthetic corpora of any size for the scale benchmark, made from the MTRAG pool corpora without embedding them.

A basis of real passages is embedded once (MiniLM, cached outside the repository). Synthetic passage ``i`` mixes two
basis passages ``a`` and ``b``: its text is the first half of ``a``'s sentences followed by the second half of
``b``'s (realistic length and vocabulary for bm25s), its vector is ``w e_a + (1 - w) e_b`` plus Gaussian noise,
normalised (a continuum of realistic directions, so ANN recall against exact search means something). Row ``i``
is a pure function of ``(seed, i)``: any slice can be made without the rows before it, and the rows past a
corpus's end are its "new passages" for ``index add``. Queries are real MTRAG last-turn questions, embedded as
queries.

Example:
    >>> basis = load_basis(Path("~/.cache/local-rag/scale").expanduser(), POOL_DIR, settings)  # doctest: +SKIP
    >>> vectors = synthetic_vectors(basis, 0, 10_000)  # doctest: +SKIP
    >>> texts = synthetic_texts(basis, 0, 10_000)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from local_rag.settings import Settings

POOL_DIR = Path("/work/shared/mtrag/corpora/pool")
TASKS_DIR = Path("/work/shared/mtrag/retrieval_tasks")
BLOCK = 50_000  # rows drawn per random stream
NOISE = 0.35  # norm of the noise added to a mixed vector of norm ~0.85


@dataclass
class Basis:
    sentences: list[list[str]]  # per basis passage
    vectors: np.ndarray  # (basis, dimension) float32, L2-normalised
    queries: list[str]
    query_vectors: np.ndarray
    seed: int = 0
    noise: float = NOISE

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1])


def split_sentences(text: str) -> list[str]:
    parts = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text)]
    return [s for s in parts if s]


def _read_pool(pool_dir: Path) -> list[str]:
    texts = []
    for path in sorted(pool_dir.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                record = json.loads(line)
                texts.append(f"{record.get('title', '')}\n{record['text']}".strip())
    return texts


def _read_queries(tasks_dir: Path) -> list[str]:
    out: list[str] = []
    for path in sorted(tasks_dir.glob("*/*_lastturn.jsonl")):
        with path.open(encoding="utf-8") as fh:
            out.extend(json.loads(line)["text"] for line in fh)
    return out


def load_basis(work: Path, pool_dir: Path, settings: Settings, size: int = 4000, queries: int = 200, seed: int = 0,
               tasks_dir: Path = TASKS_DIR, progress: bool = True) -> Basis:
    """The embedded basis and queries, from ``work/basis-*.npz`` or embedded now (minutes on a CPU) and cached."""
    cache = work / f"basis-{size}-{queries}-{seed}.npz"
    if cache.exists():
        data = np.load(cache, allow_pickle=False)
        meta = json.loads(str(data["meta"]))
        return Basis(meta["sentences"], data["vectors"], meta["queries"], data["query_vectors"], seed)
    rng = np.random.default_rng(seed)
    texts = _read_pool(pool_dir)
    picked = [texts[i] for i in sorted(rng.choice(len(texts), size=min(size, len(texts)), replace=False))]
    asked = _read_queries(tasks_dir)
    chosen = [asked[i] for i in sorted(rng.choice(len(asked), size=min(queries, len(asked)), replace=False))]
    from local_rag.embed import load_embedder

    embedder = load_embedder(settings.embedder, settings.models_dir)
    vectors = embedder.embed(picked, kind="passage", progress=progress, for_index=True)
    query_vectors = embedder.embed(chosen, kind="query", progress=progress)
    sentences = [split_sentences(t) for t in picked]
    work.mkdir(parents=True, exist_ok=True)
    meta = json.dumps({"sentences": sentences, "queries": chosen, "model": embedder.name})
    np.savez(cache, vectors=vectors, query_vectors=query_vectors, meta=np.array(meta))
    return Basis(sentences, vectors, chosen, query_vectors, seed)


def _pairs(basis: Basis, block: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.random.Generator]:
    rng = np.random.default_rng([basis.seed, block])
    n = len(basis.sentences)
    return rng.integers(n, size=BLOCK), rng.integers(n, size=BLOCK), rng.uniform(0.2, 0.8, size=BLOCK), rng


def _blocks(start: int, stop: int) -> Iterator[tuple[int, int, int]]:
    for block in range(start // BLOCK, (stop - 1) // BLOCK + 1):
        lo, hi = max(start, block * BLOCK), min(stop, (block + 1) * BLOCK)
        yield block, lo - block * BLOCK, hi - block * BLOCK


def synthetic_vectors(basis: Basis, start: int, stop: int) -> np.ndarray:
    """Rows ``start..stop`` of the synthetic vectors, float32, L2-normalised."""
    out = np.empty((stop - start, basis.dimension), dtype=np.float32)
    at = 0
    for block, lo, hi in _blocks(start, stop):
        a, b, w, rng = _pairs(basis, block)
        noise = rng.standard_normal((BLOCK, basis.dimension), dtype=np.float32)[lo:hi]
        noise *= basis.noise / np.sqrt(basis.dimension)
        mixed = w[lo:hi, None] * basis.vectors[a[lo:hi]] + (1 - w[lo:hi, None]) * basis.vectors[b[lo:hi]] + noise
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        out[at : at + hi - lo] = mixed
        at += hi - lo
    return out


def synthetic_texts(basis: Basis, start: int, stop: int) -> list[str]:
    """Rows ``start..stop`` of the synthetic texts: half of basis passage ``a``'s sentences, then half of ``b``'s."""
    out: list[str] = []
    for block, lo, hi in _blocks(start, stop):
        a, b, _, _ = _pairs(basis, block)
        for i in range(lo, hi):
            first, second = basis.sentences[a[i]], basis.sentences[b[i]]
            out.append(" ".join(first[: max(1, len(first) // 2)] + second[len(second) // 2 :]))
    return out


def synthetic_ids(start: int, stop: int) -> list[str]:
    return [f"syn-{i:09d}" for i in range(start, stop)]

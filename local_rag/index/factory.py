"""The FAISS index factory for a corpus size, chosen from the scale benchmark (docs/benchmarks/scale.md).

``dense.factory: auto`` (the default) picks, by the number of chunks indexed:

- below `FLAT_MAX` rows, ``Flat``: exact, no training, and a single query still costs only a few milliseconds;
- from there on, ``IVF{lists},SQ8``: at 1M rows (IVF2048,SQ8) recall@10 against exact 0.967 at nprobe 32 (the
  default `dense.nprobe`) for 1.15 ms CPU a query, in 0.26x the raw vectors (one byte a dimension); vectors are
  added to the trained lists without retraining. HNSW32 measured 0.633 at efSearch 128 (0.773 at 256) on the same
  1M rows for 1.18x the raw vectors.

``IVF{lists}`` in a factory string is replaced by a list count suited to the size (`ivf_lists`).

Example:
    >>> choose_factory(10_000), choose_factory(2_000_000)
    ('Flat', 'IVF2048,SQ8')
    >>> resolve_factory("IVF{lists},SQ8", 1_000_000)
    'IVF2048,SQ8'
"""

from __future__ import annotations

import math

FLAT_MAX = 200_000
AUTO = "auto"


def ivf_lists(rows: int) -> int:
    """About 2 sqrt(rows) lists, a power of two, with at least 39 training points per list."""
    lists = int(2 ** round(math.log2(max(1.0, 2 * math.sqrt(rows)))))
    return max(1, min(lists, rows // 39))


def choose_factory(rows: int) -> str:
    """The auto factory for ``rows`` vectors, ``IVF{lists}`` already filled in."""
    return "Flat" if rows < FLAT_MAX else f"IVF{ivf_lists(rows)},SQ8"


def resolve_factory(factory: str, rows: int) -> str:
    """The factory string to build for ``rows`` vectors: ``auto`` chosen by size, ``IVF{lists}`` filled in."""
    if factory == AUTO:
        factory = choose_factory(rows)
    return factory.replace("{lists}", str(ivf_lists(rows)))


def check_factory(factory: str, dimension: int) -> None:
    """Refuse a FAISS factory string FAISS cannot build for ``dimension``-wide vectors, before anything is read or
    embedded (``--factory NOPE`` was a C++ ``RuntimeError`` traceback after the whole corpus had been embedded).

    Raises:
        BadInputError: FAISS's reason in one line, with examples of strings it takes.
    """
    from local_rag._optional import require
    from local_rag.errors import BadInputError

    if factory == AUTO or dimension < 1:
        return
    faiss = require("faiss", "dense retrieval")
    try:
        faiss.index_factory(dimension, resolve_factory(factory, 100_000), faiss.METRIC_INNER_PRODUCT)
    except RuntimeError as exc:
        raise BadInputError(f"FAISS factory {factory!r} for {dimension}-dimensional vectors: {faiss_reason(exc)} "
                            "(e.g. auto, Flat, HNSW32, IVF{lists},SQ8, IVF1024,PQ32)") from None


def faiss_reason(exc: RuntimeError) -> str:
    """The reason in one of FAISS's C++ errors, without the function signature and source line before it:
    "Error in ... at index_factory.cpp:1228: could not parse index string NOPE" -> "could not parse index string
    NOPE"; "... Error: 'nx >= k' failed: Number of training points ..." -> "Number of training points ..."."""
    lines = str(exc).strip().splitlines()
    if not lines:
        return type(exc).__name__
    last = lines[-1]
    return last.split("failed: ", 1)[1] if "failed: " in last else last.split(": ", 1)[-1]


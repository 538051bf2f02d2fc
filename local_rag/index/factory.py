"""The FAISS index factory for a corpus size, chosen from the scale benchmark (docs/benchmarks/scale.md).

``dense.factory: auto`` (the default) picks, by the number of chunks indexed:

- below `FLAT_MAX` rows, ``Flat``: exact, no training, and a single query still costs only a few milliseconds;
- from there on, ``HNSW32``: recall@10 >= 0.95 against exact at efSearch 128 and ~1 ms per query at 1M rows, for
  1.17x the raw vectors in RAM (the 32 links per vector), and vectors can be added without retraining.

``IVF{lists}`` in a factory string is replaced by a list count suited to the size (`ivf_lists`).

Example:
    >>> choose_factory(10_000), choose_factory(2_000_000)
    ('Flat', 'HNSW32')
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
    return "Flat" if rows < FLAT_MAX else "HNSW32"


def resolve_factory(factory: str, rows: int) -> str:
    """The factory string to build for ``rows`` vectors: ``auto`` chosen by size, ``IVF{lists}`` filled in."""
    if factory == AUTO:
        factory = choose_factory(rows)
    return factory.replace("{lists}", str(ivf_lists(rows)))

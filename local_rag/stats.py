"""Small statistics shared by the evaluation and the benchmarks."""

from __future__ import annotations

from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, interpolated linearly between ranks; 0.0 for no values.

    Example:
        >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5)
        2.5
    """
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)

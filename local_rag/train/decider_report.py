"""Figures of the decision stage beyond `local_rag.evaluation.generation.kinds`: latency percentiles, the confusion
matrix as a markdown table and as a plot.

Example:
    >>> latency([0.010, 0.020, 0.030])["p50_ms"]
    20.0
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from local_rag.evaluation.generation.kinds import KINDS


def latency(seconds: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / max in milliseconds."""
    ms = np.asarray(seconds, dtype=np.float64) * 1000
    if not len(ms):
        return {}
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2), "p95_ms": round(float(np.percentile(ms, 95)), 2),
            "max_ms": round(float(ms.max()), 2), "n": len(ms)}


def confusion_markdown(confusion: dict[str, dict[str, int]]) -> str:
    lines = ["| gold \\ kind | " + " | ".join(KINDS) + " |", "|---|" + "---:|" * len(KINDS)]
    for g, row in confusion.items():
        lines.append(f"| {g} | " + " | ".join(str(row[k]) for k in KINDS) + " |")
    return "\n".join(lines)


def plot_confusions(panels: dict[str, dict[str, dict[str, int]]], path: Path) -> Path:
    """One heat map per confusion matrix (rows: gold class, columns: kind), shares per row, counts written in."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.6), squeeze=False)
    for ax, (title, confusion) in zip(axes[0], panels.items(), strict=True):
        golds = list(confusion)
        counts = np.array([[confusion[g][k] for k in KINDS] for g in golds], dtype=float)
        shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
        ax.set_xticks(range(len(KINDS)), KINDS)
        ax.set_yticks(range(len(golds)), golds)
        for i in range(len(golds)):
            for j in range(len(KINDS)):
                ax.text(j, i, int(counts[i, j]), ha="center", va="center", color="white" if shares[i, j] > 0.6 else "black")
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

"""Figures of the decision stage: the confusion matrix of ``kind`` against the gold class, the decline and
clarify rates the issue sets targets for, per-class accuracy, latency percentiles, and the matrix as a plot.

Example:
    >>> m = kind_metrics(["ANSWERABLE", "UNANSWERABLE", "UNDERSPECIFIED"], ["answer", "decline", "answer"])
    >>> m["decline_unanswerable"], m["clarify_underspecified"], m["decline_answerable"]
    (1.0, 0.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.train.decider_data import GOLD_CLASSES, KIND_OF

KINDS = ("answer", "decline", "clarify", "chitchat")
ANSWERABLE = ("ANSWERABLE", "PARTIAL")
TARGETS = {"decline_unanswerable": (">=", 0.80), "decline_answerable": ("<=", 0.10),
           "clarify_underspecified": (">=", 0.50), "clarify_answerable": ("<=", 0.05)}


def _share(kinds: Sequence[str], golds: Sequence[str], kind: str, classes: Sequence[str]) -> float | None:
    picked = [k for k, g in zip(kinds, golds, strict=True) if g in classes]
    return round(sum(k == kind for k in picked) / len(picked), 3) if picked else None


def kind_metrics(golds: Sequence[str], kinds: Sequence[str]) -> dict[str, Any]:
    """Rates and the confusion matrix of ``kinds`` (chosen) against ``golds`` (answerability classes).

    Per-class accuracy: the share of a gold class given its right kind (`local_rag.decide.data.KIND_OF`; a
    CONVERSATIONAL task counts as right when declined too, as MTRAG scores it).
    """
    confusion = {g: dict.fromkeys(KINDS, 0) for g in GOLD_CLASSES}
    for g, k in zip(golds, kinds, strict=True):
        confusion.setdefault(g, dict.fromkeys(KINDS, 0))[k] += 1
    accuracy = {}
    for g, row in confusion.items():
        n = sum(row.values())
        if n:
            right = row[KIND_OF.get(g, "answer")] + (row["decline"] if g == "CONVERSATIONAL" else 0)
            accuracy[g] = round(right / n, 3)
    return {
        "n": len(golds),
        "decline_unanswerable": _share(kinds, golds, "decline", ("UNANSWERABLE",)),
        "decline_answerable": _share(kinds, golds, "decline", ANSWERABLE),
        "clarify_underspecified": _share(kinds, golds, "clarify", ("UNDERSPECIFIED",)),
        "clarify_answerable": _share(kinds, golds, "clarify", ANSWERABLE),
        "accuracy_by_class": accuracy,
        "confusion": {g: row for g, row in confusion.items() if sum(row.values())},
    }


def targets_met(metrics: dict[str, Any]) -> dict[str, bool | None]:
    """Each target of the issue: met, missed, or None when the set has no task of that class."""
    out: dict[str, bool | None] = {}
    for name, (op, bound) in TARGETS.items():
        value = metrics.get(name)
        out[name] = None if value is None else (value >= bound if op == ">=" else value <= bound)
    return out


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

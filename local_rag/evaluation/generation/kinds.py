"""Per-class figures of a turn's ``kind`` (answer, decline, clarify, chitchat) against the gold answerability class:
the confusion matrix, the decline and clarify rates the decision stage is held to, and per-class accuracy.

Example:
    >>> m = kind_metrics(["ANSWERABLE", "UNANSWERABLE", "UNDERSPECIFIED"], ["answer", "decline", "answer"])
    >>> m["decline_unanswerable"], m["clarify_underspecified"], m["decline_answerable"]
    (1.0, 0.0, 0.0)
    >>> m["accuracy_by_class"]
    {'ANSWERABLE': 1.0, 'UNANSWERABLE': 1.0, 'UNDERSPECIFIED': 0.0}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: gold answerability -> the kind a turn should get
KIND_OF = {"ANSWERABLE": "answer", "PARTIAL": "answer", "UNANSWERABLE": "decline", "UNDERSPECIFIED": "clarify",
           "CONVERSATIONAL": "chitchat"}
GOLD_CLASSES = tuple(KIND_OF)
KINDS = ("answer", "decline", "clarify", "chitchat")
ANSWERABLE = ("ANSWERABLE", "PARTIAL")
TARGETS = {"decline_unanswerable": (">=", 0.80), "decline_answerable": ("<=", 0.10),
           "clarify_underspecified": (">=", 0.50), "clarify_answerable": ("<=", 0.05)}


def _share(kinds: Sequence[str], golds: Sequence[str], kind: str, classes: Sequence[str]) -> float | None:
    picked = [k for k, g in zip(kinds, golds, strict=True) if g in classes]
    return round(sum(k == kind for k in picked) / len(picked), 3) if picked else None


def kind_metrics(golds: Sequence[str], kinds: Sequence[str]) -> dict[str, Any]:
    """Rates and the confusion matrix of ``kinds`` (chosen) against ``golds`` (answerability classes).

    Per-class accuracy: the share of a gold class given its right kind (`KIND_OF`; a
    CONVERSATIONAL task counts as right when declined too, as MTRAG scores it).
    """
    confusion = {g: dict.fromkeys(KINDS, 0) for g in GOLD_CLASSES}
    kinds = ["decline" if k == "idk" else k for k in kinds]  # runs made before the decision stage say "idk"
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

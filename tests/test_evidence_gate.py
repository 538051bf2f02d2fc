"""scripts/evidence_gate.py: the gate figures from per-task signals, against hand-computed values."""

from __future__ import annotations

import pytest

from tests.scripts import load_script


def row(answerability: str, best: float | None, judged: list[int] | None = None, without: int = 0) -> dict:
    out = {"task_id": "t", "answerability": answerability, "domain": "govt", "best_dense": best,
           "best_dense_given": best, "hits": 10, "hits_without_dense": without}
    return out | ({"judge_scores": judged} if judged is not None else {})


def test_auc_counts_pairs_and_ties() -> None:
    gate = load_script("evidence_gate")
    assert gate.auc([0.1, 0.2], [0.3, 0.4]) == 1.0  # every UNANSWERABLE task below every answered one
    assert gate.auc([0.5], [0.5]) == 0.5
    assert gate.auc([0.3, 0.6], [0.4, 0.5]) == 0.5  # 0.3 wins both pairs, 0.6 loses both
    assert gate.auc([], [0.4]) is None


def test_the_turn_gate_and_the_judge_gate() -> None:
    gate = load_script("evidence_gate")
    rows = [row("UNANSWERABLE", 0.42, [0, 0]), row("UNANSWERABLE", None, [1]),  # no dense hit counts as 0
            row("ANSWERABLE", 0.58, [2, 0]), row("PARTIAL", 0.44, [1], without=3), row("CONVERSATIONAL", 0.1, [])]
    summary = gate.summarize(rows)
    assert summary["tasks"] == {"UNANSWERABLE": 2, "ANSWERABLE/PARTIAL": 2}
    by_threshold = {g["threshold"]: g for g in summary["turn_gate"]}
    assert by_threshold[0.45] == {"threshold": 0.45, "declined_unanswerable": 1.0, "declined_answered": 0.5}
    assert by_threshold[0.2] == {"threshold": 0.2, "declined_unanswerable": 0.5, "declined_answered": 0.0}
    assert summary["auc"] == 1.0
    assert summary["tasks_where_every_hit_has_a_dense_score"] == 4
    assert summary["judge_gate"] == [
        {"min_score": 1, "declined_unanswerable": 0.5, "declined_answered": 0.0},
        {"min_score": 2, "declined_unanswerable": 1.0, "declined_answered": 0.5},
    ]
    assert summary["judge_auc"] == pytest.approx((1 + 1 + 0.5 + 1) / 4)
    assert "judge_gate" not in gate.summarize([row("UNANSWERABLE", 0.4), row("ANSWERABLE", 0.6)])
    assert "| 0.45 | 1.000 | 0.500 |" in gate.markdown(summary, "t", "cmd")

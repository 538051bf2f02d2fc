"""`local-rag train draft-gate`: the draft gate (`local_rag.decide.draft`) learned from generated answers.

Examples are the answers of generation runs (``predictions.jsonl`` of ``local-rag eval generation --setting rag``,
official shape: the task's answerability, the draft in ``predictions[0].text`` and the passages it was given in
``contexts``) with, optionally, the decision stage's P(decline) for the same tasks (the ``predictions.jsonl`` that
``local-rag train decider`` writes: out-of-fold on MTRAG-UN, so stacking on it learns nothing twice). UNANSWERABLE
drafts are positives, ANSWERABLE and PARTIAL ones negatives; other classes are only reported.

A logistic regression over `draft_signals` (standardised, balanced classes) is measured by cross-validation grouped
by conversation; its threshold keeps at most ``budget`` of the answerable turns declined (by the decider and the gate
together, when the decisions give the decider's kinds: the gate sees only the drafts of the turns the decider
answers), set on the out-of-fold probabilities (each fold's figures use the threshold of its own training folds). scikit-learn, not hand-written code.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.decide.draft import DRAFT_FEATURES, save_gate, score_draft
from local_rag.decide.support import SupportChecker
from local_rag.errors import BadInputError
from local_rag.evaluation.generation.official import answerability
from local_rag.evaluation.generation.recheck import context_hits, read_decision_file
from local_rag.modelstore.manifest import record_folder
from local_rag.mtrag import read_jsonl
from local_rag.subset import conversation_of
from local_rag.train.decider_report import latency

ANSWERABLE = ("ANSWERABLE", "PARTIAL")


@dataclass
class DraftRow:
    """One generated answer, its gold class and its gate features."""

    task_id: str
    gold: str
    signals: dict[str, float]
    text: str
    seconds: float = 0.0  # the time the support check and the features took

    @property
    def positive(self) -> bool:
        return self.gold == "UNANSWERABLE"


def draft_rows(paths: Sequence[Path], checker: SupportChecker, decisions: dict[str, float] | None) -> tuple[list[DraftRow], int]:
    """The rows of every answer in ``paths`` (and how many were left out for want of a decision, when
    ``decisions`` is given)."""
    rows, missing = [], 0
    for path in paths:
        for i, record in enumerate(read_jsonl(path), 1):
            try:
                task_id, text = str(record["task_id"]), str(record["predictions"][0]["text"])
            except (KeyError, IndexError, TypeError) as exc:
                raise BadInputError(f"{path}, line {i}: not a prediction record with task_id and predictions[0].text") from exc
            p_decline = None
            if decisions is not None:
                if task_id not in decisions:
                    missing += 1
                    continue
                p_decline = decisions[task_id]
            t0 = time.perf_counter()
            signals = score_draft(checker, text, context_hits(record), p_decline)
            rows.append(DraftRow(task_id, answerability(record), signals, text, time.perf_counter() - t0))
    return rows, missing


def make_model() -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=1000))


def threshold_for(scores: np.ndarray, budget: float, total: int | None = None, already: int = 0) -> float:
    """The lowest threshold on P(decline) that declines at most ``budget`` of the answerable drafts: of ``total`` of
    them (default: as many as ``scores``), ``already`` declined before the gate (by the decider), and ``scores``
    those of the drafts the gate sees.

    Example:
        >>> round(threshold_for(np.array([0.1, 0.2, 0.3, 0.9]), 0.25), 3)
        0.3
        >>> threshold_for(np.array([0.1, 0.2, 0.3, 0.9]), 0.25, total=8, already=2) > 0.9   # the decider took it all
        True
    """
    if not len(scores):
        return 0.5
    ranked = np.sort(scores)[::-1]
    k = max(int(np.floor(budget * (len(ranked) if total is None else total) + 1e-9)) - already, 0)
    return float(np.nextafter(ranked[k], np.inf)) if k < len(ranked) else float(ranked[-1])


def pipeline_threshold(p: np.ndarray, rows: Sequence[DraftRow], kinds: dict[str, str], budget: float) -> float:
    """`threshold_for` the answerable ``rows`` (with their P(decline) ``p``): when ``kinds`` (the decider's choice by
    task id) are known, the budget is the pipeline's, decider and gate together, and the gate sees only the drafts
    of the turns the decider answers."""
    answerable = [i for i, r in enumerate(rows) if r.gold in ANSWERABLE]
    seen = [i for i in answerable if kinds.get(rows[i].task_id, "answer") == "answer"]
    already = sum(kinds.get(rows[i].task_id) == "decline" for i in answerable)
    return threshold_for(p[seen], budget, len(answerable), already)


def auc(p: np.ndarray, y: np.ndarray) -> float | None:
    if y.min(initial=1) == y.max(initial=0):
        return None
    from sklearn.metrics import roc_auc_score

    return round(float(roc_auc_score(y, p)), 3)


def rates(chosen: np.ndarray, rows: Sequence[DraftRow], what: str = "declined") -> dict[str, Any]:
    """The share of each gold class (and of answerable = ANSWERABLE + PARTIAL) that ``chosen`` marks, as ``what``."""
    out: dict[str, Any] = {}
    for gold in sorted({r.gold for r in rows}):
        mask = np.array([r.gold == gold for r in rows])
        out[gold] = {"n": int(mask.sum()), what: round(float(chosen[mask].mean()), 3)}
    answerable = np.array([r.gold in ANSWERABLE for r in rows])
    if answerable.any():
        out["answerable"] = {"n": int(answerable.sum()), what: round(float(chosen[answerable].mean()), 3)}
    return out


def pipeline_kinds(gate: np.ndarray, rows: Sequence[DraftRow], kinds: dict[str, str]) -> dict[str, Any]:
    """The turn's kind in the pipeline, decider first (its decline, clarify or small talk stands; the gate sees only
    the drafts of the turns it answers): the share of each gold class declined and clarified."""
    final = [kinds.get(r.task_id, "answer") if kinds.get(r.task_id, "answer") != "answer" else
             ("decline" if g else "answer") for r, g in zip(rows, gate, strict=True)]
    declined, clarified = np.array([k == "decline" for k in final]), np.array([k == "clarify" for k in final])
    return {"declined": rates(declined, rows), "clarified": rates(clarified, rows, "clarified")}


def matrix(rows: Sequence[DraftRow], features: Sequence[str]) -> np.ndarray:
    return np.array([[r.signals[f] for f in features] for r in rows], dtype=np.float64).reshape(len(rows), len(features))


def cross_validate(rows: Sequence[DraftRow], features: Sequence[str], budget: float, kinds: dict[str, str],
                   folds: int = 5) -> dict[str, Any]:
    """Out-of-fold P(decline) and declines, folds grouped by conversation (and stratified); each fold's threshold
    from its training folds (`pipeline_threshold`)."""
    from sklearn.model_selection import StratifiedGroupKFold

    x, y = matrix(rows, features), np.array([r.positive for r in rows], dtype=int)
    groups = [conversation_of(r.task_id) for r in rows]
    oof, declined = np.zeros(len(rows)), np.zeros(len(rows), dtype=bool)
    for train, held in StratifiedGroupKFold(folds, shuffle=True, random_state=0).split(x, y, groups):
        model = make_model().fit(x[train], y[train])
        fitted = model.predict_proba(x[train])[:, 1]
        oof[held] = model.predict_proba(x[held])[:, 1]
        declined[held] = oof[held] >= pipeline_threshold(fitted, [rows[i] for i in train], kinds, budget)
    return {"oof": oof, "declined": declined, "auc": auc(oof, y)}


def train_draft_gate(checker: SupportChecker, answers: Sequence[Path], decisions_path: Path | None, folder: Path,
                     report_dir: Path | None, models_dir: Path, features: Sequence[str] = DRAFT_FEATURES,
                     budget: float = 0.10, test_answers: Sequence[Path] = (), command: str = "") -> dict[str, Any]:
    """Fit the gate on ``answers``, save it to ``folder`` (recorded in the manifest) and return (and write to
    ``report_dir``) its figures: cross-validated on ``answers``, and on ``test_answers`` when given (their decisions
    from the same ``decisions_path``).

    Raises:
        BadInputError: unknown features, the decider feature without decisions, or too few examples of a class.
    """
    started = time.perf_counter()
    unknown = sorted(set(features) - set(DRAFT_FEATURES))
    if unknown or not features:
        raise BadInputError(f"unknown draft features {unknown}; valid: {', '.join(DRAFT_FEATURES)}")
    with_decider = "decider" in features
    if with_decider and decisions_path is None:
        raise BadInputError("the feature 'decider' needs --decisions (a decider's predictions.jsonl), or leave it out "
                            "of --features")
    read, probabilities = read_decision_file(decisions_path, declines=with_decider) if decisions_path else ({}, {})
    decisions = probabilities if with_decider else None
    kinds: dict[str, str] = dict(read)
    every, missing = draft_rows(answers, checker, decisions)
    rows = [r for r in every if r.positive or r.gold in ANSWERABLE]
    positives = sum(r.positive for r in rows)
    if positives < 5 or len(rows) - positives < 5:
        raise BadInputError(f"the answers hold {positives} UNANSWERABLE and {len(rows) - positives} answerable drafts: "
                            "the gate needs at least 5 of each")
    cv = cross_validate(rows, features, budget, kinds)
    x, y = matrix(rows, features), np.array([r.positive for r in rows], dtype=int)
    model = make_model().fit(x, y)
    threshold = pipeline_threshold(cv["oof"], rows, kinds, budget)
    meta = {"features": list(features), "threshold": threshold, "budget": budget, "examples": len(rows),
            "unanswerable": positives, "support_threshold": checker.threshold}
    save_gate(folder, model, meta)
    record_folder(folder, models_dir, "draft-gate", "draft gate (decline unsupported drafts), local-rag train draft-gate",
                  "sklearn", source="trained: local-rag train draft-gate")
    single = {f: auc(matrix(rows, [f])[:, 0], y) for f in features}
    report: dict[str, Any] = {
        "command": command, "machine": {"cpu": platform.processor() or platform.machine(), "python": platform.python_version()},
        "features": list(features), "budget": budget, "threshold": round(threshold, 4),
        "examples": {"fitted": len(rows), "unanswerable": positives, "left_out_no_decision": missing,
                     "other_classes": len(every) - len(rows)},
        "coefficients": dict(zip(features, np.round(model[-1].coef_[0], 3).tolist(), strict=True)),
        "cv": {"auc": cv["auc"], "declines": rates(cv["declined"], rows), "feature_auc": single},
    }
    # the gate's call on every draft: out of fold where it was fitted, the fitted model on the other classes
    fitted_at = {id(r): i for i, r in enumerate(rows)}
    others = [i for i, r in enumerate(every) if id(r) not in fitted_at]
    gate = np.array([cv["declined"][fitted_at[id(r)]] if id(r) in fitted_at else False for r in every])
    if others:
        gate[others] = model.predict_proba(matrix([every[i] for i in others], features))[:, 1] >= threshold
    if kinds:
        report["cv"]["pipeline"] = {"decider alone": pipeline_kinds(np.zeros(len(every), dtype=bool), every, kinds),
                                    "decider then gate": pipeline_kinds(gate, every, kinds)}
    if others:
        report["cv"]["other_classes"] = rates(gate[others], [every[i] for i in others])
    if test_answers:
        test_rows, test_missing = draft_rows(test_answers, checker, decisions)
        ps, times = [], []
        for r in test_rows:
            t0 = time.perf_counter()
            ps.append(float(model.predict_proba(matrix([r], features))[0, 1]))
            times.append(r.seconds + time.perf_counter() - t0)
        p = np.array(ps)
        fitted = [i for i, r in enumerate(test_rows) if r.positive or r.gold in ANSWERABLE]
        yt = np.array([test_rows[i].positive for i in fitted], dtype=int)
        if kinds:
            report["test_pipeline"] = {"decider alone": pipeline_kinds(np.zeros(len(test_rows), dtype=bool), test_rows, kinds),
                                       "decider then gate": pipeline_kinds(p >= threshold, test_rows, kinds)}
        report["test"] = {"declines": rates(p >= threshold, test_rows), "auc": auc(p[fitted], yt) if fitted else None,
                          "left_out_no_decision": test_missing, "gate_latency": latency(times),
                          "feature_auc": {f: auc(matrix([test_rows[i] for i in fitted], [f])[:, 0], yt) for f in features}}
    report["train_wall_s"] = round(time.perf_counter() - started, 1)
    if report_dir is not None:
        report_dir.mkdir(parents=True, exist_ok=True)
        (report_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report

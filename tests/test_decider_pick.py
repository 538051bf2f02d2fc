"""The decision stage's training protocol: thresholds that hold the decline and clarify budgets, and the variant
pick counted on the whole pool or on its real turns only (a real scikit-learn model fitted in the test on a small
feature matrix with the shape of the pool: MTRAG train turns, synthetic underspecified turns that are easy to
recall, MTRAG-UN turns that are not)."""

from __future__ import annotations

import numpy as np
import pytest

from local_rag.records import Conversation, Turn
from local_rag.train.decider import BUDGETS, measure, set_thresholds
from local_rag.train.decider_data import Example


def example(i: int, source: str, gold: str) -> Example:
    return Example(f"{source}-{i}", f"{source}-{i // 2}", source, "govt", gold, Conversation([Turn("user", f"question {i}")]))


def pool_and_features(seed: int = 0) -> tuple[list[Example], np.ndarray]:
    """Answerable train turns, a few unanswerable ones, synthetic underspecified turns far from the answerable ones
    on the clarify column, and MTRAG-UN turns (answerable, underspecified) close to them."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[Example, list[float]]] = []
    for i in range(80):
        rows.append((example(i, "mtrag-train", "ANSWERABLE"), [rng.normal(0, 1), rng.normal(0, 1)]))
    for i in range(16):
        rows.append((example(i, "mtrag-train", "UNANSWERABLE"), [rng.normal(0, 1), rng.normal(2, 1)]))
    for i in range(30):
        rows.append((example(i, "synthetic", "UNDERSPECIFIED"), [rng.normal(5, 0.5), rng.normal(0, 1)]))
    for i in range(20):
        rows.append((example(i, "mtragun-dev", "ANSWERABLE"), [rng.normal(0, 1), rng.normal(0, 1)]))
    for i in range(12):
        rows.append((example(i, "mtragun-dev", "UNDERSPECIFIED"), [rng.normal(1.0, 1), rng.normal(0, 1)]))
    return [e for e, _ in rows], np.array([x for _, x in rows], dtype=np.float32)


def test_thresholds_hold_the_budgets():
    examples = [example(i, "mtrag-train", "ANSWERABLE") for i in range(100)] + [example(0, "synthetic", "UNDERSPECIFIED")]
    p = np.array([[0.0, i / 100, (99 - i) / 100] for i in range(100)] + [[0.0, 0.0, 1.0]])
    t = set_thresholds(p, examples, 0.10, 0.20)
    answerable = p[:100]
    assert np.mean(answerable[:, 1] >= t.decline) == pytest.approx(0.10, abs=0.011)
    assert np.mean(answerable[:, 2] >= t.clarify) == pytest.approx(0.20, abs=0.011)
    assert set_thresholds(p, examples) == set_thresholds(p, examples, *BUDGETS)


def test_the_pick_counts_the_real_turns_and_a_larger_budget_asks_more():
    pool, x = pool_and_features()
    dev = [e for e in pool if e.source == "mtragun-dev"]
    test = [e for e in pool if e.source == "mtrag-train"][:20]
    mats = {"pool": (x, None), "test": (x[:20], None), "names": ("clarify_signal", "decline_signal")}
    everything = measure("lr-features", pool, test, dev, mats, folds=5, seed=0)
    real = measure("lr-features", pool, test, dev, mats, folds=5, seed=0, pick="real")
    # the same model and thresholds; only the score that picks the variant differs
    assert everything["thresholds"] == real["thresholds"] and everything["pool_cv"] == real["pool_cv"]
    counted = real["pool_cv_real"]
    assert sum(sum(row.values()) for row in counted["confusion"].values()) == sum(e.source != "synthetic" for e in pool)
    assert real["pick_score"] == pytest.approx(np.mean([counted["decline_unanswerable"], counted["clarify_underspecified"]]), abs=1e-4)
    # the synthetic turns are easy: the whole pool's clarify recall is above the real turns' one, and so is the score
    assert everything["pool_cv"]["clarify_underspecified"] > counted["clarify_underspecified"]
    assert everything["pick_score"] > real["pick_score"]
    wider = measure("lr-features", pool, test, dev, mats, folds=5, seed=0, budgets=(0.08, 0.15))
    assert wider["thresholds"]["clarify"] < everything["thresholds"]["clarify"]
    assert wider["pool_cv_real"]["clarify_underspecified"] >= counted["clarify_underspecified"]
    assert wider["pool_cv"]["clarify_answerable"] <= 0.15 + 0.02


def test_bad_budgets_and_picks_are_refused_before_any_work(tmp_path):
    from .test_cli import assert_clean_error, run

    for args, says in ((("--clarify-budget", "1.5"), "--clarify-budget"), (("--decline-budget", "0"), "--decline-budget"),
                       (("--pick", "best"), "--pick")):
        result = run("train", "decider", *args, cwd=tmp_path)
        assert result.returncode == 2 and says in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "runs").exists()
    # no MTRAG data where LOCAL_RAG_MTRAG_DIR points (it was a FileNotFoundError traceback)
    assert_clean_error(run("train", "decider", cwd=tmp_path, env={"LOCAL_RAG_MTRAG_DIR": str(tmp_path / "nowhere")}), 2,
                       "no MTRAG retrieval tasks at")

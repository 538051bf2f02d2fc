from __future__ import annotations

import math

import pytest

from local_rag.evaluation.metrics import mean_metrics, score_run, weighted_average


def test_ndcg_and_recall_equal_hand_computed_values():
    qrels = {"q1": {"a": 1, "c": 1}, "q2": {"z": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}, "q2": {"x": 1.0}}
    per_query = score_run(run, qrels)
    dcg3 = 1 / math.log2(2) + 1 / math.log2(4)
    idcg = 1 / math.log2(2) + 1 / math.log2(3)
    assert per_query["q1"]["ndcg_cut_1"] == pytest.approx(1.0)
    assert per_query["q1"]["ndcg_cut_3"] == pytest.approx(dcg3 / idcg)
    assert per_query["q1"]["ndcg_cut_5"] == pytest.approx(dcg3 / idcg)
    assert per_query["q1"]["recall_1"] == pytest.approx(0.5)
    assert per_query["q1"]["recall_3"] == pytest.approx(1.0)
    assert per_query["q2"]["ndcg_cut_10"] == 0.0 and per_query["q2"]["recall_10"] == 0.0
    means = mean_metrics(per_query)
    assert means["queries"] == 2
    assert means["ndcg_cut_3"] == pytest.approx((dcg3 / idcg) / 2)


def test_graded_qrels_are_binarized_and_missing_queries_score_zero():
    per_query = score_run({"q1": {"a": 1.0}}, {"q1": {"a": 2}, "q2": {"b": 1}})
    assert per_query["q1"]["ndcg_cut_5"] == pytest.approx(1.0)
    assert per_query["q2"]["ndcg_cut_5"] == 0.0  # not retrieved at all: stays in the average


def test_weighted_average_by_query_count():
    avg = weighted_average({"a": {"ndcg_cut_5": 1.0, "queries": 1}, "b": {"ndcg_cut_5": 0.0, "queries": 3}})
    assert avg == {"ndcg_cut_5": 0.25, "queries": 4}


def test_runs_are_scored_in_the_systems_order_even_when_fused_scores_tie(tmp_path):
    """After RRF, ranks 1 + 2 and 2 + 1 score the same; the official scorer breaks such ties by document id. Run files
    (and the figures computed beside them) carry strictly decreasing scores, so the system's order is what is scored,
    and a resumed older file with tied scores is read in its list order too."""
    import json

    from local_rag.evaluation.metrics import run_scores
    from local_rag.evaluation.retrieval import EvalItem, run_domain
    from local_rag.records import Hit

    tie = 1 / 61 + 1 / 62
    hits = [Hit("a-gold", tie, 1, "rrf"), Hit("z-other", tie, 2, "rrf"), Hit("m-other", 0.01, 3, "rrf")]
    assert score_run({"q": {"a-gold": tie, "z-other": tie}}, {"q": {"a-gold": 1}})["q"]["ndcg_cut_1"] == 0.0  # by id
    out = tmp_path / "run-x.jsonl"
    result = run_domain(lambda queries: hits, [EvalItem("q", "x", {"lastturn": "?"})], {"q": {"a-gold": 1}},
                        ["lastturn"], out, progress=False)
    assert result["metrics"]["ndcg_cut_1"] == 1.0
    scores = [c["score"] for c in json.loads(out.read_text())["contexts"]]
    assert scores == run_scores([tie, tie, 0.01]) and scores[0] > scores[1] > scores[2]
    old = {"task_id": "q", "contexts": [{"document_id": "a-gold", "score": 0.032}, {"document_id": "z-other", "score": 0.032}]}
    out.write_text(json.dumps(old) + "\n")
    resumed = run_domain(lambda queries: [], [EvalItem("q", "x", {"lastturn": "?"})], {"q": {"a-gold": 1}}, ["lastturn"],
                         out, progress=False, resume=True)
    assert resumed["metrics"]["ndcg_cut_1"] == 1.0

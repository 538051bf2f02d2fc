"""The scorer learns MTRAG-UN: the clarification judge (rules, checked against the mtragun-dev references),
UNDERSPECIFIED conditioning on hand-computed cases, and per-class accuracy of ``kind``."""

from __future__ import annotations

import json

import pytest

from local_rag.evaluation.generation.clarify import ClarificationDetector
from local_rag.evaluation.generation.conditioning import condition, decided
from local_rag.evaluation.generation.kinds import kind_metrics, targets_met
from local_rag.evaluation.generation.official import prediction_record
from local_rag.evaluation.generation.report import summarize

from .conftest import MTRAG, needs_mtrag
from .test_gen_eval import fake_scorer, task

DEV = MTRAG / "mtragun-dev" / "generation_tasks" / "mtragun_dev_tasks.jsonl"


@needs_mtrag
def test_the_judge_agrees_with_every_mtragun_dev_reference():
    rows = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines()]
    judge = ClarificationDetector()
    labels = [(r["answerability"][0], judge.label(r["targets"][0]["text"])) for r in rows if r.get("targets")]
    under = [v for a, v in labels if a == "UNDERSPECIFIED"]
    assert len(under) == 23 and all(v == 1.0 for v in under)  # every UNDERSPECIFIED reference asks back
    assert all(v == 0.0 for a, v in labels if a != "UNDERSPECIFIED")  # no other reference does


@pytest.mark.parametrize(("reply", "label"), [
    ("Which case are you referring to?", 1.0),
    ("Are you asking about bonds like short-term or long-term bonds?", 1.0),
    ("Please provide the book you are referring to.", 1.0),  # a directive request, no question mark
    ("Do you mean the tutorial, or something else?", 1.0),
    ("I can't answer because I don't have your location.", 0.0),  # missing information, not asked for
    ("I'm sorry, but I don't have the answer to that in the documents I have.", 0.0),
    ("Goodbye! Please let me know if there is anything else I can help you with.", 0.0),
    ("The Atlantic Ocean drives the Gulf Stream [1].", 0.0),
    ("", 0.0),
])
def test_clarification_judge_on_hand_labelled_replies(reply: str, label: float):
    assert ClarificationDetector().label(reply) == label


@pytest.mark.parametrize(("idk", "value", "clarify", "expected"), [
    (0.0, 0.7, 1.0, 1.0), (0.0, 0.7, 0.0, 0.0), (1.0, 0.7, 0.0, 0.0), (1.0, None, 1.0, 1.0), (0.0, 0.7, None, 0.0),
])
def test_underspecified_conditioning(idk: float, value: float | None, clarify: float | None, expected: float):
    assert condition("UNDERSPECIFIED", idk, value, clarify) == expected
    assert decided("UNDERSPECIFIED", idk)  # the label decides: no LLM judge needed


def test_scorer_scores_an_underspecified_task_by_its_clarification():
    pytest.importorskip("rouge_score")
    scorer = fake_scorer(None, llm_judges=False)
    asked = scorer.score(prediction_record(task(0, "UNDERSPECIFIED"), "Which guinea pig are you referring to?", "reference"))
    answered = scorer.score(prediction_record(task(1, "UNDERSPECIFIED"), "Guinea pigs sleep in burrows.", "reference"))
    declined = scorer.score(prediction_record(task(2, "UNDERSPECIFIED"), "I don't know.", "reference"))
    assert asked["metrics"]["clarify_eval"] == [1.0] and asked["metrics"]["RB_agg_idk"] == [1.0]
    assert answered["metrics"]["clarify_eval"] == [0.0] and answered["metrics"]["RB_agg_idk"] == [0.0]
    assert declined["metrics"]["RB_agg_idk"] == [0.0]
    plain = scorer.score(prediction_record(task(3), "Guinea pigs sleep in burrows.", "reference"))
    assert "clarify_eval" not in plain["metrics"]  # other classes are scored as before


def test_per_class_accuracy_of_kind_by_hand():
    golds = ["ANSWERABLE", "ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNANSWERABLE", "UNDERSPECIFIED", "CONVERSATIONAL"]
    kinds = ["answer", "decline", "answer", "decline", "idk", "clarify", "chitchat"]
    m = kind_metrics(golds, kinds)
    assert m["accuracy_by_class"] == {"ANSWERABLE": 0.5, "PARTIAL": 1.0, "UNANSWERABLE": 1.0, "UNDERSPECIFIED": 1.0,
                                      "CONVERSATIONAL": 1.0}
    assert m["decline_answerable"] == round(1 / 3, 3) and m["decline_unanswerable"] == 1.0  # "idk" is a decline
    assert m["clarify_underspecified"] == 1.0 and m["clarify_answerable"] == 0.0
    assert m["confusion"]["ANSWERABLE"] == {"answer": 1, "decline": 1, "clarify": 0, "chitchat": 0}
    assert targets_met(m) == {"decline_unanswerable": True, "decline_answerable": False,
                              "clarify_underspecified": True, "clarify_answerable": True}


def test_the_generation_report_carries_kind_figures():
    records = []
    for i, (label, kind) in enumerate([("ANSWERABLE", "answer"), ("UNANSWERABLE", "decline"), ("UNDERSPECIFIED", "answer")]):
        rec = prediction_record(task(i, label), "x", "reference")
        rec["predictions"][0]["kind"] = kind
        rec["local_rag"] = {"answerability": label}
        records.append(rec)
    summary = summarize(records, {})
    assert summary["kinds"]["clarify_underspecified"] == 0.0 and summary["kinds"]["decline_unanswerable"] == 1.0

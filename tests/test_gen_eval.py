"""The generation scorer's logic, without models: official conditioning and harmonic means against hand-computed
values, ROUGE-L on known pairs, the IDK detector on official-style sentences, the official format rules, the LLM
judges on a scripted LLM, resumable runs, reports."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from local_rag.errors import BadInputError, MissingDependencyError
from local_rag.evaluation.generation import algorithmic
from local_rag.evaluation.generation.algorithmic import harmonic_mean, rb_agg, rouge_l
from local_rag.evaluation.generation.conditioning import condition, decided, final_score
from local_rag.evaluation.generation.idk import IdkDetector, LLMIdkJudge
from local_rag.evaluation.generation.judges import Faithfulness, ReferenceJudge, recent_lines
from local_rag.evaluation.generation.official import (
    answerability,
    domain_of,
    prediction_record,
    read_records,
    turn_number,
    validate_record,
    validate_records,
)
from local_rag.evaluation.generation.report import summarize, turn_bucket, write_reports
from local_rag.evaluation.generation.runner import (
    load_done,
    merge_predictions,
    pipeline_generator,
    reusable_scores,
    score_predictions,
    stratified_subset,
)
from local_rag.evaluation.generation.scorer import GenerationScorer
from local_rag.settings import GenEvalConfig, load_settings
from tests.llm_fixtures import ScriptedLLM

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "mtrag" / "eval_samples"
needs_samples = pytest.mark.skipif(not SAMPLES.exists(), reason="../shared/mtrag/eval_samples not present")


def task(i: int, label: str = "ANSWERABLE", domain: str = "clapnq", n_ctx: int = 2) -> dict[str, Any]:
    return {
        "task_id": f"conv{i // 3}<::>{i % 3 + 1}", "conversation_id": f"conv{i // 3}", "turn": str(i % 3 + 1),
        "Collection": f"mt-rag-{domain}", "domain": domain, "answerability": [label],
        "input": [{"speaker": "user", "text": "Where do guinea pigs sleep?"}],
        "contexts": [{"document_id": f"d{i}-{k}", "text": f"Guinea pigs sleep in burrows {k}.", "title": "Guinea pig"}
                     for k in range(n_ctx)],
        "targets": [{"speaker": "agent", "text": "Guinea pigs sleep in burrows."}],
    }


# ---------------------------------------------------------------- conditioning and harmonic means (hand-computed)

@pytest.mark.parametrize(("label", "idk", "value", "expected"), [
    ("UNANSWERABLE", 1.0, 0.3, 1.0), ("UNANSWERABLE", 0.5, 0.3, 0.0), ("UNANSWERABLE", 0.0, 0.9, 0.0),
    ("CONVERSATIONAL", 1.0, None, 1.0), ("CONVERSATIONAL", 0.0, 0.8, 0.0),
    ("ANSWERABLE", 1.0, 0.9, 0.0), ("ANSWERABLE", 0.5, 0.9, 0.9), ("ANSWERABLE", 0.0, 0.4, 0.4),
    ("PARTIAL", 1.0, 0.7, 0.0), ("PARTIAL", 0.5, 0.7, 0.7), ("UNKNOWN", 0.0, None, None),
])
def test_conditioning_matches_the_official_rules(label: str, idk: float, value: float | None,
                                                 expected: float | None) -> None:
    assert condition(label, idk, value) == expected
    assert decided(label, idk) == (label in ("UNANSWERABLE", "CONVERSATIONAL") or idk == 1)


def test_harmonic_means_match_hand_computed_values() -> None:
    # RB_agg: recall (0.2+1)/2 = 0.6, ROUGE-L 0.3, extractiveness (max(0.1, 0.4)+1)/2 = 0.7
    # 3*0.6*0.3*0.7 / (0.6*0.3 + 0.6*0.7 + 0.3*0.7) = 0.378 / 0.81
    assert rb_agg(0.2, 0.3, [0.1, 0.4]) == pytest.approx(0.378 / 0.81)
    assert rb_agg(0.2, 0.3, [None, 0.4]) == pytest.approx(0.378 / 0.81)  # officially None -> 0
    assert rb_agg(0.2, 0.0, [0.4]) == 0.0 and rb_agg(0.2, 0.3, []) == 0.0  # no passages: 0, as officially
    assert harmonic_mean([0.5, 1.0, 1.0]) == pytest.approx(0.75)
    assert harmonic_mean([0.5, None]) is None and harmonic_mean([]) is None
    # final = 3 / (1/0.4 + 1/0.8 + 1/0.6) = 3 / 5.41666...
    assert final_score({"RB_agg_idk": 0.4, "RL_F_idk": 0.8, "RB_llm_idk": 0.6}) == pytest.approx(3 / (65 / 12))
    assert final_score({"RB_agg_idk": 0.4, "RL_F_idk": None, "RB_llm_idk": 0.6}) is None


def test_summary_conditions_and_averages_by_group() -> None:
    def scored(label: str, idk: float, rb: float, rl: float | None, llm: float, domain: str, turn: int) -> dict:
        metrics = {"idk_eval": [idk], "RB_agg": [rb], "RL_F": [rl], "RB_llm": [llm]}
        for raw in ("RB_agg", "RL_F", "RB_llm"):
            metrics[f"{raw}_idk"] = [condition(label, idk, metrics[raw][0])]
        judged = not decided(label, idk)
        return {"metrics": metrics, "local_rag": {"answerability": label, "domain": domain, "turn": turn, "judged": judged}}

    records = [scored("ANSWERABLE", 0, 0.6, 0.8, 0.5, "clapnq", 1), scored("ANSWERABLE", 1, 0.6, 0.8, 0.5, "cloud", 2),
               scored("UNANSWERABLE", 1, 0.0, None, 0.2, "clapnq", 9), scored("PARTIAL", 0, 0.3, None, 0.9, "cloud", 2)]
    summary = summarize(records, {"comparable": False})
    overall = summary["overall"]
    assert overall["RB_agg_idk"] == pytest.approx((0.6 + 0 + 1 + 0.3) / 4)
    assert overall["RL_F_idk"] == pytest.approx((0.8 + 0 + 1) / 3)  # a missing RL_F (no claims) is left out
    assert overall["RB_llm_idk"] == pytest.approx((0.5 + 0 + 1 + 0.9) / 4)
    assert overall["final"] == pytest.approx(harmonic_mean([0.475, 0.6, 0.6]))
    assert overall["rl_f_missing"] == 1 and overall["judged"] == 2
    assert summary["idk_rate_unanswerable"] == 1.0 and summary["idk_rate_answerable"] == pytest.approx(1 / 3)
    assert list(summary["domain"]) == ["clapnq", "cloud"] and summary["domain"]["cloud"]["tasks"] == 2
    assert list(summary["answerability"]) == ["ANSWERABLE", "PARTIAL", "UNANSWERABLE"]
    assert list(summary["turn"]) == ["1", "2", "8+"] and turn_bucket(3) == "3"


# ---------------------------------------------------------------- ROUGE-L on known pairs

def test_rouge_l_on_known_pairs() -> None:
    pytest.importorskip("rouge_score")
    assert rouge_l("the cat sat on the mat", "the cat sat on the mat") == pytest.approx(1.0)
    assert rouge_l("the cat sat on the mat", "the cat lay on the mat") == pytest.approx(5 / 6)  # LCS 5 of 6 and 6
    # LCS("a b c d", "a c e") = "a c": P = 2/4, R = 2/3, F = 2PR/(P+R) = 4/7
    assert rouge_l("a b c d", "a c e") == pytest.approx(4 / 7)
    assert rouge_l("Cats, DOGS!", "cats dogs") == pytest.approx(1.0)  # lower-cased, punctuation dropped
    assert rouge_l("", "anything") == 0.0
    assert rouge_l("running", "run") == 0.0  # no stemming (RougeL_stemFalse)


def test_missing_rouge_score_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    algorithmic._rouge_scorer.cache_clear()
    monkeypatch.setitem(sys.modules, "rouge_score", None)
    with pytest.raises(MissingDependencyError, match="eval"):
        rouge_l("a", "b")
    algorithmic._rouge_scorer.cache_clear()


# ---------------------------------------------------------------- the IDK detector

OFFICIAL_STYLE_IDK = [  # reference answers of MTRAG UNANSWERABLE tasks and the official judge's "yes" examples
    "I'm sorry, but I don't have the answer to your question.",
    "User: I'm sorry, but I don't have the answer to that.",  # SmolLM2 echoing the prompt's role framing
    "Sorry, but I do not have any information about the Cavia tschudii diet.",
    "I do not have specific information to answer this.",
    "The documents do not include information on how long to consider adoption after experiencing infertility.",
    "No documents found about tourism in China.",
    "I could not find information about the longest mission to the Moon.",
    "Sorry, I cannot find a response to that question in the document.",
    "I have no information about who the last Emperor of the Western Roman Empire was.",
    "I am sorry I don't have any specific knowledge about who acts as a photographer in air-to-air photography.",
    "Sorry but the document does not provide an answer to your question.",
    "Unfortunately, I do not have information on how to keep your address confidential.",
    "I can't find any information about whether light pollution is bad for your health.",
    "I don't know.",
    "I am sorry, but the provided document does not contain answer to your question",
    "I'm sorry, but I don't have any information about beekeeper or how to ensure device compliance with it. "
    "The provided document does not mention anything about beekeeper. Is there anything else I can help you with?",
    "I'm unable to provide an answer regarding how you can learn SQL without taking a course. However, I can "
    "assist with the No SQL databases topic.",
    "I do not have specific information about the current schedule of the Arizona Cardinals. However, I can suggest "
    "checking the official NFL website or sports news websites for the most up-to-date information.",
    "I\u2019m sorry, I can\u2019t tell you what SKU stands for.",
]
PARTIAL = [
    "The document does not provide a specific answer to your question. However, it mentions that running the "
    "experiment against the base model gives you both the word error rate and the sentence error rate.",
    "Natural Language Processing is a subfield of artificial intelligence about human language. However, the "
    "document does not describe how to build a sentiment analysis model using Python and NLTK.",
    "I am unable to answer your question specifically, but a non-preemptable unit of work can be interrupted and "
    "must receive control after the interrupt is processed.",
]
ANSWERS = [
    "She can continue medical and dental coverage under COBRA by calling the Benefits Center.",
    "Your reimbursements from the HCSA won't be taxed.",
    "Franklin D. Roosevelt, who served as the 32nd President of the United States from 1933 to 1945.",
    "The Pittsburgh Steelers and the New England Patriots have won the most Super Bowls, six each.",
    "Cats do not know how to swim well, but most can if they must.",  # "do not know" about cats, not the answerer
    "",
]


@pytest.mark.parametrize("text", OFFICIAL_STYLE_IDK)
def test_idk_detector_declines(text: str) -> None:
    assert IdkDetector().label(text) == 1.0


@pytest.mark.parametrize("text", PARTIAL)
def test_idk_detector_partial(text: str) -> None:
    assert IdkDetector().label(text) == 0.5


@pytest.mark.parametrize("text", ANSWERS)
def test_idk_detector_answers(text: str) -> None:
    assert IdkDetector().label(text) == 0.0


def test_idk_detector_knows_the_configured_sentence() -> None:
    settings = load_settings("cpu-test")
    sentence = GenerationScorer.from_settings(settings).config.idk_sentence
    assert sentence and sentence == getattr(getattr(settings, "generate", None), "idk_answer", sentence)
    assert IdkDetector(sentence).label(sentence) == 1.0 and IdkDetector().label(sentence) == 1.0
    odd = "Nothing here, friend."  # would not be detected by the rules alone
    assert IdkDetector().label(odd) == 0.0 and IdkDetector(odd).label("nothing here, friend") == 1.0
    assert IdkDetector(odd).label(odd + " Paris is the capital of France.") == 0.0


def test_llm_idk_judge_maps_labels_and_falls_back() -> None:
    for reply, expected in (('{"label": "yes"}', 1.0), ('{"label": "partial"}', 0.5), ('{"label": "no"}', 0.0),
                            ("garbage", 0.5)):
        llm = ScriptedLLM(reply)
        assert LLMIdkJudge(llm).label("some answer", "user: q") == expected
        assert llm.calls[-1].stage == "eval-idk"
    fixed = ScriptedLLM('{"label": "no"}')
    assert LLMIdkJudge(fixed, "I don't know.").label("I don't know.") == 1.0 and not fixed.calls


# ---------------------------------------------------------------- the official format rules

@needs_samples
def test_official_sample_passes_the_format_rules() -> None:
    records = read_records(SAMPLES / "responses-10.jsonl")
    assert validate_records(records, "reference", [r["task_id"] for r in records]) == []
    rag_errors = validate_records(records, "rag")  # the sample spells 'collection' in lower case
    assert rag_errors and all("'Collection'" in e for e in rag_errors)
    assert [turn_number(r) for r in records][:3] == [1, 2, 3] and answerability(records[0]) == "UNANSWERABLE"


def test_format_rules_catch_what_the_official_checker_catches() -> None:
    good = prediction_record(task(0), "Burrows.", "reference")
    assert validate_record(good, "reference") == [] and all("score" in c for c in good["contexts"])
    too_many = prediction_record(task(0, n_ctx=12), "x", "rag", contexts=task(0, n_ctx=12)["contexts"])
    assert len(too_many["contexts"]) == 10 and validate_record(too_many, "rag") == []  # the writer keeps 10
    bad = dict(good, contexts=good["contexts"] * 6, predictions=[{"txt": "x"}])
    bad["contexts"][0] = {"document_id": 7}
    errors = validate_record(bad, "rag")
    assert any("too many contexts (12)" in e for e in errors)
    assert any("contexts[0] needs a string 'document_id'" in e for e in errors)
    assert any("contexts[0] needs a numeric 'score'" in e for e in errors)
    assert any("predictions[0] needs a string 'text'" in e for e in errors)
    no_collection = {k: v for k, v in good.items() if k != "Collection"}
    assert validate_record(no_collection, "reference") == [] and validate_record(no_collection, "rag")
    ids = validate_records([good, good], "reference", ["conv0<::>1", "other"])
    assert "task_id 'conv0<::>1' appears more than once" in ids and "missing task_id 'other'" in ids
    with pytest.raises(BadInputError, match="retrieved contexts"):
        prediction_record(task(0), "x", "rag")


def test_task_fields_read_like_the_official_scorer() -> None:
    assert answerability({"answerability": "['PARTIAL']"}) == "PARTIAL"  # Python-literal lists, as some files hold
    assert answerability({"Answerability": ["conversational"]}) == "CONVERSATIONAL"
    assert answerability({}) == "UNKNOWN"
    assert turn_number({"task_id": "abc<::>7"}) == 7 and turn_number({"task_id": "abc::3", "turn": float("nan")}) == 3
    assert domain_of({"collection": "mt-rag-ibmcloud-elser-512-100-20240502"}) == "cloud"


# ---------------------------------------------------------------- the LLM judges on a scripted LLM

def scripted_judge(claims: list[str], verdicts: list[int], rating: int | str = 7) -> ScriptedLLM:
    def reply(messages: list[dict[str, str]], schema: dict[str, Any] | None) -> str:
        props = (schema or {}).get("properties", {})
        if "claims" in props:
            return json.dumps({"claims": claims})
        if "verdicts" in props:
            return json.dumps({"verdicts": [{"id": i, "verdict": v} for i, v in enumerate(verdicts, 1)]})
        if "rating" in props:
            return json.dumps({"rating": rating}) if isinstance(rating, int) else rating
        return '{"label": "no"}'

    return ScriptedLLM(reply)


def test_faithfulness_is_the_supported_share_of_claims() -> None:
    llm = scripted_judge(["A.", "B.", "a.", "C."], [1, 0, 1])  # "a." repeats "A." and counts once
    result = Faithfulness(llm).score("user: q", "A. B. C.", ["passage"])
    assert result.claims == ["A.", "B.", "C."] and result.value == pytest.approx(2 / 3)
    assert [c.stage for c in llm.calls] == ["eval-claims", "eval-verdicts"]
    assert Faithfulness(scripted_judge([], [])).score("q", "Hello!", ["p"]).value is None  # RAGAS: NaN
    assert Faithfulness(scripted_judge(["A."], [1])).score("q", "A.", []).value == 0.0
    partial = Faithfulness(scripted_judge(["A.", "B."], [1])).score("q", "A. B.", ["p"])
    assert partial.verdicts == [1, None] and partial.value == 1.0  # only judged claims count


def test_long_conversations_keep_their_most_recent_turns() -> None:
    text = "\n".join(f"user: question {i} " + "word " * 20 for i in range(50))
    kept = recent_lines(text, 60, lambda t: len(t.split()))
    assert kept.startswith("user: question 48") and kept.splitlines()[-1].startswith("user: question 49")


def test_reference_judge_normalizes_like_the_official() -> None:
    assert ReferenceJudge(scripted_judge([], [], 7)).score("", "q", "ref", "ans", ["p"]).value == pytest.approx(0.7)
    assert ReferenceJudge(scripted_judge([], [], 10)).score("h", "q", "ref", "ans", []).value == 1.0
    assert ReferenceJudge(scripted_judge([], [], "not json")).score("", "q", "r", "a", ["p"]).value == 0.5


class FakeBert:
    """BERTScore stand-in: word-overlap precision/recall in [-1, 1]."""

    class encoder:  # noqa: N801 - mirrors the attribute of BertScore
        name, layer, comparable = "fake", 1, False

        @staticmethod
        def describe() -> str:
            return "BERTScore: fake"

    comparable = False

    def score(self, cands: list[str], refs: list[str]) -> list[tuple[float, float, float]]:
        out = []
        for c, r in zip(cands, refs, strict=True):
            cw, rw = set(c.lower().split()), set(r.lower().split())
            p, rec = len(cw & rw) / max(len(cw), 1), len(cw & rw) / max(len(rw), 1)
            out.append((p, rec, 2 * p * rec / (p + rec) if p + rec else 0.0))
        return out


def fake_scorer(llm: ScriptedLLM | None = None, **config: Any) -> GenerationScorer:
    return GenerationScorer(GenEvalConfig(**config), bert=FakeBert(), judge_llm=llm)  # type: ignore[arg-type]


def test_scorer_conditions_and_skips_decided_tasks() -> None:
    pytest.importorskip("rouge_score")
    llm = scripted_judge(["Guinea pigs sleep in burrows."], [1], 8)
    scorer = fake_scorer(llm)
    answered = scorer.score(prediction_record(task(0), "Guinea pigs sleep in burrows.", "reference"))
    m = answered["metrics"]
    assert m["idk_eval"] == [0.0] and m["RL_F"] == [1.0] and m["RB_llm"] == [0.8]
    assert m["RB_agg_idk"] == m["RB_agg"] and len(m["BertKPrec"]) == 2 and m["RougeL_stemFalse"] == [1.0]
    assert answered["local_rag"]["judged"] and answered["local_rag"]["llm_calls"] == 3
    assert answered["local_rag"]["hm_idk"] == pytest.approx(harmonic_mean([m["RB_agg"][0], 1.0, 0.8]))
    n_calls = len(llm.calls)
    declined = scorer.score(prediction_record(task(1, "UNANSWERABLE", n_ctx=0), "I don't know.", "reference"))
    d = declined["metrics"]
    assert len(llm.calls) == n_calls and not declined["local_rag"]["judged"]  # the conditioning decides: no judge
    assert d["RB_agg"] == [0.0] and "BertKPrec" not in d
    assert d["RB_agg_idk"] == d["RL_F_idk"] == d["RB_llm_idk"] == [1.0]
    wrongly = scorer.score(prediction_record(task(2), "I don't know.", "reference"))
    assert wrongly["metrics"]["RB_agg_idk"] == wrongly["metrics"]["RL_F_idk"] == [0.0]
    verdicts, rating = llm.seen[1], llm.seen[2]  # the two grounded calls open with the same documents
    assert verdicts[0] == rating[0] and verdicts[0]["role"] == "system"
    head = verdicts[1]["content"].split("[End of documents]")[0]
    assert "Guinea pigs sleep in burrows 1." in head and rating[1]["content"].startswith(head)
    off = fake_scorer(None, llm_judges=False).score(prediction_record(task(0), "Burrows.", "reference"))
    assert off["metrics"]["RL_F_idk"] == [None] and off["metrics"]["RB_agg_idk"][0] is not None


def test_judge_model_is_set_apart_from_the_generator() -> None:
    settings = load_settings("cpu-test", overrides={"gen_eval": {"judge": {"model": "smollm2-135m-instruct"}}})
    assert settings.llm.model == "smollm2-135m-instruct" and settings.gen_eval.judge.n_ctx == 8192
    assert load_settings("cpu-test").gen_eval.judge.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"


# ---------------------------------------------------------------- resumable runs

class CountingScorer:
    def __init__(self, stop_after: int | None = None) -> None:
        self.seen: list[str] = []
        self.stop_after = stop_after

    def score(self, record: dict[str, Any]) -> dict[str, Any]:
        if self.stop_after is not None and len(self.seen) == self.stop_after:
            raise KeyboardInterrupt
        self.seen.append(record["task_id"])
        return dict(record, metrics={"RB_agg": [0.5]})


def test_interrupted_run_resumes_without_scoring_twice(tmp_path: Path) -> None:
    records = [prediction_record(task(i), f"answer {i}", "reference") for i in range(6)]
    out = tmp_path / "scored.jsonl"
    first = CountingScorer(stop_after=3)
    with pytest.raises(KeyboardInterrupt):
        score_predictions(records, first, out, progress=False)
    assert len(load_done(out)) == 3
    with out.open("a", encoding="utf-8") as fh:  # an interruption in the middle of a write
        fh.write('{"task_id": "conv1<::>1", "metr')
    second = CountingScorer()
    scored = score_predictions(records, second, out, progress=False)
    assert second.seen == [r["task_id"] for r in records[3:]]
    ids = [json.loads(line)["task_id"] for line in out.read_text().splitlines()]
    assert ids == [r["task_id"] for r in records] and len(set(ids)) == 6
    assert [s["task_id"] for s in scored] == ids
    third = CountingScorer()
    score_predictions(records, third, out, progress=False)
    assert third.seen == [] and len(out.read_text().splitlines()) == 6
    with pytest.raises(BadInputError, match="more than once"):
        score_predictions(records + records[:1], CountingScorer(), tmp_path / "other.jsonl", progress=False)


def test_an_earlier_run_lends_the_scores_of_unchanged_answers(tmp_path: Path) -> None:
    pytest.importorskip("rouge_score")
    records = [prediction_record(task(i), f"Guinea pigs sleep in burrows {i}.", "reference") for i in range(3)]
    llm = scripted_judge(["Guinea pigs sleep in burrows."], [1], 8)
    scorer = fake_scorer(llm)
    before = score_predictions(records, scorer, tmp_path / "before" / "scored.jsonl", progress=False)
    (tmp_path / "before" / "scores.json").write_text(json.dumps({"info": scorer.describe()}), encoding="utf-8")
    calls = len(llm.calls)
    changed = [records[0], prediction_record(task(1), "Guinea pigs sleep in burrows.", "reference"), records[2]]
    changed[2]["contexts"][0]["text"] = "Guinea pigs nap in hay."  # same answer, other passage: not the same scores
    reuse = reusable_scores(tmp_path / "before", scorer.describe())
    after = score_predictions(changed, fake_scorer(llm), tmp_path / "after" / "scored.jsonl", progress=False, reuse=reuse)
    assert len(llm.calls) == calls + 2 * 3  # tasks 1 and 2 judged again (3 calls each), task 0 reused
    assert after[0]["local_rag"]["reused"] and after[0]["metrics"] == before[0]["metrics"]
    assert not after[1]["local_rag"].get("reused") and not after[2]["local_rag"].get("reused")
    other = GenerationScorer(GenEvalConfig(judge={"model": "smollm2-135m-instruct"}), bert=FakeBert())  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match="judge_model"):
        reusable_scores(tmp_path / "before", other.describe())
    with pytest.raises(BadInputError, match="no finished run"):
        reusable_scores(tmp_path / "after", scorer.describe())


class OldRules:
    """The IDK rules of an earlier run: the answers in ``declines`` decline, nothing else does."""

    name = "rules"

    def __init__(self, declines: set[str]) -> None:
        self.declines = declines

    def label(self, answer: str, question: str = "") -> float:
        return 1.0 if answer in self.declines else 0.0


def test_a_fixed_idk_rule_reaches_the_tasks_already_scored(tmp_path: Path) -> None:
    pytest.importorskip("rouge_score")
    records = [
        prediction_record(task(0, "UNANSWERABLE"), "I apologize, but I'm not able to assist with that.", "reference"),
        prediction_record(task(1), "I'm sorry, but I can't assist with that.", "reference"),
        prediction_record(task(2), "The documents do not say. However, guinea pigs sleep in burrows.", "reference"),
        prediction_record(task(3), "Guinea pigs sleep in burrows.", "reference"),
    ]
    out = tmp_path / "scored.jsonl"
    first_llm = scripted_judge(["Guinea pigs sleep in burrows."], [1], 8)
    old = GenerationScorer(GenEvalConfig(), bert=FakeBert(), judge_llm=first_llm,  # type: ignore[arg-type]
                           idk_judge=OldRules({records[2]["predictions"][0]["text"]}))
    before = score_predictions(records, old, out, progress=False)
    assert [r["metrics"]["idk_eval"] for r in before] == [[0.0], [0.0], [1.0], [0.0]]
    assert [r["local_rag"]["judged"] for r in before] == [False, True, False, True]

    llm = scripted_judge(["Guinea pigs sleep in burrows."], [1], 8)
    after = score_predictions(records, fake_scorer(llm), out, progress=False)
    m = [r["metrics"] for r in after]
    assert m[0]["idk_eval"] == [1.0] and m[0]["RL_F_idk"] == m[0]["RB_llm_idk"] == [1.0]  # now a right decline
    assert m[1]["idk_eval"] == [1.0] and m[1]["RB_agg_idk"] == m[1]["RL_F_idk"] == [0.0]  # now a wrong decline
    assert after[1]["local_rag"]["idk_relabelled_from"] == 0.0 and after[1]["local_rag"]["hm_idk"] == 0.0
    # task 2 was not judged (a decline then); its new label 0.5 keeps the metric, so it was scored again
    assert m[2]["idk_eval"] == [0.5] and after[2]["local_rag"]["judged"] and len(llm.calls) == 3
    assert after[3] == before[3]
    assert [json.loads(line) for line in out.read_text().splitlines()] == [after[0], after[1], after[3], after[2]]
    assert not list(tmp_path.glob("*.tmp"))
    calls = len(llm.calls)
    assert score_predictions(records, fake_scorer(llm), out, progress=False) == after and len(llm.calls) == calls
    llm_labels = GenerationScorer(GenEvalConfig(idk_judge="llm"), bert=FakeBert())  # type: ignore[arg-type]
    assert llm_labels.relabel(before[1]) is before[1]  # an LLM label is not redone by rules
    cheap = fake_scorer(None, llm_judges=False).score(records[1])  # RB_alg and IDK only
    cheap["metrics"]["idk_eval"] = [0.0]  # as the old rules had it
    redone = fake_scorer(llm).relabel(cheap)  # this run has judges; the task was scored without them
    assert redone is not None and redone["metrics"]["RB_agg_idk"] == [0.0] and redone["metrics"]["RL_F_idk"] == [None]


def test_merge_subset_and_the_pipeline_hook() -> None:
    tasks = [task(i, label, domain) for i, (label, domain) in enumerate(
        [("ANSWERABLE", "clapnq")] * 8 + [("UNANSWERABLE", "clapnq")] * 2 + [("ANSWERABLE", "fiqa")] * 6)]
    subset = stratified_subset(tasks, 8)
    assert len(subset) == 8 and subset == stratified_subset(list(reversed(tasks)), 8)[::-1]
    assert {answerability(t) for t in subset} == {"ANSWERABLE", "UNANSWERABLE"}
    preds = [{"task_id": tasks[1]["task_id"], "predictions": [{"text": "x"}], "contexts": []}]
    merged, missing = merge_predictions(tasks, preds, "rag")
    assert merged[0]["targets"] == tasks[1]["targets"] and merged[0]["contexts"] == [] and len(missing) == 15
    assert merge_predictions(tasks, preds, "reference")[0][0]["contexts"] == tasks[1]["contexts"]
    older = [{"task_id": tasks[2]["task_id"].replace("<::>", "::"), "predictions": [{"text": "y"}]}]
    assert merge_predictions(tasks, older, "reference")[0][0]["task_id"] == tasks[2]["task_id"]
    with pytest.raises(BadInputError):
        merge_predictions(tasks, [{"task_id": "nope"}], "reference")


def test_reference_generator_answers_from_the_gold_contexts_only() -> None:
    from .llm_fixtures import ScriptedLLM

    seen: list[str] = []

    def reply(messages, schema):  # type: ignore[no-untyped-def]
        seen.append(messages[-1]["content"])
        return "It is blue [1] and round [3]."

    t = task(0, "ANSWERABLE", "clapnq")
    generate = pipeline_generator(load_settings("cpu-test"), "reference", llm=ScriptedLLM(reply))
    prediction = generate(t)
    assert prediction["text"] == "It is blue [1] and round." and prediction["kind"] == "answer"
    assert prediction["citations"] == [{"n": 1, "document_id": t["contexts"][0]["document_id"], "valid": True}, {"valid": False}]
    assert t["contexts"][0]["text"] in seen[0]
    empty = generate(dict(t, contexts=[]))
    assert empty["kind"] == "decline" and len(seen) == 1


def test_reports_write_markdown_json_and_charts(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    record = {"metrics": {"RB_agg_idk": [0.5], "RL_F_idk": [1.0], "RB_llm_idk": [0.5], "idk_eval": [0.0]},
              "local_rag": {"answerability": "ANSWERABLE", "domain": "fiqa", "turn": 2, "judged": True},
              "predictions": [{"text": "x", "citations": [{"id": 1, "valid": True}, {"id": 4, "valid": False}]}]}
    summary = summarize([record], {"comparable": False, "bertscore": "BERTScore: fake", "setting": "rag"})
    paths = write_reports(summary, tmp_path)
    assert {p.name for p in paths} == {"scores.json", "scores.md", "scores_by_domain.png",
                                       "scores_by_answerability.png", "scores_by_turn.png"}
    text = (tmp_path / "scores.md").read_text()
    assert "Not comparable to official figures" in text and "citation validity: 0.5000 of 2" in text
    assert json.loads((tmp_path / "scores.json").read_text())["overall"]["final"] == pytest.approx(0.6)

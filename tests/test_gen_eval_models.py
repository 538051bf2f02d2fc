"""The generation scorer on real models: BERTScore with the local MiniLM on small known pairs, the official sample
predictions scored end to end (algorithmic metrics; and with the SmolLM2 judge, marked ``llm``), the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from local_rag.evaluation.generation.algorithmic import (
    NOT_COMPARABLE,
    BertScore,
    EncoderChoice,
    algorithmic_metrics,
    choose_encoder,
)
from local_rag.evaluation.generation.official import read_records
from local_rag.evaluation.generation.report import summarize
from local_rag.evaluation.generation.runner import score_predictions
from local_rag.evaluation.generation.scorer import GenerationScorer
from local_rag.settings import GenEvalConfig
from tests.llm_fixtures import SMOLLM

from .conftest import MODELS, needs_minilm

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "mtrag" / "eval_samples"
needs_samples = pytest.mark.skipif(not SAMPLES.exists(), reason="../shared/mtrag/eval_samples not present")

pytestmark = [needs_minilm, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="module")
def bert() -> BertScore:
    pytest.importorskip("bert_score")
    pytest.importorskip("rouge_score")
    return BertScore(choose_encoder("auto", 0, MODELS))


def test_auto_encoder_falls_back_to_minilm_and_says_so(bert: BertScore) -> None:
    if (MODELS / "deberta-xlarge-mnli").exists():
        pytest.skip("the official encoder is imported here")
    assert bert.encoder.name == "all-MiniLM-L6-v2" and bert.encoder.layer == 6 and bert.encoder.baseline is None
    assert not bert.comparable and NOT_COMPARABLE in bert.encoder.describe()
    official = EncoderChoice("deberta-xlarge-mnli", MODELS, 40, Path("baseline.tsv"))
    assert official.comparable and not EncoderChoice("deberta-xlarge-mnli", MODELS, 39, None).comparable


def test_bertscore_on_small_known_pairs(bert: BertScore) -> None:
    same, related, unrelated, subset, empty = bert.score(
        ["The cat sat on the mat.", "A cat was sitting on the mat.", "Stock markets fell sharply on Monday.",
         "the cat sat", ""],
        ["The cat sat on the mat.", "The cat sat on the mat.", "The cat sat on the mat.",
         "the cat sat on the mat near the back door of the house", "anything"],
    )
    assert same == pytest.approx((1.0, 1.0, 1.0), abs=1e-4)
    assert related[2] > unrelated[2] + 0.2  # paraphrase well above an unrelated sentence
    assert subset[0] > subset[1]  # a candidate inside its reference: precision above recall
    assert empty == (0.0, 0.0, 0.0)  # bert-score's rule for empty sentences (raw scores, no baseline)


def test_algorithmic_metrics_shape(bert: BertScore) -> None:
    m = algorithmic_metrics("Guinea pigs sleep in burrows.", ["Guinea pigs sleep in burrows."],
                            ["Guinea pigs live in burrows.", "Stock markets fell."], bert)
    assert m["RougeL_stemFalse"] == [pytest.approx(1.0)] and m["BertscoreR"][0] == pytest.approx(1.0, abs=1e-4)
    assert len(m["BertKPrec"]) == 2 and m["BertKPrec"][0] > m["BertKPrec"][1]
    assert 0 < m["RB_agg"][0] <= 1
    assert "BertKPrec" not in algorithmic_metrics("x", ["y"], [], bert) and \
        algorithmic_metrics("x", ["y"], [], bert)["RB_agg"] == [0.0]


@needs_samples
def test_official_sample_scored_end_to_end(bert: BertScore, tmp_path: Path) -> None:
    records = read_records(SAMPLES / "responses-10.jsonl")
    scorer = GenerationScorer(GenEvalConfig(llm_judges=False), MODELS, bert=bert)
    scored = score_predictions(records, scorer, tmp_path / "scored.jsonl", progress=False)
    assert [s["task_id"] for s in scored] == [r["task_id"] for r in records]
    first = scored[0]["metrics"]  # UNANSWERABLE, no passages, the answer declines
    assert first["idk_eval"] == [1.0] and first["RB_agg"] == [0.0] and first["RB_agg_idk"] == [1.0]
    for s in scored[1:]:  # answerable and answered: conditioning keeps RB_alg
        assert s["metrics"]["idk_eval"] == [0.0] and s["metrics"]["RB_agg_idk"] == s["metrics"]["RB_agg"]
        assert 0.2 < s["metrics"]["RB_agg"][0] < 1 and len(s["metrics"]["BertKPrec"]) == len(s["contexts"])
    summary = summarize(scored, scorer.describe())
    assert summary["overall"]["tasks"] == 10 and summary["idk_rate_unanswerable"] == 1.0
    assert 0.4 < summary["overall"]["RB_agg_idk"] < 0.9 and summary["overall"]["final"] is None  # no LLM judges
    assert summary["info"]["comparable"] is False


@needs_samples
def test_cli_scores_a_predictions_file_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("bert_score")
    from local_rag.cli.main import cli

    monkeypatch.setenv("LOCAL_RAG_MODELS_DIR", str(MODELS))
    out = tmp_path / "run"
    args = ["eval", "generation", "--setting", "reference", "--predictions", str(SAMPLES / "responses-10.jsonl"),
            "--limit", "3", "--no-llm-judges", "--out", str(out), "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "scores.json").read_text())
    assert summary["overall"]["tasks"] == 3 and summary["info"]["limit"] == 3
    assert {p.name for p in out.glob("*.png")} == {"scores_by_domain.png", "scores_by_answerability.png",
                                                   "scores_by_turn.png"}
    assert "Not comparable to official figures" in (out / "scores.md").read_text()
    again = CliRunner().invoke(cli, args)  # everything already scored: nothing scored twice
    assert again.exit_code == 0 and len((out / "scored.jsonl").read_text().splitlines()) == 3
    bad = CliRunner().invoke(cli, ["eval", "generation", "--setting", "rag", "--strict", "--out", str(out),
                                   "--predictions", str(SAMPLES / "responses-10.jsonl")])
    assert bad.exit_code == 2 and "'Collection'" in bad.output


@pytest.mark.llm
@pytest.mark.slow
@needs_samples
def test_official_sample_with_the_smollm_judge(bert: BertScore, tmp_path: Path) -> None:
    from tests.llm_fixtures import load_real

    llm = load_real(SMOLLM, n_ctx=2048, temperature=0.0, seed=0)
    records = read_records(SAMPLES / "responses-10.jsonl")[:2]  # one UNANSWERABLE (decided) and one answerable
    scorer = GenerationScorer(GenEvalConfig(passage_tokens=96), MODELS, bert=bert, judge_llm=llm)
    scored = score_predictions(records, scorer, tmp_path / "scored.jsonl", progress=False)
    decided, judged = scored
    assert not decided["local_rag"]["judged"] and decided["metrics"]["RL_F_idk"] == [1.0]
    m = judged["metrics"]
    assert judged["local_rag"]["judged"] and judged["local_rag"]["llm_calls"] >= 2
    assert m["RL_F"][0] is None or 0 <= m["RL_F"][0] <= 1
    assert 0.1 <= m["RB_llm"][0] <= 1 and m["RB_llm_idk"] == m["RB_llm"]
    assert {c.stage for c in llm.calls} >= {"eval-claims", "eval-rb-llm"}
    summary = summarize(scored, scorer.describe())
    assert summary["info"]["judge_model"] and summary["overall"]["tasks"] == 2


@pytest.mark.llm
@needs_samples
def test_cli_generates_task_b_with_smollm_and_records_what_generated(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("bert_score")
    from local_rag.cli.main import cli
    from tests.llm_fixtures import llama_cpp_or_skip, model_or_skip

    llama_cpp_or_skip()
    model_or_skip(SMOLLM)
    monkeypatch.setenv("LOCAL_RAG_MODELS_DIR", str(MODELS))
    tasks = tmp_path / "tasks.jsonl"  # the first two sample tasks (UNANSWERABLE, answerable), predictions removed
    tasks.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "predictions"}) + "\n"
                             for r in read_records(SAMPLES / "responses-10.jsonl")[:2]), encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["eval", "generation", "--setting", "reference", "--tasks", str(tasks),
                                      "--profile", "cpu-test", "--prompt", "answer_plain", "--no-llm-judges",
                                      "--no-charts", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    predictions = read_records(out / "predictions.jsonl")
    assert len(predictions) == 2 and all(p["predictions"][0]["text"].strip() for p in predictions)
    info = json.loads((out / "scores.json").read_text())["info"]
    assert info["prompt"] == "answer_plain" and info["generator"] == SMOLLM and info["mode"] == "pipeline"
    assert f"generated here by {SMOLLM} with the `answer_plain` prompt" in (out / "scores.md").read_text()

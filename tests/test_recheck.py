"""The stages after generation on committed answers (`local-rag eval recheck`): a real lexical support classifier
trained in the test from a handful of pairs, decisions from a file; and a side-by-side run's answers turned into
prediction records for the judges (`local_rag.bench.peer_answers`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from local_rag.bench.peer_answers import row_predictions
from local_rag.cli.main import cli
from local_rag.decide.support import PAIR_FEATURES, load_support, save_support
from local_rag.errors import BadInputError
from local_rag.evaluation.generation.official import prediction_record, validate_record
from local_rag.evaluation.generation.recheck import RecheckTally, read_decision_file, read_decisions, recheck_record
from local_rag.settings import SupportConfig, load_settings
from local_rag.train.support import features, make_model, variant_features

from .test_support import BM25, PAIRS, SLEEP

IDK = load_settings("cpu-test").generate.idk_answer


def lexical_support(folder: Path) -> Path:
    cols = [PAIR_FEATURES.index(f) for f in variant_features("lr-lexical")]
    x, y = features(PAIRS, None), np.array([p.label for p in PAIRS])
    model = make_model("lr-lexical").fit(x[:, cols], y)
    return save_support(folder, model, {"features": variant_features("lr-lexical"), "threshold": 0.5})


def task(n: int, question: str = "How long do cats sleep?") -> dict[str, Any]:
    return {"task_id": f"c{n}<::>1", "conversation_id": f"c{n}", "Collection": "mt-rag-clapnq", "answerability": ["ANSWERABLE"],
            "input": [{"speaker": "user", "text": question}], "targets": [{"speaker": "agent", "text": "12-16 hours."}]}


def record(n: int, text: str, cited: list[int] = (), question: str = "How long do cats sleep?") -> dict[str, Any]:
    contexts = [{"document_id": f"p{i}", "title": t.split("\n")[0], "text": t.split("\n", 1)[1], "url": "", "score": 1.0 / (i + 1)}
                for i, t in enumerate((SLEEP, BM25))]
    citations = [{"n": c, "document_id": f"p{c - 1}", "valid": True} for c in cited]
    return prediction_record(task(n, question), {"text": text, "kind": "answer", "citations": citations}, "rag", contexts)


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = lexical_support(tmp_path_factory.mktemp("models") / "support")
    return load_settings("cpu-test", overrides={"support": {"mode": "drop", "model": str(folder)}})


def test_the_support_check_rewrites_committed_answers_as_the_pipeline_would(settings: Any) -> None:
    checker = load_support(Path(settings.support.model), None, SupportConfig(mode="drop"))
    mixed = record(0, "A cat sleeps twelve to sixteen hours a day [1]. The latest version of Carthage is 1.3.2 [1].", [1, 1])
    out = recheck_record(mixed, checker=checker, decisions={}, settings=settings)
    pred = out["predictions"][0]
    assert pred["text"] == "A cat sleeps twelve to sixteen hours a day [1]." and pred["kind"] == "answer"
    assert pred["citations"] == [{"n": 1, "document_id": "p0", "valid": True}]
    assert pred["recheck"]["support"]["dropped"] == 1 and mixed["predictions"][0]["text"].endswith("1.3.2 [1].")  # input kept
    assert not validate_record(out, "rag")
    made_up = recheck_record(record(1, "The latest version of Carthage is 1.3.2 [2]."), checker=checker, decisions={},
                             settings=settings)
    assert made_up["predictions"][0] == {"text": IDK, "kind": "decline", "citations": [],
                                         "recheck": {"support": made_up["predictions"][0]["recheck"]["support"]}}
    tally = RecheckTally()
    tally.add(mixed["predictions"][0]["text"], out)
    tally.add("The latest version of Carthage is 1.3.2 [2].", made_up)
    assert tally.to_json() | {"decided": {}} == {"records": 2, "changed": 2, "decided": {}, "checked": 2, "sentences": 3,
                                                 "unsupported": 2, "moved": 0, "dropped": 2, "emptied": 1}


def test_decisions_replace_the_answer_and_need_no_support_model(settings: Any, tmp_path: Path) -> None:
    decisions = {"c0<::>1": "decline", "c1<::>1": "clarify", "c2<::>1": "answer"}
    declined = recheck_record(record(0, "Cats sleep a lot [1]."), checker=None, decisions=decisions, settings=settings)
    assert declined["predictions"][0]["text"] == IDK and declined["predictions"][0]["recheck"] == {"decision": "decline"}
    asked = recheck_record(record(1, "Cats sleep a lot [1].", question="How long does this animal sleep?"), checker=None,
                           decisions=decisions, settings=settings)
    assert asked["predictions"][0]["kind"] == "clarify" and asked["predictions"][0]["text"].endswith("?")
    kept = recheck_record(record(2, "Cats sleep a lot [1].", [1]), checker=None, decisions=decisions, settings=settings)
    assert kept["predictions"][0]["text"] == "Cats sleep a lot [1]." and "recheck" not in kept["predictions"][0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "c0<::>1", "kind": "maybe"}\n', encoding="utf-8")
    with pytest.raises(BadInputError, match="line 1"):
        read_decisions(bad)


def test_a_decisions_file_gives_kinds_and_declines_in_one_pass(tmp_path: Path) -> None:
    rows = tmp_path / "predictions.jsonl"
    rows.write_text('{"task_id": "c0<::>1", "kind": "decline", "p": {"decline": 0.9}}\n'
                    '{"task_id": "c1<::>1", "kind": "answer", "p": {"decline": 0.1}}\n', encoding="utf-8")
    assert read_decision_file(rows, declines=True) == ({"c0<::>1": "decline", "c1<::>1": "answer"},
                                                       {"c0<::>1": 0.9, "c1<::>1": 0.1})
    assert read_decision_file(rows) == ({"c0<::>1": "decline", "c1<::>1": "answer"}, {})
    kinds_only = tmp_path / "decisions.jsonl"
    kinds_only.write_text('{"task_id": "c0<::>1", "kind": "decline"}\n', encoding="utf-8")
    assert read_decisions(kinds_only) == {"c0<::>1": "decline"}
    with pytest.raises(BadInputError, match="line 1: no p.decline"):
        read_decision_file(kinds_only, declines=True)  # a draft gate reading the decider needs its probabilities


def test_recheck_command_writes_a_new_file_and_its_counts(settings: Any, tmp_path: Path) -> None:
    answers = tmp_path / "predictions.jsonl"
    rows = [record(0, "A cat sleeps twelve to sixteen hours a day [2].", [2]), record(1, "Carthage 1.3.2 is out [1].", [1])]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text('{"task_id": "c1<::>1", "kind": "decline", "p": {}}\n', encoding="utf-8")
    out = tmp_path / "rechecked" / "predictions.jsonl"
    args = ["eval", "recheck", "--profile", "cpu-test", "--predictions", str(answers), "--out", str(out), "--support", "flag",
            "--decisions", str(decisions)]
    result = CliRunner().invoke(cli, args, env={"LOCAL_RAG_SUPPORT__MODEL": settings.support.model})
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "rechecked" / "predictions.summary.json").read_text())
    assert summary | {"decisions": None} == {"records": 2, "changed": 2, "decided": {"decline": 1}, "checked": 1, "sentences": 1,
                                             "unsupported": 0, "moved": 1, "dropped": 0, "emptied": 0, "support": "flag",
                                             "support_model": settings.support.model, "decisions": None,
                                             "draft_gate": None}
    moved = json.loads(out.read_text().splitlines()[0])["predictions"][0]
    assert moved["text"] == "A cat sleeps twelve to sixteen hours a day [1]." and moved["citations"][0]["document_id"] == "p0"
    same = CliRunner().invoke(cli, [*args[:6], "--out", str(answers)])
    assert same.exit_code != 0 and "another file" in same.output and answers.read_text().count("\n") == 2
    missing = CliRunner().invoke(cli, args[:8] + ["--support", "drop"], env={"LOCAL_RAG_SUPPORT__MODEL": str(tmp_path / "none")})
    assert missing.exit_code != 0 and "no trained support model" in missing.output


def test_recheck_refuses_a_runs_answers_file_and_decisions_for_other_tasks_in_one_line(tmp_path: Path) -> None:
    """Session 51: `eval recheck --predictions <run>/answers.jsonl` (the committed file of a run: no task texts) was a
    KeyError traceback; a decisions file naming none of the tasks changed nothing without a word."""
    committed = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "gen-eval" / "gen-rag-cpu-qwen-answer" / "answers.jsonl"
    out = tmp_path / "out.jsonl"
    base = ["eval", "recheck", "--profile", "cpu-test", "--out", str(out), "--support", "off"]
    result = CliRunner().invoke(cli, [*base, "--predictions", str(committed)])
    assert result.exit_code == 2 and "answers.jsonl, line 1: not a prediction record" in result.output
    assert "this is a run's answers.jsonl" in result.output and "give the run's predictions.jsonl" in result.output
    scored = CliRunner().invoke(cli, ["eval", "generation", "--setting", "rag", "--predictions", str(committed),
                                      "--no-llm-judges", "--out", str(tmp_path / "run")])
    assert scored.exit_code == 2 and "give the run's predictions.jsonl" in scored.output  # before: "no predictions[0]"
    assert not (tmp_path / "run").exists()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert "empty.jsonl: no prediction record" in CliRunner().invoke(cli, [*base, "--predictions", str(empty)]).output
    answers = tmp_path / "predictions.jsonl"
    answers.write_text(json.dumps(record(0, "Cats sleep [1].", [1])) + "\n", encoding="utf-8")
    other = tmp_path / "decisions.jsonl"
    other.write_text('{"task_id": "elsewhere<::>3", "kind": "decline"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, [*base, "--predictions", str(answers), "--decisions", str(other)])
    assert result.exit_code == 2 and "--decisions: none of the 1 tasks of" in result.output and not out.exists()


def test_a_side_by_side_run_becomes_prediction_records() -> None:
    report = {"turns": {"peer": [{"task_id": "c0<::>1", "answer": "Cats sleep 12-16 hours.", "kind": "answer", "passages": ["d1", "d0"]}],
                        "ours": [{"task_id": "c0<::>1", "answer": "12-16 hours [1].", "kind": "answer", "passages": ["d1"]}]}}
    corpus = [{"_id": "d0", "title": "Cats", "text": "Cats purr."}, {"_id": "d1", "title": "Cats", "text": "Cats sleep 12-16 hours."}]
    rows = row_predictions(report, [task(0)], corpus)
    assert set(rows) == {"peer", "ours"} and all(not validate_record(r, "rag") for rs in rows.values() for r in rs)
    assert [c["document_id"] for c in rows["peer"][0]["contexts"]] == ["d1", "d0"]
    assert rows["ours"][0]["predictions"][0]["text"] == "12-16 hours [1]." and rows["ours"][0]["targets"]
    with pytest.raises(BadInputError, match="passage d9"):
        row_predictions({"turns": {"peer": [{**report["turns"]["peer"][0], "passages": ["d9"]}]}}, [task(0)], corpus)
    with pytest.raises(BadInputError, match="not among"):
        row_predictions(report, [], corpus)

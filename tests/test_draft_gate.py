"""The draft gate (issue 24): after generation, decline a draft its passages do not support. A real lexical support
classifier and a real gate are trained in the test (scikit-learn, no embedder) from generated-answer files in the
official prediction shape; the gate then declines through the CLI-trained model in a real pipeline (real bm25s and
FAISS index, a scripted generator)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from local_rag.decide.draft import DraftGate, draft_signals, logit, read_gate
from local_rag.decide.support import PAIR_FEATURES, SupportChecker, load_support, save_support
from local_rag.records import Conversation, Hit, Turn
from local_rag.settings import SupportConfig
from local_rag.train.draft import threshold_for
from local_rag.train.support import features, make_model, variant_features

from .conftest import CORPUS, write_jsonl
from .test_cli import assert_clean_error, run
from .test_support import PAIRS

SUPPORTED = [  # drafts that say what their passage says
    (0, "Cats are small domesticated carnivorous mammals [1]. They purr and hunt mice."),
    (1, "A cat sleeps twelve to sixteen hours a day [1]."),
    (2, "Dogs bark, fetch sticks and guard the house [1]."),
    (3, "BM25 scores documents against a query using term frequency [1]."),
    (4, "FAISS searches dense vectors with flat, IVF and HNSW indexes [1]."),
    (5, "Reciprocal rank fusion sums one over k plus the rank of each document [1]."),
]
UNSUPPORTED = [  # drafts on the passage's subject that its words do not carry
    (0, "The oldest cat lived to 38 years in Texas [1]."),
    (1, "Lions in Kenya rest about 20 hours after a hunt."),
    (2, "The Westminster show crowned a beagle in 2015 [1]."),
    (3, "The latest version of Carthage is 1.3.2 [1]."),
    (4, "Meta released version 9.1 in Paris during 2017."),
    (5, "Condorcet voting elects the Smith winner [1]."),
]


@pytest.fixture(scope="module")
def support_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cols = [PAIR_FEATURES.index(f) for f in variant_features("lr-lexical")]
    x, y = features(PAIRS, None), np.array([p.label for p in PAIRS])
    model = make_model("lr-lexical").fit(x[:, cols], y)
    return save_support(tmp_path_factory.mktemp("support") / "support", model,
                        {"features": variant_features("lr-lexical"), "threshold": 0.5})


@pytest.fixture(scope="module")
def checker(support_folder: Path) -> SupportChecker:
    return load_support(support_folder, None, SupportConfig())


def record(task_id: str, gold: str, passage: int, text: str) -> dict:
    c = CORPUS[passage]
    return {"task_id": task_id, "answerability": [gold], "predictions": [{"text": text, "kind": "answer"}],
            "contexts": [{"document_id": c["_id"], "title": c["title"], "text": c["text"]}]}


def answers(tmp_path: Path, copies: int = 3) -> tuple[Path, Path]:
    """Generated answers (supported ones ANSWERABLE, unsupported ones UNANSWERABLE, one conversation each) and a
    decider's predictions for them (a weak P(decline) that leans the right way)."""
    rows, decisions = [], []
    for k in range(copies):
        for gold, drafts, p in (("ANSWERABLE", SUPPORTED, 0.2), ("UNANSWERABLE", UNSUPPORTED, 0.4)):
            for i, (passage, text) in enumerate(drafts):
                task_id = f"{gold[:2]}{k}{i}<::>1"
                rows.append(record(task_id, gold, passage, text))
                kind = "decline" if gold == "UNANSWERABLE" and i == 0 else "answer"
                decisions.append({"task_id": task_id, "kind": kind, "p": {"decline": p + 0.05 * (i % 3)}})
    rows.append(record("u0<::>1", "UNDERSPECIFIED", 0, "Cats purr [1]."))  # reported, never fitted
    return write_jsonl(tmp_path / "predictions.jsonl", rows), write_jsonl(tmp_path / "decisions.jsonl", decisions)


def test_signals_by_hand_and_an_empty_draft():
    s = draft_signals(np.array([[0.9, 0.2], [0.1, 0.3], [0.6, 0.7]]), threshold=0.5)
    assert s == pytest.approx({"weak_share": 1 / 3, "weak_mean": 1 - (0.9 + 0.3 + 0.7) / 3, "weak_max": 0.1, "weak_min": 0.7})
    assert "decider" not in s
    assert draft_signals(np.zeros((0, 0)), 0.5, p_decline=0.5) == {"weak_share": 1.0, "weak_mean": 1.0, "weak_max": 1.0,
                                                                   "weak_min": 1.0, "decider": 0.0}
    assert logit(1.0) == pytest.approx(-logit(0.0)) and logit(0.0) < -9


def test_the_threshold_keeps_the_budget():
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
    for budget in (0.0, 0.1, 0.25, 0.5):
        assert (scores >= threshold_for(scores, budget)).mean() <= budget
    assert (scores >= threshold_for(scores, 0.2)).sum() == 2


def test_train_the_gate_through_the_cli_then_it_declines_in_the_pipeline(tmp_path: Path, support_folder: Path,
                                                                          checker: SupportChecker, fake_settings,
                                                                          hash_embedder, corpus_file: Path):
    predictions, decisions = answers(tmp_path)
    models = tmp_path / "models"
    models.mkdir()
    env = {"LOCAL_RAG_MODELS_DIR": str(models), "LOCAL_RAG_SUPPORT__MODEL": str(support_folder)}
    result = run("train", "draft-gate", "--answers", str(predictions), "--decisions", str(decisions),
                 "--test-answers", str(predictions), "--budget", "0.2", "--report", str(tmp_path / "report"),
                 cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["examples"] == {"fitted": 36, "unanswerable": 18, "left_out_no_decision": 1, "other_classes": 0}
    assert report["cv"]["declines"]["UNANSWERABLE"]["declined"] >= 0.8, report["cv"]
    assert report["cv"]["declines"]["answerable"]["declined"] <= 0.2 and report["cv"]["auc"] >= 0.9
    assert report["test"]["gate_latency"]["n"] == 36 and report["command"].startswith("local-rag train draft-gate")
    # in the pipeline the decider goes first (it declines one UNANSWERABLE draft in six), then the gate
    alone, both = report["cv"]["pipeline"]["decider alone"], report["cv"]["pipeline"]["decider then gate"]
    assert alone["declined"]["UNANSWERABLE"]["declined"] == round(3 / 18, 3)
    assert both["declined"]["UNANSWERABLE"]["declined"] >= report["cv"]["declines"]["UNANSWERABLE"]["declined"]
    entry = next(e for e in json.loads((models / "manifest.local.json").read_text())["models"] if e["name"] == "draft-gate")
    assert entry["role"] == "draft-gate"
    gate = read_gate(models / "draft-gate", checker)
    assert gate.needs_decider and gate.check("Cats purr.", [], None) == (False, 0.0)  # no decider: never declines

    # without the decider feature: no decisions needed, and the gate runs with no trained decider
    result = run("train", "draft-gate", "--answers", str(predictions), "--features", "weak_share,weak_mean,weak_max,weak_min",
                 "--name", "gate-alone", "--budget", "0.2", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    # the same gate on committed answers, without the generator (`eval recheck`)
    out = tmp_path / "rechecked.jsonl"
    result = run("eval", "recheck", "--predictions", str(predictions), "--out", str(out), "--support", "off",
                 "--draft-gate", "gate-alone", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    rechecked = {r["task_id"]: r["predictions"][0] for r in map(json.loads, out.read_text().splitlines())}
    assert all("draft_gate" in p["recheck"] for p in rechecked.values())
    declined = {t for t, p in rechecked.items() if p["kind"] == "decline"}
    assert len(declined & {t for t in rechecked if t.startswith("UN")}) >= 14 and len(declined - {t for t in rechecked if t.startswith("UN")}) <= 4
    summary = json.loads(out.with_suffix(".summary.json").read_text())
    assert summary["decided"]["decline"] == len(declined) and summary["draft_gate"] == "gate-alone"
    assert_clean_error(run("eval", "recheck", "--predictions", str(predictions), "--out", str(out), "--draft-gate",
                           "draft-gate", cwd=tmp_path, env=env), 2, "give --decisions")

    from local_rag.index import build_index, open_index
    from local_rag.pipeline import Pipeline
    from local_rag.retrieve import HybridRetriever

    from .llm_fixtures import ScriptedLLM

    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    settings = fake_settings.model_copy(update={
        "models_dir": str(models), "pipeline": fake_settings.pipeline.model_copy(update={"rewrite": False}),
        "support": SupportConfig(model=str(support_folder)),
        "decide": fake_settings.decide.model_copy(update={"draft_model": "gate-alone"})})
    retriever = HybridRetriever(open_index(settings), settings, hash_embedder)
    question = Conversation([Turn("user", "how long do cats sleep?")])
    result = Pipeline(settings, retriever=retriever, llm=ScriptedLLM("The latest version of Carthage is 1.3.2 [1].")).answer(question)
    assert result.answer.kind == "decline" and result.answer.text == settings.generate.idk_answer
    assert result.decision is not None and result.decision.reason == "draft gate" and result.decision.scores["draft"] >= 0.5
    assert any(step["type"] == "gate" for step in result.trace) and "draft-gate" in result.timings
    supported = Pipeline(settings, retriever=retriever, llm=ScriptedLLM("A cat sleeps twelve to sixteen hours a day [1].")).answer(question)
    assert supported.answer.kind == "answer" and "draft-gate" in supported.timings
    off = settings.model_copy(update={"decide": settings.decide.model_copy(update={"draft_model": ""})})
    plain = Pipeline(off, retriever=retriever, llm=ScriptedLLM("The latest version of Carthage is 1.3.2 [1].")).answer(question)
    assert plain.answer.kind == "answer" and "draft-gate" not in plain.timings


def test_bad_input_gives_one_line_errors(tmp_path: Path, support_folder: Path):
    predictions, decisions = answers(tmp_path, copies=1)
    env = {"LOCAL_RAG_MODELS_DIR": str(tmp_path / "models"), "LOCAL_RAG_SUPPORT__MODEL": str(support_folder)}
    (tmp_path / "models").mkdir()
    assert_clean_error(run("train", "draft-gate", "--answers", str(predictions), cwd=tmp_path, env=env), 2, "needs --decisions")
    assert_clean_error(run("train", "draft-gate", "--answers", str(predictions), "--features", "weak_share,loud",
                           cwd=tmp_path, env=env), 2, "unknown draft features ['loud']")
    few = write_jsonl(tmp_path / "few.jsonl", [json.loads(line) for line in predictions.read_text().splitlines()][:8])
    assert_clean_error(run("train", "draft-gate", "--answers", str(few), "--features", "weak_share", cwd=tmp_path, env=env),
                       2, "at least 5 of each")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({"task_id": "x<::>1", "text": "no predictions here"}) + "\n")
    assert_clean_error(run("train", "draft-gate", "--answers", str(broken), "--features", "weak_share", cwd=tmp_path, env=env),
                       2, "broken.jsonl, line 1: not a prediction record")
    no_support = {**env, "LOCAL_RAG_SUPPORT__MODEL": "missing-support"}
    assert_clean_error(run("train", "draft-gate", "--answers", str(predictions), "--features", "weak_share",
                           cwd=tmp_path, env=no_support), 2, "no trained support model")
    assert not (tmp_path / "models" / "draft-gate").exists()


def test_a_gate_with_an_unknown_feature_is_refused(tmp_path: Path, checker: SupportChecker):
    from local_rag.errors import ModelError

    with pytest.raises(ModelError, match="unknown features"):
        DraftGate(None, {"features": ["weak_share", "vibes"]}, checker)
    assert DraftGate(None, {"features": ["weak_share"], "threshold": 0.3}, checker, threshold=0.7).threshold == 0.7
    hit = Hit("p", 1.0, title="Cats", text=CORPUS[1]["text"])
    gate = DraftGate(type("M", (), {"predict_proba": lambda self, x: np.array([[1 - x[0, 0], x[0, 0]]])})(),
                     {"features": ["weak_share"], "threshold": 0.5}, checker)
    assert gate.check("A cat sleeps twelve to sixteen hours a day.", [hit]) == (False, 0.0)
    assert gate.check("Lions in Kenya rest about 20 hours after a hunt.", [hit]) == (True, 1.0)


def test_a_streamed_draft_the_gate_declines_is_followed_by_the_decline_on_the_server(tmp_path: Path, checker: SupportChecker,
                                                                                    fake_settings, hash_embedder,
                                                                                    corpus_file: Path):
    """A real local server and the OpenAI client: the draft streams, then the decline; the final chunk says decline."""
    from local_rag.index import build_index, open_index
    from local_rag.pipeline import Pipeline
    from local_rag.retrieve import HybridRetriever

    from .test_server import CONV, SlowLLM, client, create_app, running

    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    settings = fake_settings.model_copy(update={"pipeline": fake_settings.pipeline.model_copy(update={"rewrite": False})})
    pipeline = Pipeline(settings, retriever=HybridRetriever(open_index(settings), settings, hash_embedder),
                        llm=SlowLLM("The latest version of Carthage is 1.3.2 [1]."))
    always = type("M", (), {"predict_proba": lambda self, x: np.array([[1 - x[0, 0], x[0, 0]]])})()
    pipeline._gate = DraftGate(always, {"features": ["weak_share"], "threshold": 0.5}, checker)
    with running(create_app(settings, pipeline)) as url:
        chunks = list(client(url).chat.completions.create(model="m", messages=CONV, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text.startswith("The latest version of Carthage") and text.endswith("\n\n" + settings.generate.idk_answer)
    final = chunks[-1].model_extra["local_rag"]
    assert final["kind"] == "decline" and final["decision"]["reason"] == "draft gate"

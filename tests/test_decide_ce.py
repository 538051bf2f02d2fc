"""The decision stage's cross-encoder features: by hand, and with a real tiny cross-encoder trained in the test
(MiniLM weights, a few steps) over a real MiniLM + BM25 index: cached evidence and scores, a decider that reads the
pipeline's scores, scores the passages itself when the pipeline runs no cross-encoder, and answers when its
cross-encoder is missing."""

from __future__ import annotations

import json
import logging
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from local_rag.decide import load_decider
from local_rag.decide.features import CE_FEATURES, NO_CE_FEATURES, ce_row
from local_rag.decide.model import TrainedDecider, save_decider
from local_rag.embed import load_embedder
from local_rag.index import build_index
from local_rag.modelstore.manifest import Manifest
from local_rag.pipeline import Pipeline
from local_rag.records import Conversation, Hit, Turn
from local_rag.train.data import Example as PairExample
from local_rag.train.decider import Thresholds, decider_meta, fit, matrices, with_cross_encoder, with_evidence
from local_rag.train.decider_data import Example

from .conftest import CORPUS, MODELS, make_settings, needs_minilm, write_jsonl
from .llm_fixtures import ScriptedLLM

TRAIN = {
    "ANSWERABLE": ["How long does a cat sleep?", "What is BM25 used for by search engines?", "What is FAISS?",
                   "How does reciprocal rank fusion merge ranked lists?", "Do dogs bark and fetch sticks?",
                   "What do cats hunt?"],
    "UNANSWERABLE": ["What is the capital of Peru?", "Who won the 1998 world cup final?",
                     "How much does a Boeing 747 weigh?", "Which planet has the most moons?"],
    "UNDERSPECIFIED": ["Does this animal sleep a lot?", "Is this library fast?", "Does this pet bark?",
                       "What does this creature eat?"],
}
PAIRS = [
    PairExample(f"t{i}", "x", "lastturn", q, pos, f"p{i}", negs, [f"n{i}a", f"n{i}b"])
    for i, (q, pos, negs) in enumerate([
        ("what do cats eat", "Cats hunt mice and eat fish.", ["BM25 scores documents.", "FAISS searches vectors."]),
        ("what is bm25", "BM25 is a ranking function of term frequency.", ["Cats purr.", "Dogs guard the house."]),
    ] * 4)
]


def examples() -> list[Example]:
    return [Example(f"{gold}{i}", f"{gold}{i}", "fixture", "test", gold, Conversation([Turn("user", q)]))
            for gold, questions in TRAIN.items() for i, q in enumerate(questions)]


def test_cross_encoder_features_by_hand():
    hits = [Hit(f"p{i}", 1.0, scores={"cross-encoder": p}) for i, p in enumerate([0.5, 0.9, 0.1])] + [Hit("x", 0.1)]
    row = ce_row(hits)
    logit9 = math.log(9)  # logit(0.9); logit(0.5) = 0; logit(0.1) = -logit(0.9)
    soft = np.exp([logit9, 0.0, -logit9]) / np.exp([logit9, 0.0, -logit9]).sum()
    assert row["ce_max"] == pytest.approx(logit9, abs=1e-4) and row["ce_gap"] == pytest.approx(logit9, abs=1e-4)
    assert row["ce_top3_mean"] == pytest.approx(0.0, abs=1e-4) and row["ce_above"] == pytest.approx(2 / 10)
    assert row["ce_entropy"] == pytest.approx(float(-(soft * np.log(soft)).sum() / math.log(3)), abs=1e-4)
    assert ce_row([Hit("x", 1.0)]) == dict.fromkeys(CE_FEATURES, 0.0)  # no cross-encoder: all 0
    assert not set(CE_FEATURES) & set(NO_CE_FEATURES)


@pytest.fixture(scope="module")
def ce_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder with MiniLM and a tiny real cross-encoder trained from it (``i24-tiny-ce``)."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("datasets", reason="the train extra is not installed")
    if not (MODELS / "all-MiniLM-L6-v2" / "model.safetensors").exists():
        pytest.skip("all-MiniLM-L6-v2 not imported")
    from local_rag.train.reranker import RerankerTraining, train_reranker

    models = tmp_path_factory.mktemp("ce") / "models"
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", models / "all-MiniLM-L6-v2")
    entry = Manifest.load(MODELS).get("all-MiniLM-L6-v2")
    Manifest(models, {entry.name: entry}).save()
    cfg = RerankerTraining(loss="bce", max_steps=3, batch_size=8, max_length=64, negatives=2, learning_rate=1e-4)
    train_reranker(PAIRS, "all-MiniLM-L6-v2", "i24-tiny-ce", models, cfg, progress=False)
    return models


@needs_minilm
def test_decider_with_cross_encoder_features(ce_models: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture):
    ce = {"backend": "sentence-transformers", "model": "i24-tiny-ce", "device": "cpu", "max_length": 64, "candidates": 6}
    settings = make_settings(tmp_path, models_dir=str(ce_models), reranker=ce,
                             pipeline={"rewrite": False, "cross_encoder": True})
    embedder = load_embedder(settings.embedder, ce_models)
    build_index(settings, write_jsonl(tmp_path / "corpus.jsonl", CORPUS), embedder, progress=False)

    # evidence and cross-encoder scores, cached: a second run retrieves and scores nothing
    sets = {"train": examples()}
    with_evidence(sets, settings, "", "", tmp_path / "work" / "evidence.jsonl")
    record = with_cross_encoder(sets, settings, tmp_path / "work" / "ce.jsonl")
    assert record is not None and record["model"] == "i24-tiny-ce"
    train = sets["train"]
    assert all(len(e.hits) <= 10 and all("cross-encoder" in h.scores for h in e.hits[:6]) for e in train)
    cached = (tmp_path / "work" / "ce.jsonl").read_text(encoding="utf-8")
    again = {"train": examples()}
    with_evidence(again, settings, "", "", tmp_path / "work" / "evidence.jsonl")
    with_cross_encoder(again, settings, tmp_path / "work" / "ce.jsonl")
    assert (tmp_path / "work" / "ce.jsonl").read_text(encoding="utf-8") == cached
    assert [[h.to_json() for h in e.hits] for e in again["train"]] == [[h.to_json() for h in e.hits] for e in train]

    # a decider over every feature, the cross-encoder's included, records them and the cross-encoder
    x, _ = matrices(train, None, list(decider_meta("lr-features", Thresholds(0.5, 0.5), "", {}, record)["features"]))
    meta = decider_meta("lr-features", Thresholds(0.5, 0.5), "", {}, record)
    assert set(CE_FEATURES) <= set(meta["features"]) and meta["cross_encoder"] == record
    folder = save_decider(tmp_path / "decider", fit("lr-features", x, train), meta)
    settings.decide.model = str(folder)

    question = Conversation([Turn("user", "What do cats hunt?")])
    scored = next(e for e in train if e.conversation.last_user_turn == "What do cats hunt?").hits
    with_pipeline = load_decider(settings)
    assert isinstance(with_pipeline, TrainedDecider) and with_pipeline.needs_ce and not with_pipeline.rescore
    expected = with_pipeline.decide(question, scored)

    # no cross-encoder stage: the decider scores the passages itself and decides the same
    alone = load_decider(settings.model_copy(update={"pipeline": settings.pipeline.model_copy(update={"cross_encoder": False})}))
    assert isinstance(alone, TrainedDecider) and alone.rescore
    first = {"train": examples()}
    with_evidence(first, settings, "", "", tmp_path / "work" / "evidence.jsonl")  # the first-stage hits, cached
    bare = next(e for e in first["train"] if e.conversation.last_user_turn == "What do cats hunt?").hits[:10]
    assert not any("cross-encoder" in h.scores for h in bare)
    decided = alone.decide(question, bare)
    assert decided.kind == expected.kind and decided.scores == pytest.approx(expected.scores, abs=1e-4)

    # the whole pipeline with the cross-encoder stage decides by the model
    result = Pipeline(settings, llm=ScriptedLLM("Cats hunt mice [1].")).answer(question)
    assert result.decision is not None and result.decision.reason == "model"

    # its cross-encoder missing: a warning, and every turn is answered
    gone = folder.parent / "gone"
    shutil.copytree(folder, gone)
    meta_gone = json.loads((gone / "decider.json").read_text()) | {"cross_encoder": record | {"model": "i24-no-such-ce"}}
    (gone / "decider.json").write_text(json.dumps(meta_gone), encoding="utf-8")
    settings.decide.model = str(gone)
    with caplog.at_level(logging.WARNING, logger="local_rag.decide"):
        missing = load_decider(settings).decide(question, bare)
    assert missing.kind == "answer" and "missing" in missing.reason and "i24-no-such-ce" in caplog.text

    # a decider trained on a sentence-unit model records the unit; a passage-unit stage on the same model is not
    # taken for it (the decider scores the sentences itself), a sentence-unit stage is
    by_sentence = settings.model_copy(update={"reranker": settings.reranker.model_copy(update={"unit": "sentence"})})
    sentence_sets = {"train": examples()}
    with_evidence(sentence_sets, by_sentence, "", "", tmp_path / "work" / "evidence.jsonl")
    sentence_record = with_cross_encoder(sentence_sets, by_sentence, tmp_path / "work" / "ce.jsonl")
    assert sentence_record is not None and sentence_record["unit"] == "sentence" and "unit" not in record
    meta = decider_meta("lr-features", Thresholds(0.5, 0.5), "", {}, sentence_record)
    x, _ = matrices(sentence_sets["train"], None, list(meta["features"]))
    by_sentence.decide.model = settings.decide.model = str(save_decider(tmp_path / "decider-s", fit("lr-features", x, sentence_sets["train"]), meta))
    passage_stage, sentence_stage = load_decider(settings), load_decider(by_sentence)
    assert isinstance(passage_stage, TrainedDecider) and passage_stage.rescore
    assert isinstance(sentence_stage, TrainedDecider) and not sentence_stage.rescore
    assert passage_stage.decide(question, bare).kind in ("answer", "decline", "clarify")

"""Training our own retrieval specialists: data building on a real index, a tiny real cross-encoder run with the
real MiniLM weights (finite loss, reload through the normal backends, ONNX and torch agree), and bad input."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from local_rag.errors import BadInputError, ModelError
from local_rag.index import build_index, open_index
from local_rag.modelstore.manifest import Manifest
from local_rag.retrieve import HybridRetriever
from local_rag.settings import RerankerConfig
from local_rag.train.data import Example, build_examples, document_of, read_examples, term_overlap, write_examples
from local_rag.train.reranker import RerankerTraining, chosen_negatives, train_reranker

from .conftest import CORPUS, MODELS, needs_minilm, write_jsonl


def test_build_examples_excludes_gold_same_document_and_judged(fake_settings, hash_embedder, tmp_path: Path) -> None:
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    build_index(fake_settings, corpus, embedder=hash_embedder, progress=False)
    retriever = HybridRetriever(open_index(fake_settings, model_checksum=hash_embedder.checksum), fake_settings, hash_embedder)
    passages = {r["_id"]: r["text"] for r in CORPUS}
    tasks = [("c<::>1", "x", {"lastturn": "cats sleep and purr", "own": "how long does a cat sleep"})]
    qrels = {"c<::>1": {"d1-1": 1}}
    search = lambda q: retriever.search(q, top_k=6)  # noqa: E731
    kept = build_examples(tasks, qrels, passages, search, negatives=5, drop_same_document=False)
    dropped = build_examples(tasks, qrels, passages, search, negatives=5, drop_same_document=True)
    assert [e.mode for e in kept] == ["lastturn", "own"] and kept[0].positive_id == "d1-1"
    assert all("d1-1" not in e.negative_ids for e in kept) and "d1-0" in kept[0].negative_ids
    assert all(document_of(n) != "d1" for e in dropped for n in e.negative_ids) and dropped[0].negative_ids
    judged = build_examples(tasks, qrels, passages, search, negatives=5, judge=lambda q, t: "Dogs" in t or "dogs" in t.lower())
    assert all("d2-0" not in e.negative_ids for e in judged)
    path = tmp_path / "ex.jsonl"
    digest = write_examples(kept, path)
    assert len(digest) == 64 and read_examples(path) == kept


def test_empty_or_bad_training_sets_are_refused(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(BadInputError, match="empty"):
        read_examples(tmp_path / "empty.jsonl")
    (tmp_path / "bad.jsonl").write_text('{"q": 1}\n', encoding="utf-8")
    with pytest.raises(BadInputError, match="not a training-examples file"):
        read_examples(tmp_path / "bad.jsonl")
    with pytest.raises(BadInputError, match="empty"):
        train_reranker([], "all-MiniLM-L6-v2", "x", tmp_path)


def _models(tmp_path: Path) -> Path:
    """A models/ folder holding only MiniLM (copied) and its manifest entry."""
    models = tmp_path / "models"
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", models / "all-MiniLM-L6-v2")
    entry = Manifest.load(MODELS).get("all-MiniLM-L6-v2")
    Manifest(models, {entry.name: entry}).save()
    return models


def test_missing_base_model_is_one_line_and_damages_nothing(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "manifest.json").write_text('{"models": []}\n', encoding="utf-8")
    before = (models / "manifest.json").read_bytes()
    ex = [Example("t", "x", "lastturn", "q", "p", "p1", ["n"], ["n1"])]
    with pytest.raises(ModelError, match="base model") as info:
        train_reranker(ex, "no-such-model", "i23-x", models)
    assert "\n" not in str(info.value)
    assert (models / "manifest.json").read_bytes() == before and sorted(p.name for p in models.iterdir()) == ["manifest.json"]


EXAMPLES = [
    Example(f"t{i}", "x", "lastturn", q, pos, f"p{i}", negs, [f"n{i}a", f"n{i}b"])
    for i, (q, pos, negs) in enumerate([
        ("what do cats eat", "Cats hunt mice and eat fish.", ["BM25 scores documents.", "FAISS searches vectors."]),
        ("how does rank fusion work", "Reciprocal rank fusion sums one over k plus rank.", ["Dogs bark.", "Cats purr."]),
        ("which library searches dense vectors", "FAISS is a library for dense vector search.", ["Cats sleep.", "Dogs fetch."]),
        ("what is bm25", "BM25 is a ranking function of term frequency.", ["Cats purr.", "Dogs guard the house."]),
    ] * 6)
]


def test_negatives_skip_the_top_mined_and_add_other_positives_seeded() -> None:
    exs = [Example(f"t{i}", "x", "lastturn", f"q{i}", f"pos{i % 3}", f"p{i % 3}", [f"n{i}{j}" for j in range(4)], [])
           for i in range(6)]
    cfg = RerankerTraining(negatives=2, skip_hard=1, random_negatives=2)
    chosen = chosen_negatives(exs, cfg)
    assert chosen == chosen_negatives(exs, cfg)  # seeded
    for ex, negs in zip(exs, chosen, strict=True):
        assert negs[:2] == ex.negatives[1:3] and len(negs) == 4
        assert all(n.startswith("pos") and n != ex.positive for n in negs[2:])  # never its own gold passage
    assert chosen_negatives(exs, RerankerTraining(negatives=3)) == [ex.negatives[:3] for ex in exs]


def test_term_overlap_flags_negatives_that_share_more_of_the_query_than_the_gold() -> None:
    ex = Example("t", "x", "lastturn", "cats eat mice", "Cats hunt at night.", "p", ["cats eat mice daily", "cats eat"], [])
    assert term_overlap([ex], negatives=2) == {"examples": 1, "gold_overlap": 0.333, "negative_overlap": 0.833,
                                               "gold_beats_all": 0.0}
    assert term_overlap([ex], negatives=3) == {"examples": 0}


@needs_minilm
def test_tiny_real_training_reloads_through_backends_and_onnx_agrees(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("datasets", reason="the train extra is not installed")
    models = _models(tmp_path)
    cfg = RerankerTraining(loss="bce", max_steps=4, batch_size=8, max_length=64, negatives=2, learning_rate=1e-4)
    folder = train_reranker(EXAMPLES, "all-MiniLM-L6-v2", "i23-tiny", models, cfg, {"file": "fixture"}, progress=False)
    record = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    assert record["steps"] == 4 and all(math.isfinite(x) for x in record["loss_log"]) and record["base_model"] == "all-MiniLM-L6-v2"
    manifest = Manifest.load(models)
    entry = manifest.get("i23-tiny")
    assert entry.role == "reranker" and not manifest.verify(entry)
    assert not (models / ".i23-tiny.training").exists()

    from local_rag.rerank import load_reranker
    from local_rag.rerank.onnx import export_cross_encoder_onnx

    torch_ce = load_reranker(RerankerConfig(backend="sentence-transformers", model="i23-tiny", device="cpu", max_length=64), models)
    texts = ["Cats hunt mice and eat fish.", "FAISS is a library for dense vector search.", "Dogs bark."]
    scores = torch_ce.score("what do cats eat", texts)
    assert all(math.isfinite(s) for s in scores)
    export_cross_encoder_onnx(folder, tmp_path / "onnx")
    onnx_ce = load_reranker(RerankerConfig(backend="onnx", model=str(tmp_path / "onnx"), max_length=64), models)
    assert onnx_ce.score("what do cats eat", texts) == pytest.approx(scores, abs=1e-4)
    from local_rag.onnx_export import quantize_int8

    quantize_int8(tmp_path / "onnx", tmp_path / "int8")
    int8_ce = load_reranker(RerankerConfig(backend="onnx", model=str(tmp_path / "int8"), max_length=64), models)
    assert int8_ce.score("what do cats eat", texts) == pytest.approx(scores, abs=0.1)


@needs_minilm
def test_tiny_real_embedder_fine_tune_reloads_as_a_bi_encoder_reranker(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("datasets", reason="the train extra is not installed")
    from local_rag.rerank import load_reranker
    from local_rag.train.embedder import EmbedderTraining, train_embedder

    models = _models(tmp_path)
    cfg = EmbedderTraining(loss="mnrl", max_steps=3, batch_size=4, max_length=48, negatives=1)
    folder = train_embedder(EXAMPLES, "all-MiniLM-L6-v2", "i23-emb-tiny", models, cfg, {"file": "fixture"}, progress=False)
    record = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    assert record["steps"] == 3 and all(math.isfinite(x) for x in record["loss_log"])
    manifest = Manifest.load(models)
    assert manifest.get("i23-emb-tiny").role == "embedder" and not manifest.verify(manifest.get("i23-emb-tiny"))
    bi = load_reranker(RerankerConfig(backend="bi-encoder", model="i23-emb-tiny", device="cpu", max_length=48), models)
    scores = bi.score("what do cats eat", ["Cats hunt mice and eat fish.", "FAISS is a library for dense vector search."])
    assert all(-1.0 <= s <= 1.0 for s in scores) and scores[0] > scores[1]


def test_checkpoints_of_another_run_are_cleared_not_resumed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from local_rag.train.store import resumable

    work = tmp_path / ".m.training"
    run = {"base": "all-MiniLM-L6-v2", "settings": {"loss": "mnrl", "max_steps": 10}, "data": {"sha256": "aa"}}
    assert resumable(work, run) is False and (work / "run.json").exists()
    (work / "checkpoint-5").mkdir()
    assert resumable(work, {**run, "settings": {"loss": "mnrl", "max_steps": 20}}) is True  # trained longer: same run
    with caplog.at_level("WARNING", logger="local_rag.train"):
        assert resumable(work, {**run, "data": {"sha256": "bb"}}) is False
    assert not (work / "checkpoint-5").exists() and "another run" in caplog.text
    legacy = tmp_path / ".old.training"
    (legacy / "checkpoint-1").mkdir(parents=True)
    assert resumable(legacy, run) is True  # a folder from before run.json resumes as it did


@needs_minilm
def test_an_embedder_run_on_other_data_starts_over_instead_of_resuming(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("datasets", reason="the train extra is not installed")
    from local_rag.train.embedder import EmbedderTraining, train_embedder

    models = _models(tmp_path)
    stale = models / ".i23-emb-stale.training"
    (stale / "checkpoint-2").mkdir(parents=True)  # an interrupted run on other data: not a loadable checkpoint
    (stale / "run.json").write_text('{"data": {"sha256": "other"}}', encoding="utf-8")
    cfg = EmbedderTraining(loss="mnrl", max_steps=2, batch_size=4, max_length=48, negatives=1)
    folder = train_embedder(EXAMPLES, "all-MiniLM-L6-v2", "i23-emb-stale", models, cfg, {"sha256": "new"}, progress=False)
    record = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    assert record["resumed"] is False and record["steps"] == 2 and not stale.exists()


@needs_minilm
@pytest.mark.slow
def test_training_resumes_and_other_losses_run(tmp_path: Path) -> None:
    models = _models(tmp_path)
    for loss in ("mnrl", "listnet"):
        cfg = RerankerTraining(loss=loss, max_steps=2, batch_size=4, max_length=48, negatives=2)
        folder = train_reranker(EXAMPLES[:8], "all-MiniLM-L6-v2", f"i23-{loss}", models, cfg, progress=False)
        assert math.isfinite(json.loads((folder / "training.json").read_text())["final_loss"])


def test_missing_trained_reranker_is_skipped_with_a_warning_or_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from local_rag.pipeline import Pipeline

    from .conftest import make_settings

    skip = make_settings(tmp_path, reranker={"model": "i23-not-trained", "fallback": "skip"}, pipeline={"cross_encoder": True})
    with caplog.at_level("WARNING", logger="local_rag.pipeline"):
        assert Pipeline(skip).reranker is None
    assert "continuing without it" in caplog.text
    with pytest.raises(ModelError, match="i23-not-trained"):
        _ = Pipeline(make_settings(tmp_path, reranker={"model": "i23-not-trained", "fallback": "error"})).reranker

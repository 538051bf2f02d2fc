"""The support check after generation: a real small support classifier (MiniLM features, logistic regression) trained
in the test from a handful of pairs; citations moved, unsupported sentences flagged or dropped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from local_rag.decide.support import SupportChecker, cited, load_support, save_support, split_sentences
from local_rag.records import Hit
from local_rag.settings import SupportConfig
from local_rag.train.support import Pair, best_threshold, features, make_model

from .conftest import CORPUS, needs_minilm

PASSAGES = {r["title"] + r["_id"]: f"{r['title']}\n{r['text']}" for r in CORPUS}
CATS, SLEEP, DOGS, BM25, FAISS, FUSION = PASSAGES.values()
PAIRS = [
    Pair("Cats are small carnivorous mammals that purr.", CATS, 1, "a", "gold"),
    Pair("Cats hunt mice.", CATS, 1, "a", "gold"),
    Pair("A cat sleeps twelve to sixteen hours a day.", SLEEP, 1, "b", "gold"),
    Pair("Cats groom their fur often.", SLEEP, 1, "b", "gold"),
    Pair("Dogs bark and guard the house.", DOGS, 1, "c", "gold"),
    Pair("Dogs fetch sticks.", DOGS, 1, "c", "gold"),
    Pair("BM25 scores documents with term frequency and inverse document frequency.", BM25, 1, "d", "gold"),
    Pair("FAISS searches dense vectors with flat, IVF and HNSW indexes.", FAISS, 1, "e", "gold"),
    Pair("Reciprocal rank fusion sums one over k plus the rank.", FUSION, 1, "f", "gold"),
    Pair("Cats are small carnivorous mammals that purr.", DOGS, 0, "a", "other"),
    Pair("Cats hunt mice.", FAISS, 0, "a", "other"),
    Pair("A cat sleeps twelve to sixteen hours a day.", BM25, 0, "b", "other"),
    Pair("A cat sleeps 30 to 40 hours a day.", SLEEP, 0, "b", "numbers"),
    Pair("Dogs bark and guard the house.", CATS, 0, "c", "other"),
    Pair("BM25 scores documents with term frequency and inverse document frequency.", FUSION, 0, "d", "other"),
    Pair("FAISS was released in version 9.1.3 by Carthage.", FAISS, 0, "e", "name"),
    Pair("Reciprocal rank fusion sums one over k plus the rank.", DOGS, 0, "f", "other"),
    Pair("The latest version of Carthage is 1.3.2.", BM25, 0, "g", "other"),
]


@pytest.fixture(scope="module")
def checker(minilm, tmp_path_factory: pytest.TempPathFactory) -> SupportChecker:
    embed = lambda texts: minilm.embed(texts, kind="query")  # noqa: E731
    x, y = features(PAIRS, embed), np.array([p.label for p in PAIRS])
    model = make_model().fit(x, y)
    threshold = best_threshold(model.predict_proba(x)[:, 1], y)
    folder = save_support(tmp_path_factory.mktemp("support") / "support", model, {"threshold": threshold})
    return load_support(folder, embed, SupportConfig(mode="flag"))


def hits(*texts: str) -> list[Hit]:
    return [Hit(f"p{i}", 1.0, title=t.split("\n")[0], text=t.split("\n", 1)[1]) for i, t in enumerate(texts)]


def test_sentences_and_their_citations():
    assert split_sentences("Cats purr [1]. Dogs bark.[2] Fish swim.\n- one item\n") == [
        "Cats purr [1].", "Dogs bark.[2]", "Fish swim.", "- one item"]
    assert cited("A [1, 3] and [2].") == [1, 3, 2]


@needs_minilm
def test_a_citation_moves_to_the_passage_that_supports_the_sentence(checker: SupportChecker):
    text, report = checker.check("Dogs bark and guard the house [1].", hits(CATS, DOGS))
    assert text == "Dogs bark and guard the house [2]." and report.moved == 1 and report.unsupported == 0
    assert report.sentences[0].cited == [1] and report.sentences[0].moved_to == 2


@needs_minilm
def test_unsupported_sentences_are_flagged_or_dropped(checker: SupportChecker):
    answer = "A cat sleeps twelve to sixteen hours a day [1]. The latest version of Carthage is 1.3.2 [1]."
    text, report = checker.check(answer, hits(SLEEP, BM25))
    assert text == answer and report.supported == 1 and report.unsupported == 1  # flag: counted, kept
    drop = SupportChecker(checker.model, checker.meta, checker.embed, SupportConfig(mode="drop"))
    text, report = drop.check(answer, hits(SLEEP, BM25))
    assert text == "A cat sleeps twelve to sixteen hours a day [1]." and report.to_json()["dropped"] == 1


@needs_minilm
def test_the_pipeline_drops_what_no_passage_supports(checker: SupportChecker, fake_settings, hash_embedder, corpus_file: Path):
    from local_rag.index import build_index, open_index
    from local_rag.pipeline import Pipeline
    from local_rag.records import Conversation, Turn
    from local_rag.retrieve import HybridRetriever

    from .llm_fixtures import ScriptedLLM

    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    settings = fake_settings.model_copy(update={
        "pipeline": fake_settings.pipeline.model_copy(update={"rewrite": False}),
        "support": SupportConfig(mode="drop"), "decide": fake_settings.decide.model_copy(update={"enabled": False})})
    pipeline = Pipeline(settings, retriever=HybridRetriever(open_index(settings), settings, hash_embedder),
                        llm=ScriptedLLM("The latest version of Carthage is 1.3.2 [1]."))
    pipeline._support = SupportChecker(checker.model, checker.meta, checker.embed, settings.support)
    result = pipeline.answer(Conversation([Turn("user", "how long do cats sleep?")]))
    assert result.answer.kind == "decline" and result.support["dropped"] == 1  # nothing left: the IDK sentence
    assert "support" in result.timings and result.to_json()["support"]["unsupported"] == 1

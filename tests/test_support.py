"""The support check after generation: a real small support classifier (MiniLM features, logistic regression) trained
in the test from a handful of pairs; citations moved, unsupported sentences flagged or dropped."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from local_rag.decide.support import (
    PAIR_FEATURES,
    SupportChecker,
    cited,
    load_support,
    passage_texts,
    save_support,
    split_sentences,
)
from local_rag.records import Conversation, Hit, Turn
from local_rag.settings import SupportConfig
from local_rag.train.support import (
    ContextTexts,
    Pair,
    Tally,
    answer_figures,
    best_threshold,
    build_pairs,
    features,
    labelled_figures,
    make_model,
    nearest_other,
    pick,
    split_of,
    variant_features,
)

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


@needs_minilm
def test_a_streamed_draft_the_check_cuts_is_followed_by_what_it_removed(checker: SupportChecker, fake_settings,
                                                                         hash_embedder, corpus_file: Path):
    """A real local server and the OpenAI client, support mode drop: the whole draft streams (the check runs after
    generation), then a note names the sentence removed; the final chunk carries the checked answer. The chat and
    `ask` get the same note and the checked text (`checked_draft`)."""
    from local_rag.cli.ask import checked_draft
    from local_rag.index import build_index, open_index
    from local_rag.pipeline import Pipeline
    from local_rag.retrieve import HybridRetriever

    from .test_server import CONV, SlowLLM, client, create_app, running

    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    settings = fake_settings.model_copy(update={
        "pipeline": fake_settings.pipeline.model_copy(update={"rewrite": False}),
        "support": SupportConfig(mode="drop"), "decide": fake_settings.decide.model_copy(update={"enabled": False})})
    draft = "A cat sleeps twelve to sixteen hours a day [1]. The latest version of Carthage is 1.3.2 [1]."
    pipeline = Pipeline(settings, retriever=HybridRetriever(open_index(settings), settings, hash_embedder),
                        llm=SlowLLM(draft))
    pipeline._support = SupportChecker(checker.model, checker.meta, checker.embed, settings.support)
    with running(create_app(settings, pipeline)) as url:
        chunks = list(client(url).chat.completions.create(model="m", messages=CONV, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    note = '(checked: removed 1 sentence the passages do not support ("The latest version of Carthage is 1.3.2 [1]."))'
    assert text.startswith("A cat sleeps twelve") and text.endswith("\n\n" + note)
    final = chunks[-1].model_extra["local_rag"]
    assert final["kind"] == "answer" and final["answer"].startswith("A cat sleeps") and "Carthage" not in final["answer"]
    assert final["support"]["dropped"] == 1
    result = pipeline.answer(Conversation([Turn("user", "how long do cats sleep?")]))
    assert checked_draft(result) == (False, note[1:-1])  # chat: the note, then the checked answer on its own line


def task(conversation: str, turn: int, title: str, passage: str, answer: str, doc: str) -> dict:
    return {"task_id": f"{conversation}<::>{turn}", "conversation_id": conversation, "answerability": "ANSWERABLE",
            "Collection": "mt-rag-clapnq-elser-512-100-20240503", "targets": [{"text": answer}],
            "contexts": [{"document_id": doc, "title": title, "text": passage}]}


def test_pairs_have_a_gold_and_each_kind_of_negative():
    tasks = [
        task("a", 1, "Cats", "Cats sleep 16 hours a day in Egypt and hunt mice.", "Cats sleep 16 hours a day in Egypt.", "d1"),
        task("b", 1, "Lions", "Lions sleep 20 hours a day in Kenya and hunt zebras.", "Lions hunt zebras at night.", "d2"),
        task("c", 1, "Dogs", "Dogs bark at strangers and fetch sticks.", "Dogs bark at strangers.", "d3"),
    ]
    pairs = [p for p in build_pairs(tasks, {"a", "b", "c"}) if p.group == "a"]
    kinds = {p.kind: p for p in pairs}
    assert set(kinds) == {"gold", "other", "near", "numbers", "name"}
    assert kinds["gold"].label == 1 and all(p.label == 0 for p in pairs if p.kind != "gold")
    assert kinds["near"].passage.startswith("Lions")  # shares 'sleep', 'hour', 'day' with the sentence; Dogs shares none
    assert "16" not in kinds["numbers"].sentence and "Egypt" not in kinds["name"].sentence


def test_training_pairs_read_a_passage_as_the_check_does_with_or_without_a_title():
    tasks = [task("a", 1, "", "Cats sleep 16 hours a day in Egypt.", "Cats sleep 16 hours a day.", "d1"),
             task("b", 1, "Lions", "Lions hunt zebras at night.", "Lions hunt zebras.", "d2")]
    gold = {p.group: p.passage for p in build_pairs(tasks, {"a", "b"}) if p.kind == "gold"}
    assert [gold["a"], gold["b"]] == passage_texts([Hit("d1", 0.0, title="", text="Cats sleep 16 hours a day in Egypt."),
                                                    Hit("d2", 0.0, title="Lions", text="Lions hunt zebras at night.")])


def test_the_nearest_other_passage_is_a_hard_negative_not_a_paraphrase():
    said = {"cat", "sleep", "hour", "day", "egypt"}
    candidates = [("cats", "same title", {"cat", "sleep"}), ("lions", "near", {"sleep", "hour", "day", "lion"}),
                  ("felines", "paraphrase", {"cat", "sleep", "hour", "day", "egypt"}), ("dogs", "far", {"dog"})]
    assert nearest_other(said, {"cats"}, candidates) == "near"  # the paraphrase (share 1.0 >= 0.8) may support it
    assert nearest_other(said, set(), [("dogs", "far", {"dog"})]) is None


def test_answer_tallies_by_hand():
    tally = Tally(answers=2, sentences=10, cited_sentences=6, citations=8, citations_supported=4, supported=6, moved=2,
                  moved_citations=3, flagged=2, flagged_citations=1)
    f = tally.figures()
    assert (f["supported_before"], f["supported_after_flag"], f["kept_after_drop"]) == (0.6, 0.8, 0.8)
    # after the move: 8 - 3 + 2 = 7 citations, 4 + 2 = 6 supported; after the drop one fewer
    assert (f["citation_precision_before"], f["citation_precision_after_flag"], f["citation_precision_after_drop"]) == (
        0.5, round(6 / 7, 3), 1.0)
    assert split_of("t1<::>2", {"train": {"t0"}, "test": {"t1"}}) == "test" and split_of("x<::>1", {"test": {"t1"}}) == "other"


@needs_minilm
def test_figures_of_committed_answers(checker: SupportChecker, tmp_path: Path):
    from local_rag.evaluation.generation.checkpoint import sha256

    corpus = {"d1": {"title": "Cats", "text": CATS.split("\n", 1)[1]}, "d2": {"title": "Dogs", "text": DOGS.split("\n", 1)[1]}}
    contexts = [{"document_id": d, "text_sha256": sha256(corpus[d]["text"])} for d in ("d1", "d2")]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in [
        {"task_id": "t1<::>1", "text": "Dogs bark and guard the house [1]. Cats hunt mice [1].",
         "prediction": {"kind": "answer"}, "contexts": contexts, "metrics": {"RL_F": [0.5]}},
        {"task_id": "t2<::>1", "text": "The latest version of Carthage is 1.3.2 [2].", "prediction": {"kind": "answer"},
         "contexts": contexts},
        {"task_id": "t2<::>2", "text": "I don't know.", "prediction": {"kind": "decline"}, "contexts": contexts},
    ]), encoding="utf-8")
    figures = answer_figures(checker, answers, ContextTexts(corpus, None), {"test": {"t1"}, "train": {"t2"}})
    test, train = figures["by_split"]["test"], figures["by_split"]["train"]
    assert (test["answers"], test["sentences"], test["moved"], test["flagged"]) == (1, 2, 1, 0)
    assert (test["citation_precision_before"], test["citation_precision_after_flag"]) == (0.5, 1.0)
    assert (train["answers"], train["flagged"], train["emptied"], train["citation_precision_after_drop"]) == (1, 1, 1, 0.0)
    assert figures["latency"]["n"] == 2 and figures["rl_f_spearman"]["test"]["n"] == 1

    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"answers": str(answers), "task_id": t, "sentence_index": i, "cited": c,
                                          "supported": y}) + "\n"
                              for t, i, c, y in [("t1<::>1", 0, 2, 1), ("t1<::>1", 0, 1, 0), ("t1<::>1", 1, 1, 1),
                                                 ("t2<::>1", 0, 2, 0)]), encoding="utf-8")
    by_hand = labelled_figures(checker, labels, ContextTexts(corpus, None))
    assert (by_hand["n"], by_hand["supported_by_hand"], by_hand["auc"], by_hand["accuracy"]) == (4, 0.5, 1.0, 1.0)


def test_lexical_variant_needs_no_embedder_and_the_cheaper_variant_wins_a_tie(tmp_path: Path):
    x, y = features(PAIRS, None), np.array([p.label for p in PAIRS])
    assert not x[:, :2].any()  # no embedder: the cosines are 0
    cols = [PAIR_FEATURES.index(f) for f in variant_features("lr-lexical")]
    assert set(variant_features("gbm-lexical")) == set(PAIR_FEATURES) - {"cosine", "best_sentence_cosine"}
    model = make_model("lr-lexical").fit(x[:, cols], y)
    folder = save_support(tmp_path / "lexical", model, {"features": variant_features("lr-lexical"), "threshold": 0.5})
    checker = load_support(folder, lambda texts: 1 / 0, SupportConfig(mode="flag"))  # never called
    assert checker.embed is None
    _, report = checker.check("A cat sleeps twelve to sixteen hours a day [1].", hits(SLEEP, BM25))
    assert report.sentences[0].p_cited is not None and report.supported == 1
    measured = {"lr": {"cv_auc": 0.95}, "gbm": {"cv_auc": 0.96}, "lr-lexical": {"cv_auc": 0.951}, "gbm-lexical": {"cv_auc": 0.94}}
    assert pick(measured) == "lr-lexical" and pick({"lr": {"cv_auc": 0.95}, "lr-lexical": {"cv_auc": 0.9}}) == "lr"
    # measured on hand-labelled train answers: the best there wins, a tie goes to the lexical variant
    hand = {v: {**m, "hand_balanced_accuracy": b} for (v, m), b in zip(measured.items(), (0.80, 0.70, 0.75, 0.70), strict=True)}
    assert pick(hand) == "lr"
    hand["lr-lexical"]["hand_balanced_accuracy"] = 0.8001
    assert pick(hand) == "lr-lexical"

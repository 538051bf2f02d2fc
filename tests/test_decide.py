"""The decision stage (answer / decline / clarify / chitchat): a real small model trained in the test on a handful
of turns over a real index, clarifying questions, the chat round trip, and bad input."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import numpy as np
import pytest

from local_rag.decide import AlwaysAnswer, load_decider, reply_text
from local_rag.decide.clarify import clarifying_question, options, plural, thing_asked
from local_rag.decide.features import AMBIGUITY_FEATURES, FeatureExtractor, ambiguity_row
from local_rag.decide.model import read_decider, save_decider
from local_rag.decide.turns import chitchat_kind, dangling_references, resolve_clarification
from local_rag.errors import BadInputError
from local_rag.index import build_index, open_index
from local_rag.modelstore.manifest import record_folder
from local_rag.pipeline import Pipeline
from local_rag.records import Conversation, Hit, Turn
from local_rag.retrieve import HybridRetriever
from local_rag.settings import DecideConfig, Settings
from local_rag.train.decider import Thresholds, columns, decider_meta, fit
from local_rag.train.decider_data import Example, attach_evidence, underspecify

from .conftest import HashEmbedder
from .llm_fixtures import ScriptedLLM

TRAIN = {
    "ANSWERABLE": ["How long does a cat sleep?", "What is BM25 used for by search engines?", "What is FAISS?",
                   "How does reciprocal rank fusion merge ranked lists?", "Do dogs bark and fetch sticks?",
                   "What do cats hunt?", "Which indexes does FAISS offer?", "Why are dogs loyal companions?"],
    "UNANSWERABLE": ["What is the capital of Peru?", "Who won the 1998 world cup final?",
                     "How much does a Boeing 747 weigh?", "When was the printing press invented?",
                     "Which planet has the most moons?", "Who wrote War and Peace?"],
    "UNDERSPECIFIED": ["Does this animal sleep a lot?", "Is this library fast?", "How does this function score things?",
                       "Does this pet bark?", "What does this creature eat?", "How old can this mammal get?"],
}


def examples_of(table: dict[str, list[str]], prefix: str) -> list[Example]:
    return [Example(f"{prefix}{gold}{i}", f"{prefix}{gold}{i}", "fixture", "test", gold, Conversation([Turn("user", q)]))
            for gold, questions in table.items() for i, q in enumerate(questions)]


@pytest.fixture
def stack(fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path, tmp_path: Path):
    """A real index, and a real decider (logistic regression over the named features) trained on `TRAIN`, saved
    in a models folder with its manifest entry."""
    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    retriever = HybridRetriever(open_index(fake_settings), fake_settings, hash_embedder)
    settings = fake_settings.model_copy(update={"models_dir": tmp_path / "models",
                                                "pipeline": fake_settings.pipeline.model_copy(update={"rewrite": False})})
    train = examples_of(TRAIN, "t")
    attach_evidence(train, settings, lambda e: "test", progress=False, retriever=retriever)
    x = FeatureExtractor(None).vectors([e.conversation for e in train], [e.hits for e in train])
    model = fit("lr-features", x, train)
    folder = save_decider(tmp_path / "models" / "decider", model,
                          decider_meta("lr-features", Thresholds(0.5, 0.5), "", {}))
    record_folder(folder, tmp_path / "models", "decider", "test decider", "sklearn")
    return settings, retriever


@pytest.mark.parametrize(("question", "kind"), [
    ("How many hours a day does a cat sleep?", "answer"),
    ("What does FAISS do with dense vectors?", "answer"),
    ("Who painted the Mona Lisa?", "decline"),
    ("What is the tallest mountain in Africa?", "decline"),
    ("Does this animal purr?", "clarify"),
    ("Thank you so much!", "chitchat"),
])
def test_each_class_on_fixtures(stack, question: str, kind: str):
    settings, retriever = stack
    llm = ScriptedLLM("Cats sleep twelve to sixteen hours a day [1].")
    result = Pipeline(settings, retriever=retriever, llm=llm).answer(Conversation([Turn("user", question)]))
    assert result.decision is not None and result.decision.kind == kind and result.answer.kind == kind
    assert result.to_json()["kind"] == kind and result.to_json()["decision"]["kind"] == kind
    assert (len(result.llm_calls) == 1) == (kind == "answer")  # only answers call the generator
    assert llm.calls == []  # the turn took its calls out of the model's log
    if kind == "chitchat":
        assert result.queries == [] and result.retrieved == []  # no retrieval
    if kind == "decline":
        assert result.answer.text == settings.generate.idk_answer


def test_chat_clarify_then_the_user_picks_then_answer(stack):
    settings, retriever = stack
    seen: list[str] = []

    def reply(messages, schema):  # type: ignore[no-untyped-def]
        seen.append(messages[-1]["content"])
        return "Cats sleep twelve to sixteen hours a day [1]."

    pipeline = Pipeline(settings, retriever=retriever, llm=ScriptedLLM(reply))
    conversation = Conversation([Turn("user", "How long does this animal sleep?")])
    first = pipeline.answer(conversation)
    assert first.answer.kind == "clarify" and "Cats" in first.decision.options
    assert "Which one are you referring to?" in first.answer.text and "Cats" in first.answer.text
    conversation.turns += [Turn("agent", first.answer.text), Turn("user", "Cats")]
    second = pipeline.answer(conversation)
    assert second.answer.kind == "answer" and second.decision.kind == "answer"
    assert second.queries[0].text == "How long does this animal sleep? (Cats)"  # the reply resolved the question
    assert second.passages[0].title == "Cats" and "How long does this animal sleep? (Cats)" in seen[-1]


def test_bad_input_gives_a_clear_error_or_a_sane_decision(stack):
    settings, retriever = stack
    decider = load_decider(settings)
    empty = decider.decide(Conversation([Turn("user", "What is BM25?")]), [])
    assert empty.kind == "decline" and empty.reason == "no passages"
    with pytest.raises(BadInputError, match="must end with a user turn"):
        decider.decide(Conversation([Turn("user", "hi there, what is bm25?"), Turn("agent", "A ranking function.")]), [])
    with pytest.raises(BadInputError):
        decider.decide(Conversation([]), [])
    long_turn = "Tell me about cats and their sleep. " * 280  # ~10,000 characters
    assert len(long_turn) >= 10_000
    decision = Pipeline(settings, retriever=retriever, llm=ScriptedLLM("Cats sleep [1].")).answer(
        Conversation([Turn("user", long_turn)])).decision
    assert decision is not None and decision.kind in ("answer", "decline", "clarify") and 0 <= decision.confidence <= 1


def test_without_a_trained_decider_every_turn_is_answered(fake_settings: Settings, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture):
    """No decider ships, so the default name's absence is a debug line (it printed a warning in every `ask` and in
    the demo); a model named in the settings and missing is a warning."""
    settings = fake_settings.model_copy(update={"models_dir": tmp_path / "empty"})
    with caplog.at_level(logging.WARNING, logger="local_rag.decide"):
        decider = load_decider(settings)
        assert "no trained decider" not in caplog.text
        named = settings.model_copy(update={"decide": DecideConfig(model="my-decider")})
        assert isinstance(load_decider(named), AlwaysAnswer)
    assert "no trained decider" in caplog.text and "my-decider" in caplog.text
    with caplog.at_level(logging.DEBUG, logger="local_rag.decide"):
        load_decider(settings)
    assert "unknown model 'decider'" in caplog.text
    assert isinstance(decider, AlwaysAnswer)
    assert decider.decide(Conversation([Turn("user", "Does this animal purr?")]), []).kind == "answer"
    # small talk needs no model: its reply comes by rules, before retrieval (the pipeline then calls no LLM)
    _, early = decider.before_retrieval(Conversation([Turn("user", "What is a cat?"), Turn("agent", "A pet."),
                                                      Turn("user", "ok bye")]))
    assert early is not None and early.kind == "chitchat" and early.reason == "chitchat pattern: goodbye"
    off = load_decider(settings.model_copy(update={"decide": settings.decide.model_copy(update={"chitchat": False})}))
    assert off.before_retrieval(Conversation([Turn("user", "thanks!")]))[1] is None


def test_a_saved_decider_reads_back_the_same(stack, tmp_path: Path):
    settings, _ = stack
    decider = read_decider(tmp_path / "models" / "decider", settings.decide)
    hits = [Hit("d1-0", 0.03, title="Cats", text="Cats purr.", scores={"bm25:lastturn": 3.0, "dense:lastturn": 0.6})]
    a = decider.decide(Conversation([Turn("user", "Do cats purr?")]), hits)
    b = load_decider(settings).decide(Conversation([Turn("user", "Do cats purr?")]), hits)
    assert a.scores == b.scores and abs(sum(a.scores.values()) - 1) < 1e-6


HIT = {t: Hit(t.lower(), 1.0, title=t, text=f"{t} is one of them. More text follows.") for t in
       ["Atlantic Ocean", "Pacific Ocean", "Indian Ocean", "Arctic Ocean", "Southern Ocean", "Baltic Sea"]}


def test_clarifying_questions_follow_the_three_patterns_of_mtrag_un():
    two = clarifying_question("Is this ocean cold?", [HIT["Atlantic Ocean"], HIT["Pacific Ocean"], HIT["Atlantic Ocean"]])
    assert two.startswith("There are several oceans you could mean, such as Atlantic Ocean (Atlantic Ocean is one of them)")
    assert two.endswith("Which one are you referring to?") and two.count("(") == 2
    five = clarifying_question("Is this ocean cold?", [HIT[t] for t in list(HIT)[:5]])
    assert five == ("There are many oceans you could be talking about, like Atlantic Ocean, Pacific Ocean, Indian Ocean, "
                    "Arctic Ocean, or Southern Ocean. Which one are you referring to?")
    assert clarifying_question("Is this ocean cold?", [HIT["Atlantic Ocean"]]) == "Which ocean are you referring to?"
    assert clarifying_question("Is this ocean cold?", list(HIT.values()), max_options=4) == "Which ocean are you referring to?"
    assert clarifying_question("Is it cold?", []).startswith("Could you tell me which one you mean")


def test_clarifying_question_on_a_real_govt_turn_reads_plainly():
    """MTRAG test task e52ab8d5...<::>1: the plural head takes no second word, site names leave the titles, and a
    chunk that starts mid-sentence gives its next sentence."""
    hits = [Hit("a", 1.0, title="West Nile Virus | Sierra County, CA - Official Website",
                text="than 1,900 people have died. West Nile virus is spread by mosquitoes."),
            Hit("b", 0.9, title="Measles Cases and Outbreaks | Measles (Rubeola) | CDC",
                text="In 2021, 49 measles cases were reported. Some states report more."),
            Hit("c", 0.8, title="Plague", text="Plague is a severe disease.")]
    question = "Why do some states report more West Nile cases than others, and where are these states located?"
    assert thing_asked(question, hits) == "states"
    assert clarifying_question(question, hits) == (
        "There are several states you could mean, such as West Nile Virus (West Nile virus is spread by mosquitoes), "
        "Measles Cases and Outbreaks (in 2021, 49 measles cases were reported), or Plague (Plague is a severe disease). "
        "Which one are you referring to?")
    assert [plural(w) for w in ("ocean", "company", "states", "credit card", "bus")] == [
        "oceans", "companies", "states", "credit cards", "buses"]


def test_the_thing_asked_after_a_name_or_named_by_the_titles():
    seasons = [Hit("a", 1, title="Doctor Who (season 3)", text="It aired in 2007."),
               Hit("b", 1, title="Doctor Who (season 4)", text="It aired in 2008.")]
    assert thing_asked("When did the Doctor Who season end?", seasons) == "season"
    leaders = [Hit("a", 1, title="Prime Minister of Canada", text="x"), Hit("b", 1, title="Prime Minister of India", text="y")]
    question = "How has the power of the Prime Minister changed since 1950?"
    assert thing_asked(question, leaders) == "Prime Minister"
    assert clarifying_question(question, leaders).startswith("There are several Prime Ministers you could mean")
    assert thing_asked(question, []) == "power"  # no title names a thing: the first phrase's


def test_turn_rules():
    assert dangling_references(Conversation([Turn("user", "Tell me about oceans"), Turn("agent", "Sure."),
                                             Turn("user", "Is this ocean deep?")])) == []
    assert dangling_references(Conversation([Turn("user", "Is this ocean deep?")])) == ["this ocean"]
    assert thing_asked("What are the rewards of this credit card?", [Hit("x", 1, text="A credit card earns points.")]) == "credit card"
    assert [chitchat_kind(t) for t in ("thanks!", "Hello", "ok, bye", "What is a cat?", "thanks, but what about dogs?")] == [
        "thanks", "greeting", "goodbye", None, None]
    assert [chitchat_kind(t) for t in ("hi, can you help me", "all right, see ya", "omg. ", "hi, can you help me find a flat?",
                                       "ok, diversified is good.")] == ["greeting", "goodbye", "ack", None, None]
    conv = Conversation([Turn("user", "Is this ocean deep?"), Turn("agent", "Which ocean are you referring to?"),
                         Turn("user", "the Pacific")])
    assert resolve_clarification(conv).last_user_turn == "Is this ocean deep? (the Pacific)"
    assert options([HIT["Atlantic Ocean"], Hit("n", 1.0, title="Atlantic Ocean - Wikipedia")]) == ["Atlantic Ocean"]


def test_reply_text_refuses_an_answer_decision(fake_settings: Settings):
    from local_rag.records import Decision

    with pytest.raises(ValueError, match="generator"):
        reply_text(Decision("answer"), Conversation([Turn("user", "x")]), [], fake_settings)


def test_ambiguity_features_by_hand():
    hits = [Hit("a", 1.0, title="Hurricane Isaac (2012)", text="x", scores={"dense:q": 0.60}),
            Hit("b", 0.9, title="Hurricane Isaac (2012)", text="y", scores={"dense:q": 0.59}),
            Hit("c", 0.8, title="Hurricane Gloria", text="z", scores={"dense:q": 0.55}),
            Hit("d", 0.7, title=" Hurricane  Katrina ", text="w", scores={"dense:q": 0.50})]
    vague = ambiguity_row(Conversation([Turn("user", "What was done about the hurricane's impact?")]), hits)
    assert vague == pytest.approx({
        "titles_top10": 0.3, "title_named_top1": 1 / 3, "titles_named_top5": (1 / 3 + 1 / 2 + 1 / 2) / 3,
        "title_family": 0.3, "family_unnamed": 0.3, "dense_title_gap": 0.05, "definite_new": 1.0, "proper_names": 0.0})
    named = ambiguity_row(Conversation([Turn("user", "Where did it land?"), Turn("agent", "Hurricane Isaac hit Louisiana."),
                                        Turn("user", "What did Louisiana do about the hurricane in 2012?")]), hits)
    assert named["title_named_top1"] == 1.0 and named["family_unnamed"] == 0.2 and named["definite_new"] == 0.0
    assert named["proper_names"] == 1.0  # Louisiana (the first word does not count)
    assert ambiguity_row(Conversation([Turn("user", "Is it?")]), []) == dict.fromkeys(AMBIGUITY_FEATURES, 0.0)
    assert set(AMBIGUITY_FEATURES) <= set(FeatureExtractor().names)


def test_base_variants_leave_the_ambiguity_features_out():
    names = list(FeatureExtractor().names)
    x = np.arange(2 * len(names), dtype=float).reshape(2, len(names))
    base = columns("lr-features-base", x, None, names)
    assert base.shape[1] == len(names) - len(AMBIGUITY_FEATURES) and columns("lr-features", x, None, names).shape == x.shape
    meta = decider_meta("gbm-features-base", Thresholds(0.5, 0.5), "", {})
    assert not set(meta["features"]) & set(AMBIGUITY_FEATURES) and len(meta["features"]) == base.shape[1]


def test_synthetic_turns_with_the_article():
    made = underspecify("When did Hurricane Katrina reach New Orleans?", "clapnq", random.Random(0), "the")
    assert made is not None and made[0].startswith("When did the ") and "Katrina" not in made[0]

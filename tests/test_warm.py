"""The next turn's prompts prefilled between turns (`local_rag.llm.warm`, issue 26): what is warmed, that the answer is
the same as without it, and that a warm-up stops when the next turn starts."""

from __future__ import annotations

import threading
import time

import pytest

from local_rag.llm.warm import MARK, Warmed, Warmer, next_prompts
from local_rag.pipeline import Pipeline
from local_rag.records import Conversation, Turn
from local_rag.retrieve import HybridRetriever
from local_rag.settings import Settings

from .llm_fixtures import SMOLLM, ScriptedLLM, load_real


def reply(messages: list, schema: dict | None) -> str:
    return '{"query": "how long do cats sleep"}' if schema is not None else "Cats sleep 12 to 16 hours a day [1]."


FIRST = Conversation([Turn("user", "tell me about cats"), Turn("agent", "Cats are small carnivores that purr.")])


def test_next_prompts_hold_the_conversation_so_far_before_the_mark(indexed: tuple[Settings, HybridRetriever]) -> None:
    settings, retriever = indexed
    settings = settings.model_copy(deep=True)
    settings.generate.prompt = "answer_history_first"  # the default CPU profile's: the conversation before the passages
    pipeline = Pipeline(settings, retriever=retriever, llm=ScriptedLLM(reply))
    prompts = next_prompts(FIRST, pipeline.llm, settings, pipeline.generator)
    assert [stage for stage, _ in prompts] == ["rewrite", "generate"]
    for _, messages in prompts:
        text = "\n".join(m["content"] for m in messages)
        head = text[: text.index(MARK)]
        assert "Cats are small carnivores that purr." in head and messages[0]["role"] == "system"
    # the first turn of a chat is its own rewrite: only the answer's prompt (system text, example) is warmed
    assert [s for s, _ in next_prompts(Conversation([]), pipeline.llm, settings, pipeline.generator)] == ["generate"]


def test_warm_is_off_by_setting_and_a_backend_without_a_cache_warms_nothing(indexed: tuple[Settings, HybridRetriever]) -> None:
    settings, retriever = indexed
    pipeline = Pipeline(settings, retriever=retriever, llm=ScriptedLLM(reply))
    warmed = pipeline.warm(FIRST)  # the first warm-up also loads the stages (a chat's start)
    assert [(w.stage, w.tokens) for w in warmed] == [("load", 0), ("rewrite", 0), ("generate", 0)]
    assert [w.stage for w in pipeline.warm(FIRST)] == ["rewrite", "generate"]
    result = pipeline.answer(Conversation([*FIRST.turns, Turn("user", "how long do they sleep?")]))
    assert [s["stage"] for s in result.trace if s["type"] == "warm"] == ["rewrite", "generate"]
    off = settings.model_copy(deep=True)
    off.pipeline.warm = False
    pipeline = Pipeline(off, retriever=retriever, llm=ScriptedLLM(reply))
    assert pipeline.warm(FIRST) == []
    pipeline.warm_later(FIRST)
    assert pipeline.stop_warming() == []


def test_a_warm_up_stops_when_asked_and_its_failure_is_only_logged(caplog: pytest.LogCaptureFixture) -> None:
    started = threading.Event()

    def work(cancelled) -> list[Warmed]:  # a prefill that runs until cancelled, one chunk at a time
        started.set()
        chunks = 0
        while not cancelled():
            time.sleep(0.01)
            chunks += 1
        return [Warmed("generate", chunks, 0.0)]

    warmer = Warmer(work)
    warmer.start()
    assert started.wait(5) and warmer.running
    began = time.perf_counter()
    done = warmer.stop()
    assert time.perf_counter() - began < 1.0 and not warmer.running and done[0].stage == "generate"

    def broken(cancelled) -> list[Warmed]:
        raise RuntimeError("no model")

    failing = Warmer(broken)
    failing.start()
    assert failing.stop() == [] and "no model" in caplog.text


def test_the_pipeline_stops_a_warm_up_before_its_turn(indexed: tuple[Settings, HybridRetriever]) -> None:
    settings, retriever = indexed
    llm = ScriptedLLM(reply)
    pipeline = Pipeline(settings, retriever=retriever, llm=llm)
    in_use = threading.Lock()
    overlaps = []

    def prefill(messages, *, stage, upto="", cancelled=None) -> int:  # a slow warm-up that holds the model
        with in_use:
            while cancelled is not None and not cancelled():
                time.sleep(0.01)
        return 7

    def complete(messages, **kwargs):
        overlaps.append(in_use.locked())
        return ScriptedLLM.complete(llm, messages, **kwargs)

    llm.prefill = prefill  # type: ignore[method-assign]
    llm.complete = complete  # type: ignore[method-assign]
    pipeline.warm_later(FIRST)
    time.sleep(0.05)
    result = pipeline.answer(Conversation([*FIRST.turns, Turn("user", "how long do they sleep?")]))
    assert result.answer.text and overlaps and not any(overlaps)  # no LLM call while the warm-up held the model


# -- the real SmolLM2 on llama.cpp -------------------------------------------------------------------------------

ONE_THREAD = {"n_threads": 1, "n_threads_batch": 1}  # see tests/test_speed_levers.py: near-ties of the 135M model


def test_warming_the_next_turn_reuses_its_prefix_and_gives_the_same_answer(
        indexed: tuple[Settings, HybridRetriever]) -> None:
    settings, retriever = indexed
    settings = settings.model_copy(deep=True)
    settings.generate.max_tokens = 32
    settings.generate.prompt = "answer_history_first"
    runs = {}
    for warm in (True, False):
        llm = load_real(SMOLLM, n_ctx=2048, temperature=0.0, seed=0, prefix_cache=4, **ONE_THREAD)
        pipeline = Pipeline(settings, retriever=retriever, llm=llm)
        pipeline.warm(Conversation([])) if warm else None
        conversation = Conversation([Turn("user", "How long do cats sleep?")])
        first = pipeline.answer(conversation)
        conversation.turns.append(Turn("agent", first.answer.text))
        warmed = pipeline.warm(conversation) if warm else []
        conversation.turns.append(Turn("user", "And dogs?"))
        second = pipeline.answer(conversation)
        runs[warm] = (first, warmed, second)
    (first, warmed, second), (cold_first, _, cold_second) = runs[True], runs[False]
    assert first.answer.raw == cold_first.answer.raw and second.answer.raw == cold_second.answer.raw
    assert [q.text for q in second.queries] == [q.text for q in cold_second.queries]
    assert [w.stage for w in warmed] == ["rewrite", "generate"] and all(w.tokens > 50 for w in warmed)
    cached = {c.stage: c.cached_tokens for c in second.llm_calls}
    cold_cached = {c.stage: c.cached_tokens for c in cold_second.llm_calls}
    for w in warmed:  # the turn reused what was warmed (the warm-up leaves out the cut text's last token)
        assert cached[w.stage] >= w.tokens - 1 > cold_cached[w.stage]
    assert first.llm_calls[0].cached_tokens > cold_first.llm_calls[0].cached_tokens == 0  # the chat's first answer
    steps = [s for s in second.trace if s["type"] == "warm"]
    assert [(s["stage"], s["tokens"]) for s in steps] == [(w.stage, w.tokens) for w in warmed]
    assert not [s for s in cold_second.trace if s["type"] == "warm"]


def test_the_ablation_summary_reports_the_warm_up_between_turns() -> None:
    from local_rag.bench.levers import summarize

    def row(warm: list[dict]) -> dict:
        return {"wall_s": 10.0, "ttft_s": 5.0, "status_s": 1.0, "calls": [], "rouge_l": None, "answerability": "ANSWERABLE",
                "kind": "answer", **({"warm": warm} if warm else {})}

    warmed = [{"stage": "rewrite", "tokens": 100, "seconds": 1.0}, {"stage": "generate", "tokens": 300, "seconds": 2.0}]
    s = summarize([row(warmed), row(warmed), row([])])
    assert s["warm_p50_s"] == 3.0 and s["warm_tokens_mean"] == 400.0
    assert "warm_p50_s" not in summarize([row([])])

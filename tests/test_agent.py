"""The agentic (ChatR1) mode: tag parsing, scripted rollouts over a real tiny index (every malformed case), ChatR1
rewards against hand-computed values, and a real SmolLM2 rollout that must end with an answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from local_rag.agent.pipeline import AgenticPipeline
from local_rag.agent.rewards import (
    answer_reward,
    combined_reward,
    intent_reward,
    normalize,
    retrieval_reward,
    score_trace,
    token_f1,
)
from local_rag.agent.tags import AnswerStream, lenient_answer, parse_step
from local_rag.errors import BadInputError
from local_rag.index import build_index
from local_rag.modes import make_pipeline
from local_rag.records import Conversation, Turn
from local_rag.retrieve.stack import open_retriever

from .conftest import CORPUS, HashEmbedder, make_settings, write_jsonl
from .llm_fixtures import ScriptedLLM

CATS = Conversation([Turn("user", "Tell me about cats."), Turn("agent", "Cats are small mammals."),
                     Turn("user", "How long do they sleep?")])


@pytest.fixture(scope="module")
def index_settings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    tmp = tmp_path_factory.mktemp("agent")
    settings = make_settings(tmp, chunker={"tokenizer": "whitespace", "size": 40, "overlap": 5})
    embedder = HashEmbedder(settings.embedder)
    build_index(settings, write_jsonl(tmp / "c.jsonl", CORPUS), embedder, progress=False)
    return settings, open_retriever(settings, embedder)


def agent(index_settings: tuple[Any, Any], replies: list[str] | Any, **agent_cfg: Any) -> tuple[AgenticPipeline, ScriptedLLM]:
    settings, retriever = index_settings
    settings = settings.model_copy(update={"agent": settings.agent.model_copy(update=agent_cfg)})
    queue = list(replies) if isinstance(replies, list) else None
    llm = ScriptedLLM((lambda m, s: queue.pop(0) if queue else "") if queue is not None else replies)
    return AgenticPipeline(settings, retriever=retriever, llm=llm), llm


# ------------------------------------------------------------------ tags
def test_parse_step_actions_and_malformed_steps() -> None:
    step = parse_step("<think>They mean cats.</think>\n<search>how long do cats sleep</search>")
    assert (step.action, step.content, step.think) == ("search", "how long do cats sleep", "They mean cats.")
    assert parse_step("<answer> Twelve   hours [1]. </answer>").content == "Twelve hours [1]."
    assert parse_step("<search>cats sleep").problem == "unclosed tag"
    assert parse_step("<search>  </search>").problem == "empty <search>"
    assert parse_step("Cats sleep a lot.").problem == "no <search> or <answer>"
    # the first complete action decides, as in Search-R1's rollout
    assert parse_step("<search>a</search><answer>b</answer>").action == "search"
    assert parse_step("I should look. <search>x</search>").think == "I should look."
    assert lenient_answer("<think>t</think><search>q</search> Twelve hours.") == "Twelve hours."
    assert lenient_answer("<answer>Twelve hours [1]") == "Twelve hours [1]"


def test_answer_stream_sends_only_the_answer() -> None:
    out: list[str] = []
    stream = AnswerStream(out.append)
    for piece in ["<think>a</think>\n<search>x</search>"]:
        stream(piece)
    stream.reset()
    for piece in ["<think>b</think><answer>", "Twelve ", "hours [1].<", "/answer>"]:
        stream(piece)
    assert "".join(out) == "Twelve hours [1]."


def test_a_broken_answer_then_the_final_one_is_written_once_in_the_chat() -> None:
    """Session 51, seen with the real 1.5B in `chat --mode agentic`: a step's answer cut by the token budget (an
    unclosed <answer>) streamed, then the loop's forced "I don't know" streamed and was written a second time behind
    "agent> ". The chat's writer now starts a new step at the break, says so, and writes the final answer once."""
    import io

    from local_rag.cli.lines import Streamer

    out = io.StringIO()
    writer = Streamer("agent> ", out)
    stream = AnswerStream(writer)
    stream("<think>t</think><answer>To keep an index in step, use")
    stream.reset()  # the step broke off; the loop goes on
    stream("<answer>I don't know.</answer>")
    writer.finish("I don't know.", False)
    assert out.getvalue() == "agent> To keep an index in step, use\n(that answer broke off; the agent goes on)\nI don't know.\n"


# ------------------------------------------------------------------ rollouts over the real tiny index
def test_search_then_answer_cites_the_passages_read(index_settings: tuple[Any, Any]) -> None:
    pipe, llm = agent(index_settings, [
        "<think>They ask how long cats sleep.</think>\n<search>how long does a cat sleep</search>",
        "<think>[1] says it.</think>\n<answer>A cat sleeps twelve to sixteen hours a day [1].</answer>",
    ])
    streamed: list[str] = []
    turn = pipe.answer(CATS, on_token=streamed.append)
    assert turn.answer.kind == "answer" and turn.answer.text == "A cat sleeps twelve to sixteen hours a day [1]."
    assert "".join(streamed) == turn.answer.text and turn.answer.raw
    assert [q.text for q in turn.queries] == ["how long does a cat sleep"] and turn.queries[0].mode == "agent"
    assert len(turn.passages) == 3 and turn.passages[0].passage_id == "d1-1"  # top_k=3, the sleep passage first
    assert turn.answer.citations[0].passage_id == "d1-1"
    assert [s["type"] for s in turn.trace] == ["think", "search", "information", "think", "answer"]
    assert turn.trace[2]["passage_ids"][0] == "d1-1" and turn.trace[2]["numbers"] == [1, 2, 3]
    assert {"search.1", "retrieval", "generate", "total"} <= set(turn.timings)
    assert len(turn.llm_calls) == 2 and {c.stage for c in turn.llm_calls} == {"agent"}
    # the system sent the passages back as <information>, the conversation and the protocol first
    info = llm.seen[1][-1]["content"]
    assert info.startswith("<information>\n[1] Cats: A cat sleeps") and "1 more time" in info
    assert "How long do they sleep?" in llm.seen[0][-1]["content"] and "<search>" in llm.seen[0][0]["content"]
    assert turn.to_json()["trace"] == turn.trace


def test_second_search_continues_the_numbering(index_settings: tuple[Any, Any]) -> None:
    pipe, llm = agent(index_settings, [
        "<search>cat sleep hours</search>", "<search>reciprocal rank fusion</search>",
        "<answer>Cats sleep a lot [1]; RRF sums reciprocal ranks [4]. Also [9].</answer>",
    ])
    turn = pipe.answer(CATS)
    assert [q.text for q in turn.queries] == ["cat sleep hours", "reciprocal rank fusion"]
    numbers = [s["numbers"] for s in turn.trace if s["type"] == "information"]
    second_ids = [s["passage_ids"] for s in turn.trace if s["type"] == "information"][1]
    # a passage read again keeps its number; new ones continue after the first search's
    assert numbers[0] == [1, 2, 3]
    assert all(turn.passages[n - 1].passage_id == pid for n, pid in zip(numbers[1], second_ids, strict=True))
    assert len(turn.passages) == len({h.passage_id for h in turn.passages}) >= max(numbers[1])
    assert turn.answer.invalid_citations >= 1 and "[9]" not in turn.answer.text
    assert "no searches left" in llm.seen[2][-1]["content"]


@pytest.mark.parametrize("bad", ["<search>how long do cats sleep", "<search></search>", "Cats sleep."])
def test_malformed_step_gets_the_corrective_message(index_settings: tuple[Any, Any], bad: str) -> None:
    pipe, llm = agent(index_settings, [bad, "<answer>Twelve to sixteen hours.</answer>"])
    turn = pipe.answer(CATS)
    assert "My previous action is invalid" in llm.seen[1][-1]["content"]
    assert llm.seen[1][-2] == {"role": "assistant", "content": bad}
    assert turn.answer.text == "Twelve to sixteen hours." and turn.queries == []
    assert [s["type"] for s in turn.trace if s["type"] != "think"] == ["invalid", "answer"]


def test_an_answer_before_any_search_is_sent_back_once(index_settings: tuple[Any, Any]) -> None:
    pipe, llm = agent(index_settings, ["<answer>From memory.</answer>", "<search>cat sleep</search>",
                                       "<answer>Twelve to sixteen hours [1].</answer>"])
    streamed: list[str] = []
    turn = pipe.answer(CATS, on_token=streamed.append)
    assert "must search the documents first" in llm.seen[1][-1]["content"]
    assert [q.text for q in turn.queries] == ["cat sleep"] and turn.answer.text == "Twelve to sixteen hours [1]."
    # the answer sent back never reached the chat user (it was streamed before session 49: two answers, one unread)
    assert "".join(streamed) == "Twelve to sixteen hours [1]."
    pipe, llm = agent(index_settings, ["<answer>From memory.</answer>"] * 2)
    streamed = []
    turn = pipe.answer(CATS, on_token=streamed.append)
    assert turn.answer.text == "From memory." and len(turn.llm_calls) == 2 and llm.calls == []  # the second time it is taken
    assert "".join(streamed) == "From memory."  # once: the taken one
    pipe, llm = agent(index_settings, ["<answer>From memory.</answer>"], require_search=False)
    turn = pipe.answer(CATS)
    assert turn.answer.text == "From memory." and len(turn.llm_calls) == 1


def test_search_beyond_the_budget_forces_an_answer(index_settings: tuple[Any, Any]) -> None:
    pipe, llm = agent(index_settings, ["<search>cats</search>", "<search>cats sleep</search>",
                                       "<search>more cats</search>", "They sleep twelve hours [1]."], max_searches=2)
    turn = pipe.answer(CATS)
    assert len(turn.queries) == 2 and len(turn.llm_calls) == 4
    assert "No more searches" in llm.seen[3][-1]["content"]
    assert turn.trace[-2]["problem"] == "search budget spent"
    assert turn.trace[-1] == {"type": "answer", "text": "They sleep twelve hours [1].", "forced": True}
    assert turn.answer.kind == "answer" and turn.answer.citations[0].n == 1


def test_a_model_that_never_follows_the_protocol_still_ends(index_settings: tuple[Any, Any]) -> None:
    pipe, llm = agent(index_settings, lambda m, s: "<think>hmm", max_steps=3)
    turn = pipe.answer(CATS)
    assert len(turn.llm_calls) == 4  # max_steps, then the forced answer
    assert turn.answer.kind == "decline" and turn.trace[-1]["forced"] is True  # nothing usable: the IDK sentence
    assert sum(s["type"] == "invalid" for s in turn.trace) == 3


def test_zero_search_budget_and_a_prompt_too_long_do_not_crash(index_settings: tuple[Any, Any]) -> None:
    pipe, _ = agent(index_settings, ["<search>cats</search>", "<answer>I don't know.</answer>"], max_searches=0)
    turn = pipe.answer(CATS)
    assert turn.queries == [] and turn.answer.kind == "decline"

    def overflow(messages: list, schema: Any) -> str:
        raise BadInputError("agent: the prompt has 5000 tokens, the context 2048: no room to answer")

    pipe, llm = agent(index_settings, overflow)
    turn = pipe.answer(CATS)
    assert turn.answer.kind == "decline" and [s["type"] for s in turn.trace] == ["error", "error", "answer"]


def test_make_pipeline_picks_the_agentic_mode(index_settings: tuple[Any, Any]) -> None:
    settings, retriever = index_settings
    chosen = make_pipeline(settings.model_copy(update={"pipeline": settings.pipeline.model_copy(update={"mode": "agentic"})}),
                           retriever=retriever, llm=ScriptedLLM("x"))
    assert isinstance(chosen, AgenticPipeline)
    assert not isinstance(make_pipeline(settings, retriever=retriever, llm=ScriptedLLM("x")), AgenticPipeline)


# ------------------------------------------------------------------ rewards
def test_rewards_match_hand_computed_values() -> None:
    assert normalize("The Cat's [2] sleep!") == ["cats", "sleep"]
    # pred {cats, sleep, 16, hours}, ref {cats, sleep, 12, to, 16, hours, day}: P=4/4... common 4 -> P=1, R=4/7
    assert token_f1("Cats sleep 16 hours [1].", "Cats sleep 12 to 16 hours a day") == pytest.approx(2 * (4 / 7) / (1 + 4 / 7))
    assert token_f1("", "x") == 0.0 and answer_reward(None, "x") == 0.0
    assert answer_reward("sixteen hours", ["no", "sixteen hours a day"]) == pytest.approx(2 * 1 * (2 / 3) / (1 + 2 / 3))
    # best query: "how long do cats sleep" vs "how long does a cat sleep": common {how, long, sleep}: P=3/5, R=3/5
    assert intent_reward(["cats", "how long do cats sleep"], "how long does a cat sleep") == pytest.approx(0.6)
    assert intent_reward([], "anything") == 0.0
    assert retrieval_reward([["a", "b", "c", "g"], ["d"]], {"g"}, k=3) == 0.0
    assert retrieval_reward([["a", "b", "c", "g"], ["d"]], {"g"}, k=4) == 1.0
    assert combined_reward(0.5, 0.6) == pytest.approx(0.5 + 0.2 * 0.6)
    trace = [{"type": "search", "query": "how long do cats sleep"}, {"type": "information", "passage_ids": ["d1-1"]},
             {"type": "answer", "text": "Cats sleep 16 hours [1]."}]
    scores = score_trace(trace, "Cats sleep 16 hours", "how long does a cat sleep", {"d1-1"})
    assert scores == pytest.approx({"answer_f1": 1.0, "searches": 1.0, "intent": 0.6, "retrieval": 1.0, "reward": 1.12})
    assert score_trace(trace, "x", gold_ids={"d1-1"})["reward"] == pytest.approx(0.2)  # retrieval as the second reward


# ------------------------------------------------------------------ the real SmolLM2 on llama.cpp
@pytest.mark.llm
def test_smollm_rollout_over_a_real_index_ends_with_an_answer(index_settings: tuple[Any, Any], smollm: Any) -> None:
    settings, retriever = index_settings
    settings = settings.model_copy(update={"agent": settings.agent.model_copy(update={"step_tokens": 64})})
    pipe = AgenticPipeline(settings, retriever=retriever, llm=smollm)
    turn = pipe.answer(CATS)
    assert turn.trace and turn.trace[-1]["type"] == "answer"
    assert turn.answer.kind in ("answer", "decline") and turn.answer.text
    assert 1 <= len(turn.llm_calls) <= settings.agent.max_steps + 1
    assert len(turn.queries) <= settings.agent.max_searches


@pytest.mark.llm
def test_llamacpp_stop_string_ends_the_reply_and_is_kept(smollm: Any) -> None:
    done = smollm.run([{"role": "user", "content": "Write three short sentences about cats."}], stage="test",
                      max_tokens=96, stop=["."])
    assert done.text.endswith(".") and done.text.count(".") == 1


def test_cli_chat_trace_command_is_listed() -> None:
    from local_rag.cli.ask import HELP

    assert "/trace" in HELP


def test_an_agent_turn_about_yesterday_searches_with_the_day_and_says_so(tmp_path: Path) -> None:
    """Session 57 dated "yesterday" for the pipeline's search but the agentic mode's trace did not show it (session
    58): over a folder's documents the model is given the turn dated, and the trace's first step says so."""
    from datetime import date, timedelta

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "pumps.md").write_text("# Pumps\n\nThe north pump of station 4 was replaced by Müller.\n")
    settings = make_settings(tmp_path, chunker={"tokenizer": "whitespace", "size": 40, "overlap": 5})
    embedder = HashEmbedder(settings.embedder)
    build_index(settings, folder, embedder, progress=False)
    replies = ["<search>pump replaced</search>", "<answer>Müller replaced it [1].</answer>"]
    llm = ScriptedLLM(lambda m, s: replies.pop(0) if replies else "")
    pipe = AgenticPipeline(settings, retriever=open_retriever(settings, embedder), llm=llm)
    result = pipe.answer(Conversation([Turn("user", "Who replaced a pump yesterday?")]))
    day = date.today() - timedelta(days=1)
    assert result.trace[0]["type"] == "dates" and f"{day.day} {day:%b %Y})" in str(result.trace[0]["text"])
    assert f"yesterday ({day:%a} {day.day} {day:%b %Y})" in "\n".join(m["content"] for m in llm.seen[0])
    assert [step["type"] for step in result.trace[1:]] == ["search", "information", "answer"]

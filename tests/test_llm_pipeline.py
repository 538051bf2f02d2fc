"""Wiring the LLM stages into retrieval, with deterministic fakes: query providers, their cache, rerank/judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local_rag.errors import SettingsError
from local_rag.llm.pipeline import LLMQueries, call_stats, post_retrieval, question_of
from local_rag.records import Conversation, Hit, Query, Turn
from local_rag.settings import load_settings
from local_rag.subset import first_by_sha1
from tests.llm_fixtures import ScriptedLLM, order_by_keyword

CONV = Conversation([Turn("user", "What is BM25?"), Turn("agent", "A ranking function."),
                     Turn("user", "who made it?")], "conv-1")


def reply(messages: list, schema: dict | None) -> str:
    props = (schema or {}).get("properties", {})
    if "query" in props:
        return '{"query": "Who created BM25?"}'
    if "keywords" in props:
        return '{"keywords": ["BM25", "inventor"]}'
    return "x"


def test_llm_queries_are_cached_by_conversation_and_settings(tmp_path: Path) -> None:
    settings = load_settings("cpu-test")
    cache = tmp_path / "cache.jsonl"
    llm = ScriptedLLM(reply)
    queries = LLMQueries(llm, settings, ["rewrite", "keywords"], cache)
    assert queries(CONV) == {"rewrite": ["Who created BM25?"], "keywords": ["BM25 inventor"]}
    assert len(llm.calls) == 2
    again = ScriptedLLM("never called")
    assert LLMQueries(again, settings, ["rewrite", "keywords"], cache)(CONV) == queries(CONV)
    assert again.calls == [] and len(cache.read_text().splitlines()) == 2
    other = load_settings("cpu-test", overrides={"llm": {"model": "another"}})
    LLMQueries(again, other, ["rewrite"], cache)(CONV)  # another model: not the cached answer
    assert len(again.calls) == 1
    prefix = load_settings("cpu-test", overrides={"rewrite": {"reply": "prefix"}})
    LLMQueries(again, prefix, ["rewrite", "keywords"], cache)(CONV)  # another decoding of the rewrite: not cached
    assert len(again.calls) == 2 and again.calls[-1].stage == "rewrite"  # keywords: still the cached answer
    with pytest.raises(SettingsError):
        LLMQueries(llm, settings, ["nope"])


def test_llm_queries_read_what_another_process_appended_on_a_miss(tmp_path: Path) -> None:
    settings = load_settings("cpu-test")
    cache = tmp_path / "cache.jsonl"
    reader = LLMQueries(ScriptedLLM("never called"), settings, ["rewrite"], cache)  # starts before the writer
    writer = LLMQueries(ScriptedLLM(reply), settings, ["rewrite"], cache)
    assert writer(CONV) == {"rewrite": ["Who created BM25?"]}
    with cache.open("a") as fh:
        fh.write('{"key": "half a line')  # a line another process is still writing is left alone
    assert reader(CONV) == {"rewrite": ["Who created BM25?"]} and reader.llm.calls == []


def test_post_retrieval_reranks_then_judges_with_the_rewrite_as_question() -> None:
    settings = load_settings("cpu-test", overrides={"llm_rerank": {"candidates": 6, "window": 4, "step": 2},
                                                    "judge": {"candidates": 3, "batch_size": 3}})
    hits = [Hit(f"p{i}", 1 - i / 10, i + 1, text=("GOLD " if i == 5 else "") + f"text {i}") for i in range(8)]

    def fake(messages: list, schema: dict | None) -> str:
        if "order" in (schema or {}).get("properties", {}):
            assert "Question: Who created BM25?" in messages[-1]["content"]
            return order_by_keyword("GOLD")(messages, schema)
        return json.dumps({"judgments": [{"id": 1, "score": 2, "reason": "r"}, {"id": 2, "score": 0, "reason": "r"},
                                         {"id": 3, "score": 1, "reason": "r"}]})

    llm = ScriptedLLM(fake)
    search = post_retrieval(lambda queries: hits, llm, settings, rerank=True, judge=True)
    out = search([Query("who made it?", "lastturn"), Query("Who created BM25?", "rewrite")])
    assert out[0].passage_id == "p5" and out[0].scores["judge"] == 2.0
    assert len(out) == 7  # the second judged passage (score 0) is dropped
    assert {c.stage for c in llm.calls} == {"rerank", "judge"}
    stats = call_stats(llm.calls)
    assert stats["judge"]["calls"] == 1 and stats["rerank"]["calls"] == 2  # windows (2, 6), (0, 4)


def test_question_of_and_fixed_subset() -> None:
    assert question_of([Query("a", "lastturn"), Query("b", "rewrite")]) == "b"
    assert question_of([Query("k", "keywords"), Query("a", "lastturn")]) == "a"
    ids = [f"q{i}" for i in range(100)]
    subset = first_by_sha1(ids, 10)
    assert len(subset) == 10 and subset == first_by_sha1(list(reversed(ids)), 10)
    assert first_by_sha1(ids, None) == set(ids)


def test_llm_queries_recompute_what_an_edited_prompt_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache line records its prompt's fingerprint: after the prompt file changes, the line is a miss; lines from
    before fingerprints (no "prompt" field) are still served."""
    import local_rag.llm.pipeline as pipeline

    settings = load_settings("cpu-test")
    cache = tmp_path / "cache.jsonl"
    assert LLMQueries(ScriptedLLM(reply), settings, ["rewrite"], cache)(CONV) == {"rewrite": ["Who created BM25?"]}
    line = json.loads(cache.read_text().splitlines()[0])
    assert line["prompt"] == pipeline.prompt_fingerprint("rewrite") != "" and len(line["prompt"]) == 12
    assert LLMQueries(ScriptedLLM("never called"), settings, ["rewrite"], cache)(CONV) == {"rewrite": ["Who created BM25?"]}

    monkeypatch.setattr(pipeline, "prompt_fingerprint", lambda mode: "edited000000")  # the rewrite prompt was edited
    edited = ScriptedLLM(lambda m, s: '{"query": "Who invented BM25?"}')
    assert LLMQueries(edited, settings, ["rewrite"], cache)(CONV) == {"rewrite": ["Who invented BM25?"]}
    assert len(edited.calls) == 1 and json.loads(cache.read_text().splitlines()[-1])["prompt"] == "edited000000"
    # the newer line wins on the next read
    assert LLMQueries(ScriptedLLM("never called"), settings, ["rewrite"], cache)(CONV) == {"rewrite": ["Who invented BM25?"]}

    legacy = tmp_path / "legacy.jsonl"  # written before fingerprints: trusted as it is
    legacy.write_text(json.dumps({"key": line["key"], "queries": {"rewrite": ["Old rewrite"]}}) + "\n")
    assert LLMQueries(ScriptedLLM("never called"), settings, ["rewrite"], legacy)(CONV) == {"rewrite": ["Old rewrite"]}

"""Wiring the LLM stages into retrieval: query variants from a conversation, then rerank and judge the hits.

- `LLMQueries` turns a conversation into ``{mode: [texts]}`` for the LLM rewrite modes (the shape the evaluation's
  query provider and `local_rag.retrieve.queries.conversation_queries` take), with an optional JSONL cache so a
  second run (another retriever, another fusion) does not call the LLM again.
- `post_retrieval` wraps a ``search(queries) -> hits`` function with listwise reranking and/or judging; the
  question the LLM sees is the standalone rewrite when there is one, else the last turn.

Example:
    >>> queries = LLMQueries(llm, settings)(conversation)  # doctest: +SKIP
    >>> search = post_retrieval(retriever.search, llm, settings, rerank=True, judge=False)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from local_rag.llm.base import LLM
from local_rag.llm.judge import RelevanceJudge
from local_rag.llm.prompts import prompt_fingerprint
from local_rag.llm.rerank import ListwiseReranker
from local_rag.llm.rewrite import REWRITE_MODES, rewrite
from local_rag.records import Conversation, Hit, Query
from local_rag.settings import Settings

log = logging.getLogger("local_rag.llm.pipeline")

Search = Callable[[list[Query]], list[Hit]]
_QUESTION_MODES = ("rewrite", "lastturn")  # what the reranker and judge read, best first


class LLMQueries:
    """Query texts of the LLM rewrite modes for a conversation, cached by conversation id (and the model).

    Each cache line records the fingerprint of the prompt that wrote it (`prompt_fingerprint`): after a prompt is
    edited its old lines are misses, computed again. Lines written before fingerprints were recorded (session 33)
    carry none and are served as they are.

    Args:
        llm: the model.
        settings: ``rewrite`` settings (modes, n_queries, budgets) and the model name (part of the cache key).
        modes: LLM modes to compute (default ``settings.rewrite.modes``); unknown names are refused.
        cache: a JSONL file of earlier results, appended to as new ones are computed. Several processes may share
            it: a miss first reads what the others appended since (two runs side by side rewrite each conversation
            once between them, unless both miss it at the same moment).
    """

    def __init__(self, llm: LLM, settings: Settings, modes: Sequence[str] | None = None,
                 cache: str | Path | None = None) -> None:
        self.llm = llm
        self.settings = settings
        self.modes = REWRITE_MODES.check(list(modes or settings.rewrite.modes))
        self.cache_path = Path(cache) if cache else None
        self._cache: dict[str, dict[str, list[str]]] = {}
        self._prompts: dict[str, str | None] = {}  # key -> the fingerprint its cached line recorded (None: before them)
        self._fingerprints = {mode: prompt_fingerprint(mode) for mode in self.modes}  # each mode's prompt is its name
        self._read_to = 0  # bytes of the cache file read so far
        self._read_more()

    def _read_more(self) -> None:
        """Read the complete lines appended to the cache file since the last read."""
        if self.cache_path is None or not self.cache_path.exists():
            return
        with self.cache_path.open("rb") as fh:
            fh.seek(self._read_to)
            data = fh.read()
        end = data.rfind(b"\n") + 1  # a line still being written is left for the next read
        for line in data[:end].decode("utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                self._cache[record["key"]] = record["queries"]
                self._prompts[record["key"]] = record.get("prompt")
        self._read_to += end

    def _key(self, conversation: Conversation, mode: str) -> str:
        r = self.settings.rewrite
        reply = "|prefix" if mode == "rewrite" and r.reply == "prefix" else ""  # grammar keys stay as they were
        return f"{self.settings.llm.model}|{mode}{reply}|{r.n_queries}|{r.history_tokens}|{r.agent_tokens}|{conversation.id}"

    def __call__(self, conversation: Conversation) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for mode in self.modes:
            key = self._key(conversation, mode)
            if conversation.id and not self._fresh(key, mode):
                self._read_more()
            if not conversation.id or not self._fresh(key, mode):
                texts = [q.text for q in rewrite(conversation, self.llm, [mode], self.settings.rewrite)]
                if conversation.id:
                    self._cache[key] = {mode: texts}
                    self._prompts[key] = self._fingerprints[mode]
                    self._save(key, {mode: texts}, self._fingerprints[mode])
            out.update(self._cache[key] if conversation.id else {mode: texts})
        return out

    def _fresh(self, key: str, mode: str) -> bool:
        """A cached line for ``key`` written by today's prompt of ``mode`` (or before fingerprints were recorded)."""
        return key in self._cache and self._prompts.get(key) in (None, self._fingerprints[mode])

    def _save(self, key: str, queries: dict[str, list[str]], prompt: str) -> None:
        if self.cache_path is None:
            return
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        with self.cache_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"key": key, "queries": queries, "prompt": prompt}, ensure_ascii=False) + "\n")


def question_of(queries: Sequence[Query]) -> str:
    """The text the reranker and judge read: the standalone rewrite, else the last turn, else the first query."""
    for mode in _QUESTION_MODES:
        for q in queries:
            if q.mode == mode and q.text.strip():
                return q.text
    return queries[0].text if queries else ""


def post_retrieval(search: Search, llm: LLM, settings: Settings, rerank: bool, judge: bool) -> Search:
    """``search`` followed by listwise reranking and/or relevance judging (in that order)."""
    if not rerank and not judge:
        return search
    reranker = ListwiseReranker(llm, settings.llm_rerank, seed=settings.llm.seed) if rerank else None
    judger = RelevanceJudge(llm, settings.judge) if judge else None
    depth = max(settings.llm_rerank.candidates if rerank else 0, settings.judge.candidates if judge else 0)

    def wrapped(queries: list[Query]) -> list[Hit]:
        hits = search(queries)
        question = question_of(queries)
        if reranker is not None:
            hits = reranker.rerank(question, hits)
        if judger is not None:
            hits = judger.filter(question, hits)
        return hits

    wrapped.depth = depth  # type: ignore[attr-defined]
    return wrapped


def conversations_by_id(generation_tasks: str | Path) -> dict[str, Conversation]:
    """Task id -> conversation (with its id set), from the official generation tasks file."""
    from local_rag.mtrag import load_generation_tasks, parse_conversation

    out = {}
    for task in load_generation_tasks(generation_tasks):
        conversation = parse_conversation(task["input"], where=f"task {task['task_id']}")
        conversation.id = str(task["task_id"])
        out[conversation.id] = conversation
    return out


def call_stats(calls: Sequence[object]) -> dict[str, dict[str, float]]:
    """Per stage: calls, mean prompt/completion tokens, mean prefill/decode/total seconds, tokens/s."""
    import math
    import statistics

    by_stage: dict[str, list[Any]] = {}
    for c in calls:
        by_stage.setdefault(c.stage, []).append(c)  # type: ignore[attr-defined]
    out = {}
    for stage, cs in by_stage.items():
        prefill, decode = sum(c.prefill_s for c in cs), sum(c.decode_s for c in cs)
        out[stage] = {
            "calls": len(cs),
            "prompt_tokens": round(statistics.fmean(c.prompt_tokens for c in cs), 1),
            "cached_tokens": round(statistics.fmean(getattr(c, "cached_tokens", 0) for c in cs), 1),
            "completion_tokens": round(statistics.fmean(c.completion_tokens for c in cs), 1),
            "prefill_s": round(prefill / len(cs), 3),
            "decode_s": round(decode / len(cs), 3),
            "total_s": round(statistics.fmean(c.total_s for c in cs), 3),
            "p95_total_s": round(sorted(c.total_s for c in cs)[max(0, math.ceil(0.95 * len(cs)) - 1)], 3),
            "prefill_tok_s": round(sum(c.prompt_tokens - getattr(c, "cached_tokens", 0) for c in cs) / prefill, 1)
            if prefill else 0.0,  # over the tokens really prefilled (not those restored from the prefix cache)
            "decode_tok_s": round(sum(c.completion_tokens for c in cs) / decode, 1) if decode else 0.0,
        }
    return out

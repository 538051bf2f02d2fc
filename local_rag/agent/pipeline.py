"""`AgenticPipeline`: the agentic answering mode behind ``pipeline.mode: agentic`` (``--mode agentic``).

Same indexes and models as `local_rag.pipeline.Pipeline`, same ``answer(conversation, on_token) -> TurnResult``; the
LLM decides when and what to search (`local_rag.agent.rollout`). The result carries:

- ``queries``: the searches issued (mode ``agent``); ``retrieved`` / ``passages``: the union of the passages read,
  numbered as the model saw them, so ``[n]`` citations map to ``passages[n-1]``;
- ``trace``: think / search (with latency) / information (passage ids) / invalid / answer steps;
- ``timings``: ``retrieval`` (all searches), ``search.<i>`` each, ``rerank``, ``generate`` (all LLM steps), ``total``.

Example:
    >>> agent = AgenticPipeline(settings)  # doctest: +SKIP
    >>> turn = agent.answer(conversation, on_token=print)  # doctest: +SKIP
    >>> [q.text for q in turn.queries], turn.answer.kind  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Callable

from local_rag.agent.rollout import AgentLoop, Rollout, initial_messages, load_agent_prompt
from local_rag.agent.tags import AnswerStream
from local_rag.llm.base import Message
from local_rag.llm.generate import check_citations, is_decline
from local_rag.llm.warm import Warmed
from local_rag.pipeline import Pipeline
from local_rag.records import Answer, Citation, Conversation, Hit, Query, TurnResult
from local_rag.retrieve.scope import Scope
from local_rag.settings import GenerateConfig


class AgenticPipeline(Pipeline):
    """The ChatR1-style answering mode. Stages (retriever, LLM, cross-encoder) load lazily as in `Pipeline`."""

    _scope = Scope()  # the documents this turn's searches keep to (`answer`)

    def search(self, query: str) -> list[Hit]:
        """One search: hybrid retrieval of the query alone, cross-encoder reranked when ``agent.rerank``."""
        cfg = self.settings.agent
        depth = max(cfg.top_k, cfg.candidates if cfg.rerank else 0)
        hits = self.retriever.search([Query(query, "agent")], top_k=depth, scope=self._scope)
        if cfg.rerank and hits and (reranker := self.reranker) is not None:
            started = time.perf_counter()
            hits = reranker.rerank(query, hits)
            self._rerank_s += time.perf_counter() - started
        return hits[: cfg.top_k]

    def warm(self, conversation: Conversation, cancelled: Callable[[], bool] | None = None) -> list[Warmed]:
        """Nothing: the agentic prompts are not the pipeline's (`Pipeline.warm`); not measured for this mode."""
        return []

    def answer(self, conversation: Conversation, on_token: Callable[[str], None] | None = None,
               on_status: Callable[[str], None] | None = None, scope: Scope | None = None) -> TurnResult:
        """Answer the last user turn of ``conversation`` by searching as the LLM decides (``on_status``, ``scope``:
        see `local_rag.pipeline.Pipeline.answer`; every search of the turn keeps to the scope)."""
        if on_status is not None:
            on_status("Thinking…")
        self.refresh_index()
        self._scope = self.scope() if scope is None else scope
        self.skipped = []  # the pipeline's trace entries (here only `dated`'s), then the rollout's
        conversation = self.dated(conversation)  # "yesterday (Sun 29 Nov 2026)": the model searches with the day
        cfg = self.settings
        started = time.perf_counter()
        prompt = load_agent_prompt(cfg.agent.prompt)
        llm = self.llm
        calls_before = len(llm.calls)
        messages = initial_messages(conversation, prompt, cfg.agent, cfg.generate, llm, llm.n_ctx)
        stream = AnswerStream(on_token) if on_token is not None else None
        self._rerank_s = 0.0

        def generate(msgs: list[Message], stops: list[str]) -> str:
            return llm.run(msgs, stage="agent", max_tokens=cfg.agent.step_tokens, on_token=stream, stop=stops).text

        def on_step(takes_answer: bool) -> None:  # an answer the loop will send back is not streamed
            if stream is not None:
                stream.reset(hold=not takes_answer)

        loop = AgentLoop(cfg.agent, generate, self.search, prompt, cfg.generate.idk_answer, llm.count_tokens, on_step)
        rollout = loop.run(messages)
        streamed = stream is not None and stream.sent > 0  # the last step's answer reached the user
        answer = to_answer(rollout, cfg.generate, streamed)
        calls = self.take_calls(calls_before)
        timings = {f"search.{i}": s for i, s in enumerate(rollout.search_s, 1)}
        timings["retrieval"] = sum(rollout.search_s) - self._rerank_s
        if cfg.agent.rerank:
            timings["rerank"] = self._rerank_s
        timings["generate"] = sum(c.total_s for c in calls if c.stage == "agent")  # a likelihood reranker's: "rerank"
        timings["total"] = time.perf_counter() - started
        queries = [Query(q, "agent") for q in rollout.queries]
        note = self.scope_note(self._scope)
        trace = [*([note] if note is not None else []), *self.skipped, *rollout.trace]  # skipped: the dates step
        return TurnResult(answer, queries, list(rollout.passages), list(rollout.passages), timings, calls, trace)


def to_answer(rollout: Rollout, config: GenerateConfig, streamed: bool = False) -> Answer:
    """The checked `Answer` of a rollout: IDK when it has none or declines; citations outside the passages read are
    removed. ``raw`` is set only when the answer was streamed to the user (the CLI prints the text otherwise)."""
    text = rollout.answer or ""
    raw = text if streamed else ""
    if not text or is_decline(text, config.idk_answer):
        return Answer(config.idk_answer, "decline", passages=rollout.passages, raw=raw)
    hits = rollout.passages
    cleaned, numbers, invalid = check_citations(text, len(hits))
    citations = [Citation.of(n, hits[n - 1]) for n in numbers]
    return Answer(cleaned, "answer", citations, invalid, hits, raw)

"""The agentic rollout (ChatR1 / Search-R1): the LLM thinks, searches, reads, may search again, then answers.

`AgentLoop` is the loop alone, over two callables, so that inference (`AgenticPipeline`, llama.cpp) and training
(`local_rag.agent.train`, a transformers policy) run the same protocol:

- ``generate(messages, stops) -> text``: one LLM step, stopped at ``</search>`` or ``</answer>`` (the stop string kept);
- ``search(query) -> hits``: hybrid retrieval (optionally reranked), the top ``agent.top_k`` passages.

Each step is parsed (`local_rag.agent.tags.parse_step`): a search runs and its passages come back as a user message
``<information>[n] ...</information>`` (numbered across the turn, so ``[n]`` citations stay valid); an answer ends the
turn; a malformed step (no tag, an unclosed tag, an empty query) gets Search-R1's corrective "My previous action is
invalid..." message. A search beyond ``agent.max_searches``, or running out of ``agent.max_steps``, forces a last
step that must answer; its reply is read leniently, so the turn always ends with an answer or the IDK sentence —
never a hang or a crash (a prompt that outgrows the context also ends in the forced answer or IDK).

Example:
    >>> agent = AgenticPipeline(load_settings("cpu-qwen", overrides={"index": "demo"}))  # doctest: +SKIP
    >>> turn = agent.answer(Conversation([Turn("user", "How are lists fused?")]))  # doctest: +SKIP
    >>> [step["type"] for step in turn.trace]  # doctest: +SKIP
    ['think', 'search', 'information', 'think', 'answer']
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from local_rag.agent.tags import STOPS, lenient_answer, parse_step
from local_rag.errors import BadInputError
from local_rag.llm.base import Message
from local_rag.llm.budget import truncate
from local_rag.llm.context import conversation_text, last_question
from local_rag.llm.prompts import Prompt, load_prompt
from local_rag.records import Conversation, Hit, TraceStep
from local_rag.settings import AgentConfig, GenerateConfig

log = logging.getLogger("local_rag.agent")

Generate = Callable[[list[Message], list[str]], str]
Search = Callable[[str], list[Hit]]


class TokenCounter:
    """What `conversation_text` needs of an LLM: ``count_tokens`` (for a transformers tokenizer in training)."""

    def __init__(self, count: Callable[[str], int]) -> None:
        self.count_tokens = count


@dataclass
class Rollout:
    """One turn's rollout: the messages as sent, the trace, the searches and what they returned, the answer."""

    messages: list[Message]
    trace: list[TraceStep] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    reads: list[list[Hit]] = field(default_factory=list)  # per search, the hits shown
    passages: list[Hit] = field(default_factory=list)  # union of the hits shown, in citation-number order
    answer: str | None = None  # None: no answer could be produced (the caller answers IDK)
    forced: bool = False
    steps: int = 0
    invalid: int = 0
    search_s: list[float] = field(default_factory=list)


def initial_messages(conversation: Conversation, prompt: Prompt, config: AgentConfig, generate: GenerateConfig,
                     counter: Any, n_ctx: int) -> list[Message]:
    """System (protocol), the worked example, then the conversation so far and the question."""
    question = last_question(conversation)
    room = max(64, n_ctx // 4)
    if counter.count_tokens(question) > room:
        question = truncate(question, room, counter.count_tokens)
        log.warning("agent: the question was cut to %d tokens to fit the context", room)
    earlier = Conversation(conversation.turns[:-1] if conversation.turns[-1].speaker == "user" else conversation.turns)
    history = conversation_text(earlier, counter, config.history_tokens, config.agent_turn_tokens, "agent") or "(none)"
    messages = prompt.messages(history=history, question=question)
    messages[0]["content"] = prompt.system.format(
        max_searches=config.max_searches, max_words=generate.max_words, idk=generate.idk_answer
    ).strip()
    return messages


class AgentLoop:
    """The bounded think / search / read / answer loop. See the module docstring.

    Args:
        config: budgets (``max_searches``, ``max_steps``, ``passage_tokens``).
        generate: one LLM step (see the module docstring).
        search: one search (see the module docstring).
        prompt: the agent prompt (its ``information``, ``invalid``, ``force_answer`` texts).
        idk: the IDK sentence the forced step is told to use.
        count_tokens: the LLM's token counter (passages are cut to ``passage_tokens``).
        on_step: called before each LLM step with whether an answer there ends the turn (`takes_answer`): a stream
            to the user holds back an answer that will be sent back.
    """

    def __init__(self, config: AgentConfig, generate: Generate, search: Search, prompt: Prompt, idk: str,
                 count_tokens: Callable[[str], int], on_step: Callable[[bool], None] | None = None) -> None:
        self.config = config
        self.generate = generate
        self.search = search
        self.prompt = prompt
        self.idk = idk
        self.count_tokens = count_tokens
        self.on_step = on_step

    def takes_answer(self, rollout: Rollout) -> bool:
        """Whether an answer at the next step ends the turn: not before any search while ``require_search`` holds
        (once: it is sent back with a correction), always in the forced last step."""
        cfg = self.config
        return rollout.forced or not (cfg.require_search and cfg.max_searches and not rollout.queries
                                      and not rollout.invalid)

    def information(self, hits: list[Hit], rollout: Rollout) -> tuple[str, list[int]]:
        """The ``<information>`` message for ``hits``: numbered after the passages already read (a passage read
        again keeps its number)."""
        numbers, lines = [], []
        known = {h.passage_id: i for i, h in enumerate(rollout.passages, 1)}
        for hit in hits:
            if hit.passage_id not in known:
                rollout.passages.append(hit)
                known[hit.passage_id] = len(rollout.passages)
            n = known[hit.passage_id]
            numbers.append(n)
            text = truncate(" ".join(hit.text.split()), self.config.passage_tokens, self.count_tokens)
            lines.append(f"[{n}] {hit.title}: {text}" if hit.title else f"[{n}] {text}")
        left = self.config.max_searches - len(rollout.queries)
        extra = self.prompt.extra
        remaining = extra["remaining_some"].format(n=left) if left > 0 else extra["remaining_none"]
        body = "\n".join(lines) or "(no passage found)"
        return extra["information"].format(passages=body, remaining=remaining).strip(), numbers

    def _step(self, rollout: Rollout) -> str | None:
        rollout.steps += 1
        if self.on_step is not None:
            self.on_step(self.takes_answer(rollout))
        try:
            text = self.generate(list(rollout.messages), STOPS)  # a copy: the loop appends to its own list
        except BadInputError as exc:  # the prompt outgrew the context: stop searching
            log.warning("agent: %s", exc)
            rollout.trace.append({"type": "error", "text": str(exc)})
            return None
        rollout.messages.append({"role": "assistant", "content": text})
        return text

    def run(self, messages: list[Message]) -> Rollout:
        """Run the loop from ``messages`` (see `initial_messages`) to an answer."""
        cfg, extra = self.config, self.prompt.extra
        rollout = Rollout(list(messages))
        while rollout.steps < cfg.max_steps:
            text = self._step(rollout)
            if text is None:
                break
            step = parse_step(text)
            if step.think:
                rollout.trace.append({"type": "think", "text": step.think})
            if step.action == "answer" and not self.takes_answer(rollout):  # once: then an answer without searching is taken
                rollout.invalid += 1
                rollout.trace.append({"type": "invalid", "problem": "answer before any search", "text": step.content})
                rollout.messages.append({"role": "user", "content": extra["search_first"].strip()})
                continue
            if step.action == "answer":
                rollout.answer = step.content
                rollout.trace.append({"type": "answer", "text": step.content, "forced": False})
                return rollout
            if step.action == "search" and len(rollout.queries) >= cfg.max_searches:
                rollout.trace.append({"type": "invalid", "problem": "search budget spent", "text": step.content})
                break
            if step.action == "search":
                started = time.perf_counter()
                hits = self.search(step.content)
                latency = time.perf_counter() - started
                rollout.queries.append(step.content)
                rollout.reads.append(hits)
                rollout.search_s.append(latency)
                info, numbers = self.information(hits, rollout)
                rollout.messages.append({"role": "user", "content": info})
                rollout.trace.append({"type": "search", "query": step.content, "latency_s": round(latency, 4)})
                rollout.trace.append({"type": "information", "passage_ids": [h.passage_id for h in hits],
                                      "numbers": numbers})
                continue
            rollout.invalid += 1
            rollout.trace.append({"type": "invalid", "problem": step.problem, "text": step.raw[-200:]})
            rollout.messages.append({"role": "user", "content": extra["invalid"].strip()})
        return self.force_answer(rollout)

    def force_answer(self, rollout: Rollout) -> Rollout:
        """The last step: told to answer now; its reply is read leniently (`lenient_answer`)."""
        rollout.forced = True
        if rollout.messages[-1]["role"] == "user":  # after a correction or an information block: say it once
            rollout.messages[-1] = {"role": "user", "content": rollout.messages[-1]["content"] + "\n\n"
                                    + self.prompt.extra["force_answer"].format(idk=self.idk).strip()}
        else:
            rollout.messages.append({"role": "user", "content": self.prompt.extra["force_answer"].format(idk=self.idk).strip()})
        text = self._step(rollout)
        answer = lenient_answer(text) if text is not None else ""
        rollout.answer = answer or None
        rollout.trace.append({"type": "answer", "text": answer, "forced": True})
        return rollout


def load_agent_prompt(name: str) -> Prompt:
    """The agent prompt; it must carry the protocol texts beside ``system`` and ``user``."""
    prompt = load_prompt(name)
    missing = [k for k in ("information", "remaining_some", "remaining_none", "invalid", "search_first", "force_answer")
               if k not in prompt.extra]
    if missing:
        from local_rag.errors import SettingsError

        raise SettingsError(f"agent prompt {name!r} lacks {', '.join(missing)}")
    return prompt

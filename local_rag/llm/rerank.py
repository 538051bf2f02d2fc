"""Listwise LLM reranking (5ting) with a RankGPT-style sliding window.

The top ``candidates`` hits are reranked in windows of ``window`` passages, moving ``step`` at a time from the
bottom of the list to the top, so a relevant passage found low can climb to the first place. In each window the
passages are shown in a seeded random order under ids ``1..n`` (so that echoing the ids in order is no ranking),
the question after them; the reply ``{"order": [...]}`` is validated (`validate_order`) before use. Hits past
``candidates`` keep their order after the reranked ones.

Example:
    >>> ListwiseReranker(llm, settings.llm_rerank).rerank("How tall is the Eiffel Tower?", hits)  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import random
from collections.abc import Sequence

from local_rag.llm.base import LLM
from local_rag.llm.context import passages_text, prompt_room
from local_rag.llm.prompts import load_prompt
from local_rag.records import Hit
from local_rag.settings import LLMRerankConfig

log = logging.getLogger("local_rag.llm.rerank")


def sliding_windows(n: int, window: int, step: int) -> list[tuple[int, int]]:
    """``(start, end)`` slices over ``n`` items, from the bottom up, each ``window`` long (the last reaching 0).

    Example:
        >>> sliding_windows(25, 10, 5)
        [(15, 25), (10, 20), (5, 15), (0, 10)]
        >>> sliding_windows(4, 10, 5)
        [(0, 4)]
    """
    if n <= 0:
        return []
    if step <= 0 or step >= window:
        raise ValueError(f"step ({step}) must be between 1 and window - 1 ({window - 1})")
    out = []
    end = n
    while True:
        start = max(0, end - window)
        out.append((start, end))
        if start == 0:
            return out
        end -= step


def validate_order(raw: object, n: int, prior: Sequence[int] | None = None) -> list[int]:
    """A full ranking of the ids ``1..n`` from an LLM's reply.

    Non-integers and ids outside ``1..n`` are dropped, duplicates keep their first place, and ids the reply missed
    are appended in their ``prior`` order (default ``1..n``).

    Example:
        >>> validate_order([3, 3, 9, "x", 1], 4, prior=[4, 3, 2, 1])
        [3, 1, 4, 2]
    """
    prior = list(prior) if prior is not None else list(range(1, n + 1))
    seen: dict[int, None] = {}
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, bool):
            continue
        if isinstance(item, str) and item.strip().lstrip("[").rstrip("]").isdigit():
            item = int(item.strip().lstrip("[").rstrip("]"))
        if isinstance(item, int) and 1 <= item <= n:
            seen.setdefault(item, None)
    missing = [i for i in prior if i not in seen]
    if missing and seen:
        log.info("rerank: the LLM left out %d of %d ids; appended in prior order", len(missing), n)
    return list(seen) + missing


class ListwiseReranker:
    """Reranks `Hit` lists with an `LLM`. See the module docstring."""

    def __init__(self, llm: LLM, config: LLMRerankConfig | None = None, seed: int = 0) -> None:
        self.llm = llm
        self.config = config or LLMRerankConfig()
        self.seed = seed
        self.prompt = load_prompt("rerank")
        self.echoed = 0  # windows whose reply only echoed the shown ids (kept in retrieval order)

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]:
        """``hits`` reordered; ranks renumbered from 1 and scores made descending (the fused score is kept in
        ``scores['fused']``). The input list is not modified."""
        c = self.config
        head = list(hits[: c.candidates])
        for start, end in sliding_windows(len(head), c.window, c.step):
            if end - start > 1:
                head[start:end] = self._rank_window(query, head[start:end], start)
        out = []
        ordered = head + list(hits[c.candidates:])
        for i, hit in enumerate(ordered):
            scores = {**hit.scores, "llm_rank": float(i + 1)}
            scores.setdefault("fused", hit.score)
            out.append(dataclasses.replace(hit, rank=i + 1, score=float(len(ordered) - i), scores=scores))
        return out

    def _rank_window(self, query: str, window: list[Hit], start: int) -> list[Hit]:
        n = len(window)
        shown = list(range(n))  # shown[label - 1] = position of that passage in the window (prior order)
        if self.config.shuffle:
            random.Random(f"{self.seed}:{query}:{start}:{n}").shuffle(shown)
        label_of = {pos: label for label, pos in enumerate(shown, 1)}
        room = prompt_room(self.llm, self.prompt, self.prompt.max_tokens, passages="", question=query, n=str(n))
        text = passages_text([window[p] for p in shown], self.llm, room, self.config.passage_tokens, stage="rerank")
        schema = copy.deepcopy(self.prompt.schema) or {}
        order = schema["properties"]["order"]
        order["items"]["maximum"] = order["maxItems"] = n
        data, _ = self.llm.run_json(
            self.prompt.messages(passages=text, question=query, n=str(n)), schema, stage="rerank",
            max_tokens=self.prompt.max_tokens,
        )
        prior = [label_of[p] for p in range(n)]
        labels = validate_order(data.get("order") if isinstance(data, dict) else None, n, prior=prior)
        if self.config.shuffle and n > 2 and labels == list(range(1, n + 1)):
            # the ids echoed in the order shown: with shuffled ids that carries no ranking (a real ranking equals it
            # with chance 1/n!), so keep the retrieval order instead of a random one (small models do this often)
            log.info("rerank: the LLM echoed the shown ids 1..%d; keeping the retrieval order of this window", n)
            self.echoed += 1
            labels = prior
        return [window[shown[label - 1]] for label in labels]

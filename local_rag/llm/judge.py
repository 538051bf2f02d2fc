"""LLM relevance judging (GenAIus): each passage 0/1/2 with a reason, in batches.

`RelevanceJudge.judge` returns a `Judgement` per hit; `RelevanceJudge.filter` drops judged hits below
``min_score`` and orders the rest by level (2 before 1), keeping the retrieval order within a level; hits past
``candidates`` follow unjudged. A passage the LLM did not judge keeps score 1 (logged), so a failed call never
empties a result list.

Example:
    >>> RelevanceJudge(llm, settings.judge).filter("How tall is the Eiffel Tower?", hits)  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from dataclasses import dataclass

from local_rag.llm.base import LLM
from local_rag.llm.context import passages_text, prompt_room
from local_rag.llm.prompts import load_prompt
from local_rag.records import Hit
from local_rag.settings import JudgeConfig

log = logging.getLogger("local_rag.llm.judge")

UNJUDGED_SCORE = 1


@dataclass(frozen=True)
class Judgement:
    passage_id: str
    score: int  # 0 irrelevant, 1 partly relevant, 2 answers the question
    reason: str = ""
    judged: bool = True  # False when the LLM's reply did not cover this passage


def parse_judgements(data: object, hits: list[Hit]) -> list[Judgement]:
    """`Judgement` per hit from a ``{"judgments": [{"id", "score", "reason"}]}`` reply (ids 1-based, first wins)."""
    by_id: dict[int, tuple[int, str]] = {}
    items = data.get("judgments") if isinstance(data, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        pid, score = item.get("id"), item.get("score")
        if isinstance(pid, int) and 1 <= pid <= len(hits) and score in (0, 1, 2) and pid not in by_id:
            by_id[pid] = (int(score), str(item.get("reason", ""))[:200])
    out = []
    for i, hit in enumerate(hits, 1):
        if i in by_id:
            out.append(Judgement(hit.passage_id, *by_id[i]))
        else:
            out.append(Judgement(hit.passage_id, UNJUDGED_SCORE, "not judged", judged=False))
    missed = sum(not j.judged for j in out)
    if missed:
        log.warning("judge: %d of %d passages not judged by the LLM; kept with score %d", missed, len(hits),
                    UNJUDGED_SCORE)
    return out


class RelevanceJudge:
    """Judges `Hit` lists with an `LLM`. See the module docstring."""

    def __init__(self, llm: LLM, config: JudgeConfig | None = None) -> None:
        self.llm = llm
        self.config = config or JudgeConfig()
        self.prompt = load_prompt("judge")

    def judge(self, query: str, hits: list[Hit]) -> list[Judgement]:
        """A `Judgement` for each hit, in the order given, ``batch_size`` passages per LLM call."""
        out: list[Judgement] = []
        size = self.config.batch_size
        for start in range(0, len(hits), size):
            out.extend(self._judge_batch(query, hits[start:start + size]))
        return out

    def filter(self, query: str, hits: list[Hit]) -> list[Hit]:
        """The top ``candidates`` hits judged, filtered and ordered by level; the rest appended unjudged.

        Ranks are renumbered, scores made descending; each judged hit carries ``scores['judge']``.
        """
        head, tail = hits[: self.config.candidates], hits[self.config.candidates:]
        judged = self.judge(query, head)
        kept = [(j.score, i, h) for i, (h, j) in enumerate(zip(head, judged, strict=True))
                if j.score >= self.config.min_score]
        kept.sort(key=lambda t: (-t[0], t[1]))
        ordered = [dataclasses.replace(h, scores={**h.scores, "judge": float(s)}) for s, _, h in kept] + list(tail)
        if len(kept) < len(head):
            log.info("judge: dropped %d of %d passages scored below %d", len(head) - len(kept), len(head),
                     self.config.min_score)
        return [
            dataclasses.replace(h, rank=i + 1, score=float(len(ordered) - i),
                                scores={**h.scores, "fused": h.scores.get("fused", h.score)})
            for i, h in enumerate(ordered)
        ]

    def _judge_batch(self, query: str, batch: list[Hit]) -> list[Judgement]:
        n = len(batch)
        room = prompt_room(self.llm, self.prompt, self.prompt.max_tokens, passages="", question=query, n=str(n))
        text = passages_text(batch, self.llm, room, self.config.passage_tokens, stage="judge")
        schema = copy.deepcopy(self.prompt.schema) or {}
        judgments = schema["properties"]["judgments"]
        judgments["maxItems"] = n
        judgments["items"]["properties"]["id"]["maximum"] = n
        data, _ = self.llm.run_json(
            self.prompt.messages(passages=text, question=query, n=str(n)), schema, stage="judge",
            max_tokens=self.prompt.max_tokens,
        )
        return parse_judgements(data, batch)

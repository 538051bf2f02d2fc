"""Typed records passed between pipeline stages.

Stages never pass dicts to each other: a corpus reader yields `Passage`, the chunker `Chunk`, a retriever
`Hit` lists, and every LLM call is recorded as an `LLMCall` so that benchmarks read real figures.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal  # Any: the values of to_json's JSON objects

Speaker = Literal["user", "agent", "system"]
#: what a turn does: answer from the passages, decline (the fixed IDK sentence), ask a clarifying question, or reply
#: to small talk (thanks, greetings) without retrieval
Kind = Literal["answer", "decline", "clarify", "chitchat"]


@dataclass(frozen=True, slots=True)
class Passage:
    """A passage of a corpus: the unit that MTRAG scores (its official ``_id``)."""

    id: str
    text: str
    title: str = ""
    url: str = ""
    doc_id: str = ""
    page: int = 0  # page (PDF) or slide (PPTX) number; 0 when the format has none
    section: str = ""  # the heading in effect where the passage starts
    # (character offset, heading) of the headings inside the text: the chunker gives each chunk its nearest one
    headings: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Chunk:
    """A window of a passage, as indexed. ``start``/``end`` are character offsets into the passage text."""

    id: str
    passage_id: str
    doc_id: str
    text: str
    title: str = ""
    url: str = ""
    start: int = 0
    end: int = 0
    page: int = 0
    section: str = ""  # nearest section heading (the contextual chunk header carries it into both indexes)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Hit:
    """One retrieved passage. ``scores`` holds each retriever's score (e.g. ``bm25:lastturn``) beside the fused one."""

    passage_id: str
    score: float
    rank: int = 0
    source: str = ""
    chunk_id: str = ""
    title: str = ""
    text: str = ""
    url: str = ""
    doc_id: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    page: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation, in the official MTRAG ``input`` shape (speaker + text)."""

    speaker: Speaker
    text: str


@dataclass(slots=True)
class Conversation:
    """A conversation up to (and including) the user turn to answer."""

    turns: list[Turn]
    id: str = ""

    @property
    def last_user_turn(self) -> str:
        for turn in reversed(self.turns):
            if turn.speaker == "user":
                return turn.text
        return ""

    @property
    def user_turns(self) -> list[str]:
        return [t.text for t in self.turns if t.speaker == "user"]

    def to_json(self) -> list[dict[str, str]]:
        return [{"speaker": t.speaker, "text": t.text} for t in self.turns]


@dataclass(frozen=True, slots=True)
class Query:
    """A query variant: its text, where it came from (``lastturn``, ``rewrite``, ``keywords``...) and its fusion weight."""

    text: str
    mode: str = "lastturn"
    weight: float = 1.0


@dataclass(slots=True)
class LLMCall:
    """One LLM invocation, with token counts and times, as every stage records it."""

    stage: str
    prompt_tokens: int
    completion_tokens: int
    prefill_s: float
    decode_s: float
    total_s: float
    prompt: str = ""
    response: str = ""
    #: prompt tokens taken from a cached KV prefix instead of being prefilled (llama.cpp; 0 elsewhere)
    cached_tokens: int = 0
    #: prompt-lookup decoding (llama.cpp, ``llm.prompt_lookup``): draft tokens proposed, and those the model accepted
    drafted_tokens: int = 0
    accepted_tokens: int = 0

    @property
    def decode_tokens_per_s(self) -> float:
        return self.completion_tokens / self.decode_s if self.decode_s > 0 else 0.0

    @property
    def prefill_tokens_per_s(self) -> float:
        return self.prompt_tokens / self.prefill_s if self.prefill_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Decision:
    """What the decision stage chose for a turn (`local_rag.decide`), before any generation.

    ``scores``: the probability of each kind the model gave; ``confidence``: that of ``kind``; ``options``: for
    ``clarify``, the things the passages show that the turn may mean (titles or entities); ``reason``: why, in
    words (``"no trained decider: always answer"``, ``"chitchat pattern"``, ``"model"``); ``latency_s``: the
    stage's time.
    """

    kind: Kind
    confidence: float = 1.0
    scores: dict[str, float] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)
    reason: str = ""
    latency_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

"""Typed records passed between pipeline stages.

Stages never pass dicts to each other: a corpus reader yields `Passage`, the chunker `Chunk`, a retriever
`Hit` lists, and every LLM call is recorded as an `LLMCall` so that benchmarks read real figures. A turn ends as a
`TurnResult`: its `Answer` (with `Citation`s), the queries, the passages, the `Decision` and the `TraceStep`s.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, NotRequired, TypedDict  # Any: the values of to_json's JSON objects

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
    line: int = 0  # the file's line the passage begins on (source code: `Document.first_line`); 0 when not counted


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
    line: int = 0  # the file's line the chunk begins on (source code); 0, and not written, for the rest

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.line:
            del out["line"]  # an index of documents writes the chunk files it wrote before
        return out


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
    section: str = ""  # the heading in effect where its chunk starts (documents with headings; "" for MTRAG)
    line: int = 0  # the file's line its chunk begins on (source code), else 0

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


@dataclass
class Citation:
    """A passage an answer cites, by its number in the prompt (``[n]``)."""

    n: int
    passage_id: str
    title: str = ""
    url: str = ""
    doc_id: str = ""
    page: int = 0
    section: str = ""
    line: int = 0

    @classmethod
    def of(cls, n: int, hit: Hit) -> Citation:
        return cls(n, hit.passage_id, hit.title, hit.url, hit.doc_id, hit.page, hit.section, hit.line)

    @property
    def where(self) -> str:
        """Where the passage is, as a reader looks it up: ``report.pdf p. 12``, a piece of a long file by its section
        (``guide.md § Installing``; the file alone for the first piece, whose section is the file's title), else the
        passage id.

        Example:
            >>> Citation(1, "guide.md#s3", doc_id="guide.md", section="Installing").where
            'guide.md § Installing'
            >>> Citation(1, "src/store.py#s2", "store.py", doc_id="src/store.py", section="def load(path)", line=42).where
            'src/store.py:42 § def load(path)'
        """
        if self.page and self.doc_id:
            return f"{self.doc_id} p. {self.page}"
        if self.line and self.doc_id:  # source code: the line, as an editor or a terminal opens it
            place = f"{self.doc_id}:{self.line}"
            return place if not self.section or self.section == self.title else f"{place} § {self.section}"
        if self.section and self.doc_id and self.passage_id != self.doc_id:
            return self.doc_id if self.section == self.title else f"{self.doc_id} § {self.section}"
        return self.passage_id

    @property
    def label(self) -> str:
        """The title and `where`, as ``ask``, ``chat``, the demo and the server print a source (the title once).

        Example:
            >>> Citation(1, "guide.md#s3", "Setup", doc_id="guide.md", section="Installing").label
            'Setup (guide.md § Installing)'
            >>> Citation(1, "guide.md#s0", "Setup", doc_id="guide.md", section="Setup").label
            'Setup (guide.md)'
        """
        where = self.where
        return f"{self.title} ({where})" if self.title and self.title != where else where


@dataclass
class Answer:
    """What a turn produced. ``kind`` is ``answer``, ``decline`` (the fixed IDK sentence), ``clarify`` or
    ``chitchat`` (`Kind`)."""

    text: str
    kind: Kind = "answer"
    citations: list[Citation] = field(default_factory=list)
    invalid_citations: int = 0
    passages: list[Hit] = field(default_factory=list)
    raw: str = ""
    call: LLMCall | None = None
    attributed: int = 0  # citations added by word overlap (`local_rag.llm.attribute`), not written by the model
    #: the generator's mean log-probability of beginning with its decline sentence (``generate.idk_gate``), when scored
    idk_score: float | None = None
    #: the gate that declined before a word was written (``idk``: the generator's own P(IDK)); None otherwise
    gate: Literal["idk"] | None = None

    def sources(self) -> tuple[list[Citation], bool]:
        """What a reader is shown as the answer's sources: its citations (True), or, when it cites none, the passages
        it was written from, numbered as the model saw them (False); a decline, a clarifying question or small talk
        cites what it cites (usually nothing)."""
        if self.citations or self.kind != "answer":
            return self.citations, True
        return [Citation.of(n, hit) for n, hit in enumerate(self.passages, 1)], False

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["passages"] = [h.to_json() for h in self.passages]
        if self.call is not None:
            data["call"] = {k: v for k, v in self.call.to_json().items() if k not in ("prompt", "response")}
        return data


TraceType = Literal["skip", "compress", "gate", "warm", "scope", "dates", "think", "search", "information", "invalid", "answer", "error"]


class TraceStep(TypedDict):
    """One step of a turn's trace, already in its JSON shape. The pipeline writes ``skip`` (a stage not run: ``stage``,
    ``text``), ``compress`` (the evidence kept) and ``gate`` (a gate declined: ``stage`` ``draft``, the draft gate after
    generation, or ``idk``, the generator's own P(IDK) before it writes; ``text``), ``warm`` (a stage's prompt prefix
    prefilled between turns: ``stage``, ``tokens``, ``latency_s``), ``scope`` (the turn searched some documents only:
    ``text``, ``documents``), ``dates`` (the days a turn's relative dates name, written into it: ``text``); the
    agentic mode ``think``, ``search`` (``query``, ``latency_s``), ``information`` (``passage_ids``, ``numbers``),
    ``invalid`` (``problem``), ``answer`` (``forced``) and ``error``."""

    type: TraceType
    text: NotRequired[str]
    stage: NotRequired[str]
    query: NotRequired[str]
    latency_s: NotRequired[float]
    passage_ids: NotRequired[list[str]]
    numbers: NotRequired[list[int]]
    problem: NotRequired[str]
    forced: NotRequired[bool]
    sentences_kept: NotRequired[int]
    sentences: NotRequired[int]
    passages_kept: NotRequired[int]
    tokens_before: NotRequired[int]
    tokens_after: NotRequired[int]
    tokens: NotRequired[int]
    documents: NotRequired[int]


@dataclass
class TurnResult:
    """Everything one turn produced: the answer, the queries, the passages at each step, timings, LLM calls."""

    answer: Answer
    queries: list[Query]
    retrieved: list[Hit]
    passages: list[Hit]
    timings: dict[str, float] = field(default_factory=dict)
    llm_calls: list[LLMCall] = field(default_factory=list)
    trace: list[TraceStep] = field(default_factory=list)  # agentic: think / search / information / answer; pipeline: skip, compress
    decision: Decision | None = None  # the decision stage's choice (local_rag.decide)
    # the support check of the answer's sentences, as its JSON (`local_rag.decide.support.SupportReport.to_json`;
    # Any: that record lives in its stage, above this module)
    support: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer.text,
            "kind": self.answer.kind,
            "citations": [c.__dict__ for c in self.answer.citations],
            "invalid_citations": self.answer.invalid_citations,
            "queries": [{"mode": q.mode, "text": q.text} for q in self.queries],
            "passages": [h.to_json() for h in self.passages],
            "retrieved": [{"passage_id": h.passage_id, "score": h.score, "scores": h.scores} for h in self.retrieved],
            "timings_s": self.timings,
            "llm_calls": [{k: v for k, v in c.to_json().items() if k not in ("prompt", "response")} for c in self.llm_calls],
            **({"trace": self.trace} if self.trace else {}),
            **({"decision": self.decision.to_json()} if self.decision else {}),
            **({"support": self.support} if self.support else {}),
        }

"""Evidence compression: the sentences of the passages that matter for the question, within a token budget.

On two CPU cores most of a turn is the LLM prefilling its prompt, and most of that prompt is five whole passages
(up to 300 tokens each). Here each passage is split into sentences, every sentence is scored against the question
(the standalone rewrite when there is one), and the best are kept until ``evidence.budget_tokens`` LLM tokens are
used. Kept sentences stay in their passage and in their order; a passage with none kept is left out; the passages
keep their relative order, so citation ``[n]`` still maps to the passage its sentences come from
(`Selection.hits[n-1].passage_id`). Scorers: cosine with the index's embedder (MiniLM, milliseconds), or the
cross-encoder of ``reranker`` (slower, stronger).

Example:
    >>> from local_rag.records import Hit
    >>> hits = [Hit("p1", 1.0, text="Bees make honey. Cows eat grass."), Hit("p2", 0.5, text="Honey is sweet.")]
    >>> scorer = lambda q, texts: [float("honey" in t.lower()) for t in texts]
    >>> sel = select_sentences("what about honey?", hits, scorer, budget=8, count=lambda t: len(t.split()))
    >>> [(h.passage_id, h.text) for h in sel.hits]
    [('p1', 'Bees make honey.'), ('p2', 'Honey is sweet.')]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from local_rag.records import Hit, TraceStep
from local_rag.settings import EvidenceConfig
from local_rag.text import TokenCounter, split_sentences

if TYPE_CHECKING:
    from local_rag.embed.base import Embedder

Scorer = Callable[[str, list[str]], Sequence[float]]  # (question, texts) -> relevance, higher is better


class Relevance(Protocol):
    """A model scoring texts against a query: the cross-encoder (`local_rag.rerank.base.Reranker`, a stage beside
    this one, hence a protocol rather than an import)."""

    def score(self, query: str, texts: list[str]) -> list[float]: ...

_GAP = " … "  # between kept sentences that were not adjacent in the passage
_LABEL_TOKENS = 6  # "[n] " and the line break, as `local_rag.llm.budget.fit_passages` counts them


@dataclass
class Sentence:
    """One sentence of a passage: which passage (index into the hits), its position there, text, tokens, score."""

    passage: int
    position: int
    text: str
    tokens: int
    score: float = 0.0


@dataclass
class Selection:
    """What compression kept: the shortened hits (passage order kept) and the figures for the trace."""

    hits: list[Hit]
    sentences: list[Sentence] = field(default_factory=list)
    tokens_before: int = 0
    tokens_after: int = 0
    sentences_total: int = 0

    def note(self) -> TraceStep:
        """The trace entry of this stage."""
        return {"type": "compress", "stage": "compress", "sentences_kept": len(self.sentences),
                "sentences": self.sentences_total, "passages_kept": len(self.hits), "tokens_before": self.tokens_before,
                "tokens_after": self.tokens_after,
                "text": f"evidence: {len(self.sentences)} of {self.sentences_total} sentences, "
                        f"{self.tokens_after} of {self.tokens_before} tokens"}


def _header(hit: Hit) -> str:
    return f"{hit.title}: " if hit.title else ""


def select_sentences(question: str, hits: list[Hit], score: Scorer, budget: int, count: TokenCounter,
                     max_sentence_tokens: int = 80, min_sentences: int = 1, join_wrapped: bool = False) -> Selection:
    """The best-scoring sentences of ``hits`` within ``budget`` tokens (see the module docstring).

    Args:
        question: what the sentences are scored against.
        hits: the passages the generator would get, best first.
        score: the scorer, ``(question, texts) -> scores``.
        budget: tokens of evidence at most, counted as the generator's prompt renders it (title, label, text).
        count: the LLM's token counter.
        max_sentence_tokens: longer sentences are cut at word boundaries first.
        min_sentences: this many of the best sentences are kept even past the budget.
        join_wrapped: read hard-wrapped lines as prose (`local_rag.text.split_sentences`).
    """
    sentences: list[Sentence] = []
    before = 0
    for i, hit in enumerate(hits):
        before += count(_header(hit) + " ".join(hit.text.split())) + _LABEL_TOKENS
        for j, text in enumerate(split_sentences(hit.text, count, max_sentence_tokens, join_wrapped=join_wrapped)):
            sentences.append(Sentence(i, j, text, count(text) + 1))  # + the joining space
    if not sentences:
        return Selection([], [], before, 0, 0)
    for s, value in zip(sentences, score(question, [s.text for s in sentences]), strict=True):
        s.score = float(value)
    used = 0
    opened: set[int] = set()
    kept: list[Sentence] = []
    for rank, s in enumerate(sorted(sentences, key=lambda s: (-s.score, s.passage, s.position))):
        cost = s.tokens + (0 if s.passage in opened else count(_header(hits[s.passage])) + _LABEL_TOKENS)
        if used + cost > budget and rank >= min_sentences:
            continue
        kept.append(s)
        opened.add(s.passage)
        used += cost
    kept.sort(key=lambda s: (s.passage, s.position))
    out: list[Hit] = []
    for i, hit in enumerate(hits):
        mine = [s for s in kept if s.passage == i]
        if not mine:
            continue
        text = mine[0].text
        for prev, s in zip(mine, mine[1:], strict=False):
            text += (" " if s.position == prev.position + 1 else _GAP) + s.text
        out.append(Hit(**{**hit.to_json(), "text": text}))
    after = sum(count(_header(h) + h.text) + _LABEL_TOKENS for h in out)
    return Selection(out, kept, before, after, len(sentences))


def embedding_scorer(embedder: Embedder) -> Scorer:
    """Cosine of each text to the question with an `local_rag.embed.base.Embedder` (vectors are normalized)."""

    def score(question: str, texts: list[str]) -> list[float]:
        q = embedder.embed([question], kind="query")[0]
        return [float(v) for v in embedder.embed(texts, kind="passage") @ q]

    return score


def cross_encoder_scorer(reranker: Relevance) -> Scorer:
    """The cross-encoder's relevance of each text to the question (`local_rag.rerank.base.Reranker.score`)."""
    return lambda question, texts: reranker.score(question, texts)


class Compressor:
    """The pipeline's compression stage: `select_sentences` with the scorer and budget of ``evidence`` settings.

    Args:
        config: the ``evidence`` settings.
        retriever: the turn's retriever; its dense embedder scores sentences (no second copy of the model). Without
            one (a BM25-only index) the embedder of ``embedder`` settings is loaded.
        reranker: a callable returning the cross-encoder (or None), called only when ``config.scorer`` asks for it.
        embedder: loads an embedder when the retriever has none (``() -> Embedder``).
    """

    def __init__(self, config: EvidenceConfig, retriever: object = None, reranker: Callable[[], Relevance | None] | None = None,
                 embedder: Callable[[], Embedder] | None = None) -> None:
        self.config = config
        self._retriever = retriever
        self._reranker = reranker
        self._embedder = embedder
        self._score: Scorer | None = None

    def scorer(self) -> Scorer:
        if self._score is None:
            cross = self.config.scorer == "cross-encoder"
            reranker = self._reranker() if cross and self._reranker is not None else None
            if reranker is not None:
                self._score = cross_encoder_scorer(reranker)
            else:  # the embedder's cosine, also when the cross-encoder is missing (reranker.fallback: skip)
                dense = getattr(self._retriever, "retrievers", {}).get("dense")
                model = getattr(dense, "embedder", None)
                if model is None and self._embedder is not None:
                    model = self._embedder()
                if model is None:
                    from local_rag.errors import SettingsError

                    raise SettingsError("evidence.compress needs an embedder: a dense index, or evidence.scorer: cross-encoder")
                self._score = embedding_scorer(model)
        return self._score

    def select(self, question: str, hits: list[Hit], count: TokenCounter) -> Selection:
        cfg = self.config
        return select_sentences(question, hits, self.scorer(), cfg.budget_tokens, count, cfg.max_sentence_tokens,
                                cfg.min_sentences, cfg.join_wrapped)

"""The `Reranker` interface: backends implement `Reranker.score`; `Reranker.rerank` orders hits by it. Backends
register themselves here; `local_rag.rerank.loader` imports them and picks one."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path

from local_rag.records import Hit, Query
from local_rag.settings import RerankerConfig
from local_rag.text import split_sentences


class Reranker(ABC):
    name: str = ""
    backend: str = ""

    def __init__(self, config: RerankerConfig) -> None:
        self.config = config

    @abstractmethod
    def score(self, query: str, texts: list[str]) -> list[float]:
        """Relevance of each text to ``query`` (higher is better), in input order."""

    def rerank(self, query: str, hits: list[Hit], top_k: int | None = None) -> list[Hit]:
        """The first ``config.candidates`` hits reordered by cross-encoder score (ties keep their prior order), or with
        ``config.prior_weight`` by its fusion with their prior order; the rest follow unchanged. Each reranked hit keeps its prior score in ``scores`` and gets ``scores['cross-encoder']``.

        Example:
            >>> reranker.rerank("what is rrf?", hits)[0].passage_id  # doctest: +SKIP
        """
        head = hits[: self.config.candidates]
        if not head:
            return list(hits)
        return with_scores(hits, self.score_hits(query, head), self.config, top_k)

    def score_hits(self, query: str, hits: list[Hit]) -> list[float]:
        """`score` of each hit's `passage_text`; with ``config.unit: sentence``, of its best sentence (under its
        title; one model call for all the sentences of ``hits``)."""
        if self.config.unit == "passage":
            return self.score(query, [passage_text(h) for h in hits])
        pieces = [sentence_texts(h) for h in hits]
        flat = self.score(query, [text for piece in pieces for text in piece]) if any(pieces) else []
        out, start = [], 0
        for piece in pieces:
            out.append(max(flat[start : start + len(piece)], default=float("-inf")))
            start += len(piece)
        return out


def passage_text(hit: Hit) -> str:
    """What the cross-encoder reads of a passage: its title and text."""
    return f"{hit.title}\n{hit.text}" if hit.title else hit.text


def sentence_texts(hit: Hit) -> list[str]:
    """What a sentence-unit cross-encoder reads of a passage: each sentence under the passage's title.

    Example:
        >>> sentence_texts(Hit("d1", 1.0, 1, "bm25", text="It rains. It pours.", title="Weather"))
        ['Weather\\nIt rains.', 'Weather\\nIt pours.']
    """
    return [f"{hit.title}\n{s}" if hit.title else s for s in split_sentences(hit.text)]


def with_scores(hits: list[Hit], scores: list[float], config: RerankerConfig, top_k: int | None = None) -> list[Hit]:
    """`Reranker.rerank` given the cross-encoder ``scores`` of the first ``len(scores)`` hits (e.g. cached ones)."""
    head, tail = hits[: len(scores)], hits[len(scores) :]
    final = scores
    if config.prior_weight > 0:  # RRF of the cross-encoder's order and the first stage's
        by_ce = sorted(range(len(head)), key=lambda i: (-scores[i], i))
        ce_rank = {i: r for r, i in enumerate(by_ce, start=1)}
        final = [1.0 / (60 + ce_rank[i]) + config.prior_weight / (60 + i + 1) for i in range(len(head))]
    order = sorted(range(len(head)), key=lambda i: (-final[i], i))
    out = []
    for rank, i in enumerate(order, start=1):
        hit = head[i]
        out.append(Hit(**{
            **hit.to_json(), "score": float(final[i]), "rank": rank, "source": "cross-encoder",
            "scores": {**hit.scores, "fused": hit.score, "cross-encoder": float(scores[i])},
        }))
    for rank, hit in enumerate(tail, start=len(out) + 1):
        out.append(Hit(**{**hit.to_json(), "rank": rank}))
    return out[:top_k] if top_k else out


def reranked(search: Callable[[list[Query]], list[Hit]], reranker: Reranker,
             question: Callable[[list[Query]], str]) -> Callable[[list[Query]], list[Hit]]:
    """``search`` followed by cross-encoder reranking against ``question(queries)`` (e.g. the standalone rewrite)."""

    def wrapped(queries: list[Query]) -> list[Hit]:
        return reranker.rerank(question(queries), search(queries))

    return wrapped


_REGISTRY: dict[str, Callable[[RerankerConfig, Path], Reranker]] = {}


def register_reranker(name: str) -> Callable[[Callable[[RerankerConfig, Path], Reranker]], Callable[[RerankerConfig, Path], Reranker]]:
    def wrap(factory: Callable[[RerankerConfig, Path], Reranker]) -> Callable[[RerankerConfig, Path], Reranker]:
        _REGISTRY[name] = factory
        return factory

    return wrap

"""The `Reranker` interface: backends implement `Reranker.score`; `Reranker.rerank` orders hits by it. Backends
register themselves here; `local_rag.rerank.loader` imports them and picks one."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path

from local_rag.records import Hit, Query
from local_rag.settings import RerankerConfig


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
        texts = [passage_text(h) for h in head]
        return with_scores(hits, self.score(query, texts), self.config, top_k)


def passage_text(hit: Hit) -> str:
    """What the cross-encoder reads of a passage: its title and text."""
    return f"{hit.title}\n{hit.text}" if hit.title else hit.text


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

"""Hybrid retrieval: every retriever x every query variant, fused into one ranked list per turn."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np

from local_rag.embed.base import Embedder
from local_rag.index.folder import IndexFolder
from local_rag.records import Hit, Query
from local_rag.retrieve.fusion import fuse, list_weight
from local_rag.retrieve.learned import LearnedFusion
from local_rag.retrieve.queries import QUERY_MODES
from local_rag.retrieve.retrievers import BM25Retriever, DenseRetriever, LearnedSparseRetriever, Retriever
from local_rag.retrieve.scope import Scope, ScopedRows, document_table, document_titles, resolve
from local_rag.settings import Settings

log = logging.getLogger("local_rag.retrieve")
MAX_SCOPES = 16  # resolved scopes kept per opened index (a server's clients each asking about other documents)


def learned_fusion(settings: Settings) -> LearnedFusion | None:
    """The trained fusion model when ``fusion.method`` is ``learned``; without one, None (RRF) with a warning, or an
    error under ``fusion.fallback: error``."""
    cfg = settings.fusion
    if cfg.method != "learned":
        return None
    from local_rag.errors import ModelError
    from local_rag.retrieve.learned import load_fusion

    try:
        fusion = load_fusion(cfg.model, settings.models_dir)
    except ModelError as exc:
        if cfg.fallback == "error":
            raise
        log.warning("no trained fusion model (%s): reciprocal rank fusion instead; build one with `local-rag train fusion`", exc)
        return None
    missing = [m for m in fusion.modes if m in QUERY_MODES and m not in settings.retrieval.query_modes]
    if missing:
        log.warning("fusion model %s reads lists of query modes %s that retrieval.query_modes lacks: they count as absent",
                    cfg.model, ", ".join(missing))
    return fusion


def feedback_query(hits: Sequence[Hit], passages: int, words: int) -> str:
    """The text of a feedback search: the first ``words`` words of each of the top ``passages`` hits, in rank order.

    Example:
        >>> feedback_query([Hit("p1", 1.0, text="a b c"), Hit("p2", 0.5, text="d e")], passages=2, words=2)
        'a b d e'
    """
    return " ".join(" ".join((hit.text or "").split()[:words]) for hit in hits[:passages]).strip()


class HybridRetriever:
    """Runs the retrievers that settings name over all query variants and fuses the lists.

    ``last_timings`` holds the seconds spent per retriever (and in fusion) by the last call.

    Example:
        >>> hybrid = HybridRetriever(folder, settings, embedder)  # doctest: +SKIP
        >>> hits = hybrid.search([Query("what is rrf?")])  # doctest: +SKIP
    """

    def __init__(self, folder: IndexFolder, settings: Settings, embedder: Embedder | None = None) -> None:
        self.settings = settings
        self.embedder = embedder
        self.folder = folder
        self._documents: tuple[list[str], np.ndarray] | None = None  # `document_table`, read at the first scope
        self._document_titles: list[str] | None = None  # `document_titles`, read when a scope names a title
        self._scopes: dict[Scope, ScopedRows] = {}
        self.retrievers: dict[str, Retriever] = {}
        for name in settings.retrieval.retrievers:
            if name == "bm25" and folder.sparse is not None:
                self.retrievers[name] = BM25Retriever(folder)
            elif name == "dense" and folder.dense is not None and embedder is not None:
                self.retrievers[name] = DenseRetriever(folder, embedder)
            elif name == "bge-sparse" and folder.learned is not None and embedder is not None:
                self.retrievers[name] = LearnedSparseRetriever(folder, embedder)
        if not self.retrievers:
            from local_rag.errors import SettingsError

            raise SettingsError(
                f"no retriever can run: settings name {settings.retrieval.retrievers}, the index has "
                f"{'sparse ' if folder.sparse else ''}{'dense' if folder.dense else ''}"
            )
        self.last_timings: dict[str, float] = {}
        self.learned = learned_fusion(settings)
        if self.learned is not None and settings.retrieval.feedback.passages:
            log.warning("retrieval.feedback is skipped: the trained fusion model reads only the lists it was trained on")

    def documents(self) -> list[str]:
        """The index's document ids, sorted."""
        return self._table()[0]

    def _table(self) -> tuple[list[str], np.ndarray]:
        """`document_table` of the index, read once."""
        if self._documents is None:
            self._documents = document_table(self.folder.chunks)
        return self._documents

    def _titles(self) -> list[str]:
        """`document_titles` of the index, read once (only when a pattern names no document by its id)."""
        if self._document_titles is None:
            names, codes = self._table()
            self._document_titles = document_titles(self.folder.chunks, codes, len(names))
        return self._document_titles

    def scoped(self, scope: Scope | None, what: str = "--only") -> ScopedRows | None:
        """``scope`` resolved against this index (None: every document). The index's table of documents is read at
        the first scope (a scan of ``chunks.jsonl``), the rows of a scope once.

        Raises:
            BadInputError: a pattern of ``scope`` matches no document (``what``: how the user gave it).
        """
        if not scope:
            return None
        found = self._scopes.get(scope)
        if found is None:
            found = resolve(scope, *self._table(), index=self.settings.index, what=what,
                            source=self.folder.manifest.corpus_source, titles=self._titles)
            if len(self._scopes) >= MAX_SCOPES:
                self._scopes.clear()
            self._scopes[scope] = found
        return found

    def lists(self, batch: Sequence[Sequence[Query]], depth: int, only: Sequence[str] | None = None,
              scoped: ScopedRows | None = None) -> list[dict[str, list[Hit]]]:
        """Per turn, the ranked list of every ``retriever:mode`` (several texts of one mode get ``mode#i`` keys), from
        every retriever or from those named in ``only``; passages of ``scoped``'s documents only, when given."""
        out: list[dict[str, list[Hit]]] = [{} for _ in batch]
        self.last_timings = {}
        for name, retriever in self.retrievers.items():
            if only is not None and name not in only:
                continue
            flat = [(i, q) for i, queries in enumerate(batch) for q in queries]
            started = time.perf_counter()
            results = retriever.search([q.text for _, q in flat], k=depth, scoped=scoped)
            self.last_timings[name] = time.perf_counter() - started
            seen: dict[tuple[int, str], int] = {}
            for (i, query), hits in zip(flat, results, strict=True):
                n = seen.get((i, query.mode), 0)
                seen[(i, query.mode)] = n + 1
                key = f"{name}:{query.mode}" if n == 0 else f"{name}:{query.mode}#{n}"
                out[i][key] = hits
        return out

    def search_batch(self, batch: Sequence[Sequence[Query]], top_k: int | None = None,
                     scope: Scope | None = None) -> list[list[Hit]]:
        """Fused hits for each turn's query variants; equal to calling `search` on each turn. With ``scope``, only
        passages of the documents it names (`local_rag.retrieve.scope`).

        With ``retrieval.feedback.passages`` set, a second search follows: its query is the text of the fused list's
        top passages (`feedback_query`), its lists ``<retriever>:feedback`` join the first ones, and all are fused
        again.
        """
        cfg = self.settings
        top_k = top_k or cfg.retrieval.top_k
        scoped = self.scoped(scope)
        per_turn = self.lists(batch, cfg.retrieval.candidates, scoped=scoped)
        started = time.perf_counter()
        feedback = cfg.retrieval.feedback
        fused = [self._fuse(queries, lists, max(top_k, feedback.passages)) for queries, lists in zip(batch, per_turn, strict=True)]
        self.last_timings["fusion"] = time.perf_counter() - started
        if feedback.passages and self.learned is None:
            fused = self._feedback(batch, per_turn, fused, top_k, scoped)
        return [hits[:top_k] for hits in fused]

    def _fuse(self, queries: Sequence[Query], lists: dict[str, list[Hit]], top_k: int,
              extra: dict[str, float] | None = None) -> list[Hit]:
        cfg = self.settings
        weights = {**(extra or {}), **cfg.fusion.weights}
        for q in queries:
            # a query's own weight applies to its mode unless settings weight that mode explicitly
            weights.setdefault(q.mode, q.weight)
        if self.learned is not None:
            return self.learned.fuse(lists, top_k)
        if len(lists) == 1:
            only = next(iter(lists.values()))[:top_k]
            return [Hit(**{**h.to_json(), "scores": {next(iter(lists)): h.score}}) for h in only]
        method = "rrf" if cfg.fusion.method == "learned" else cfg.fusion.method  # learned without its model
        return fuse(lists, method, cfg.fusion.k, weights, top_k)

    def _feedback(self, batch: Sequence[Sequence[Query]], per_turn: list[dict[str, list[Hit]]], fused: list[list[Hit]],
                  top_k: int, scoped: ScopedRows | None = None) -> list[list[Hit]]:
        """The second round of pseudo-relevance feedback (a turn whose first round found no text keeps that round)."""
        cfg = self.settings.retrieval.feedback
        first = dict(self.last_timings)
        texts = {i: feedback_query(hits, cfg.passages, cfg.words) for i, hits in enumerate(fused)}
        todo = [i for i, text in texts.items() if text]
        extra = self.lists([[Query(texts[i], "feedback")] for i in todo], self.settings.retrieval.candidates, only=cfg.retrievers,
                           scoped=scoped)
        started = time.perf_counter()
        # a feedback list weighs its retriever's weight times feedback.weight, unless fusion.weights names it
        weights = {f"{name}:feedback": list_weight(name, self.settings.fusion.weights) * cfg.weight for name in cfg.retrievers}
        out = list(fused)
        for i, lists in zip(todo, extra, strict=True):
            out[i] = self._fuse(batch[i], {**per_turn[i], **lists}, top_k, weights)
        timings = {f"{name}:feedback": seconds for name, seconds in self.last_timings.items()}
        self.last_timings = {**first, **timings, "fusion": first.get("fusion", 0.0) + time.perf_counter() - started}
        return out

    def search(self, queries: Sequence[Query], top_k: int | None = None, scope: Scope | None = None) -> list[Hit]:
        return self.search_batch([queries], top_k, scope)[0]

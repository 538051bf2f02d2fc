"""Several indexes searched as one (``--also NAME``, settings ``retrieval.also``): a person's notes, mail and code
kept in their own indexes, asked about together.

Each index is searched with its own shape (chunking, BM25 parameters, vectors or not: `member_settings`). The indexes
searched by the same retrievers with the same embedding model (a family: the usual case) are ranked as one index
would rank them: each retriever's lists are merged across them before they are fused, the dense lists by their
cosine, BM25's by their scores (each index's own word statistics). So their passages come in one order, whichever
index holds them, not taken in turns. Families of other shapes (an index without vectors, one embedded by another
model), whose scores cannot be compared, are fused by rank, their best passages interleaved. A passage and its
document are named with their index first, ``mail:Inbox.mbox``, so citations say where each comes from and
``--only mail:*`` (or ``--only notes:reports``) keeps a search to one index or some of its documents; a pattern
without an index's name applies to each.

Example (``settings.index`` "notes", ``settings.retrieval.also`` ["mail"]):
    >>> joint = open_searcher(settings)  # doctest: +SKIP
    >>> [h.doc_id for h in joint.search([Query("when is the audit?")], top_k=3)]  # doctest: +SKIP
    ['notes:audit.md', 'mail:Inbox.mbox', 'notes:plan.md']
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from local_rag.embed.base import Embedder
from local_rag.errors import BadInputError
from local_rag.records import Hit, Query
from local_rag.retrieve.fusion import fuse
from local_rag.retrieve.hybrid import MAX_SCOPES, HybridRetriever
from local_rag.retrieve.retrievers import Retriever
from local_rag.retrieve.scope import Scope, ScopedRows
from local_rag.settings import Settings

__all__ = ["JointRetriever", "JointScope", "families", "member_settings", "split_name"]

SEPARATOR = ":"  # "mail:Inbox.mbox": an index's name never holds '/', and a document id rarely begins with "name:"


def split_name(name: str, indexes: Sequence[str]) -> tuple[str | None, str]:
    """``("mail", "Inbox.mbox")`` for ``"mail:Inbox.mbox"`` when ``mail`` is one of ``indexes``; ``(None, name)``
    otherwise (a pattern or id that names no index applies to each).

    Example:
        >>> split_name("mail:*.mbox", ["notes", "mail"]), split_name("reports/*", ["notes", "mail"])
        (('mail', '*.mbox'), (None, 'reports/*'))
    """
    head, sep, rest = name.partition(SEPARATOR)
    return (head, rest) if sep and head in indexes else (None, name)


@dataclass(frozen=True)
class JointScope:
    """A scope resolved against each index: its documents (named with their index) and, per index, its own rows
    (None: every document; absent: none of them)."""

    documents: tuple[str, ...]
    parts: dict[str, ScopedRows | None] = field(default_factory=dict)


class JointRetriever:
    """`HybridRetriever`'s interface over several indexes (the first one's settings fuse)."""

    def __init__(self, members: dict[str, HybridRetriever]) -> None:
        self.members = members  # index name -> its retriever, the first the index the settings name
        #: index name -> its family: the indexes searched by the same retrievers with the same embedding model, whose
        #: lists merge by score (their names joined: "notes+mail")
        self.families = families(members)
        first = next(iter(members.values()))
        self.settings: Settings = first.settings
        self.retrievers: dict[str, Retriever] = first.retrievers  # the first index's (the embeddings route's embedder)
        self.embedder: Embedder | None = first.embedder
        self.last_timings: dict[str, float] = {}
        self._scopes: dict[Scope, JointScope] = {}

    def documents(self) -> list[str]:
        """Every index's document ids, each named with its index, sorted."""
        return sorted(f"{name}{SEPARATOR}{d}" for name, member in self.members.items() for d in member.documents())

    def scoped(self, scope: Scope | None, what: str = "--only") -> JointScope | None:
        """``scope`` resolved against each index: a pattern that names an index (``mail:*``) applies to it alone, one
        that does not to each; a group of patterns may match in one index and not another.

        Raises:
            BadInputError: a group of patterns matches no document of any index.
        """
        if not scope:
            return None
        if scope in self._scopes:
            return self._scopes[scope]
        names = list(self.members)
        parts: dict[str, ScopedRows | None] = {}
        failed: list[tuple[str, BadInputError]] = []  # the indexes a group of patterns applied to and matched nothing in
        for name, member in self.members.items():
            groups = []
            for group in scope.groups:
                own = tuple(p for n, p in (split_name(g, names) for g in group) if n in (None, name))
                if not own:
                    break  # this index is named by none of the group's patterns
                groups.append(own)
            else:
                try:
                    parts[name] = member.scoped(Scope(tuple(groups)), what)
                except BadInputError as exc:
                    failed.append((name, exc))
        if not parts:
            if not failed:
                raise BadInputError(f"{what}: {scope.describe()} names no index of {', '.join(names)}")
            others = f" (nor of {', '.join(repr(n) for n, _ in failed[1:])})" if len(failed) > 1 else ""
            raise BadInputError(f"{failed[0][1]}{others}")
        found = JointScope(tuple(f"{name}{SEPARATOR}{d}" for name, rows in parts.items()
                                 for d in (rows.documents if rows is not None else self.members[name].documents())),
                           parts)
        if len(self._scopes) >= MAX_SCOPES:  # a server's requests may each name their own
            self._scopes.clear()
        self._scopes[scope] = found
        return found

    def search_batch(self, batch: Sequence[Sequence[Query]], top_k: int | None = None,
                     scope: Scope | None = None) -> list[list[Hit]]:
        """Fused hits for each turn's query variants over every index (see the module)."""
        cfg = self.settings
        top_k = top_k or cfg.retrieval.top_k
        joint = self.scoped(scope)
        merged: dict[str, list[dict[str, list[Hit]]]] = {}  # family -> per turn, its lists merged across its indexes
        self.last_timings = {}
        for name, member in self.members.items():
            if joint is not None and name not in joint.parts:
                continue  # the scope holds none of its documents
            per_turn = member.lists(batch, member.settings.retrieval.candidates,
                                    scoped=joint.parts[name] if joint is not None else None)
            for key, seconds in member.last_timings.items():
                self.last_timings[f"{name}.{key}"] = seconds
            family = merged.setdefault(self.families[name], [{} for _ in batch])
            for i, lists in enumerate(per_turn):
                for key, hits in lists.items():
                    family[i].setdefault(key, []).extend(named(h, name) for h in hits)
        started = time.perf_counter()
        out = []
        for i, queries in enumerate(batch):
            fused = {family: self._fuse(queries, lists[i], top_k) for family, lists in merged.items()}
            fused = {family: hits for family, hits in fused.items() if hits}
            if len(fused) > 1:  # indexes of other shapes: their rankings interleaved by rank
                out.append(fuse(fused, "rrf", cfg.fusion.k, {}, top_k))
            else:
                out.append(next(iter(fused.values()), []))
        self.last_timings["fusion"] = time.perf_counter() - started
        return out

    def _fuse(self, queries: Sequence[Query], lists: dict[str, list[Hit]], top_k: int) -> list[Hit]:
        """One family's lists (merged across its indexes, each cut to the candidates) fused as one index's are."""
        cfg = self.settings
        depth = cfg.retrieval.candidates
        lists = {k: sorted(v, key=lambda h: (-h.score, h.passage_id))[:depth] for k, v in lists.items() if v}
        if not lists:
            return []
        if len(lists) == 1:  # one list (one retriever, one query): its own scores, as one index gives them
            key, only = next(iter(lists.items()))
            return [replace(h, rank=rank, scores={key: h.score}) for rank, h in enumerate(only[:top_k], 1)]
        weights = {q.mode: q.weight for q in queries} | dict(cfg.fusion.weights)
        method = "rrf" if cfg.fusion.method == "learned" else cfg.fusion.method  # a learned fusion knows one index
        return fuse(lists, method, cfg.fusion.k, weights, top_k)

    def search(self, queries: Sequence[Query], top_k: int | None = None, scope: Scope | None = None) -> list[Hit]:
        return self.search_batch([queries], top_k, scope)[0]


def families(members: dict[str, HybridRetriever]) -> dict[str, str]:
    """Each index's family (see `JointRetriever.families`).

    Example:
        >>> families({"notes": hybrid_minilm, "mail": hybrid_minilm_2, "chats": bm25_only})  # doctest: +SKIP
        {'notes': 'notes+mail', 'mail': 'notes+mail', 'chats': 'chats'}
    """
    shapes: dict[str, tuple[tuple[str, ...], str | None]] = {
        name: (tuple(sorted(m.retrievers)), m.embedder.checksum if m.embedder is not None else None)
        for name, m in members.items()}
    groups: dict[tuple[tuple[str, ...], str | None], list[str]] = {}
    for name, shape in shapes.items():
        groups.setdefault(shape, []).append(name)
    return {name: "+".join(groups[shape]) for name, shape in shapes.items()}


def named(hit: Hit, index: str) -> Hit:
    """``hit`` with its passage, chunk and document named with ``index`` first."""
    return replace(hit, passage_id=f"{index}{SEPARATOR}{hit.passage_id}", doc_id=f"{index}{SEPARATOR}{hit.doc_id}",
                   chunk_id=f"{index}{SEPARATOR}{hit.chunk_id}" if hit.chunk_id else "")


def member_settings(settings: Settings, name: str) -> Settings:
    """The settings that search index ``name`` beside ``settings.index``: these, with the index's own chunking and
    BM25 parameters (`local_rag.index.folder.with_index_chunking`, `with_index_bm25`), its embedding model when it
    was built with another (by the name its manifest gives), and BM25 alone when it has no vectors.

    Raises:
        IndexError_: no index ``name``, or a manifest that cannot be read.
    """
    from local_rag.index.folder import with_index_bm25, with_index_chunking
    from local_rag.index.manifest import IndexManifest

    own = settings.model_copy(update={"index": name}, deep=True)
    manifest = IndexManifest.load(own.index_dir)
    own = with_index_bm25(with_index_chunking(own, manifest), manifest)
    own.retrieval.also = []
    if manifest.dense is None:
        own.dense.enabled = False
        own.retrieval.retrievers = [r for r in own.retrieval.retrievers if r == "bm25"] or ["bm25"]
    elif isinstance(model := manifest.dense.get("model"), str) and model and model != own.embedder.model:
        own.embedder.model = model
    return own

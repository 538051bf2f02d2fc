"""OpenAI's vector store search over the served index: ``GET /v1/vector_stores``, ``GET /v1/vector_stores/{id}``
and ``POST /v1/vector_stores/{id}/search`` (the `openai` client's ``vector_stores.list``, ``retrieve`` and
``search``).

A tool that brings its own LLM (an agent framework, a script, an editor's assistant) can search a person's documents
through the API it already speaks, without local-rag writing an answer: the search is the pipeline's retrieval alone
(hybrid BM25 + dense, the index's adaptation, and the cross-encoder when the server runs it), in milliseconds, with
no LLM call and no place in the answering queue. The index is a vector store whose id is its name; each collection
of ``serve --collection NAME=PATTERN`` is one more, ``<index>:NAME``, searching its documents only. Nothing is
created, uploaded or deleted here: an index is built and kept in step with its folder by ``local-rag index``.

A result is a chunk: ``file_id`` and ``filename`` are its document's id (for an index of a folder, the file's path
in it), ``content`` its text, ``attributes`` where it is (title, section, page, line, passage id, url); ``score`` is
local-rag's own (the fused rank score, or the cross-encoder's when it re-ranked), higher is better, not a 0-1
similarity, and ``ranking_options.score_threshold`` is on that scale. ``filters`` on the document
(``{"type": "eq" | "in", "key": "filename", "value": ...}``, combined by ``and``/``or``) keep the search to those
documents (a value is a document's id or a pattern, as ``--only`` takes them); ``rewrite_query`` is refused: a query
is searched as written (``/v1/chat/completions`` rewrites a conversation's turn).

Example:
    >>> page = client.vector_stores.search(vector_store_id="docs", query="how are lists fused?")  # doctest: +SKIP
    >>> page.data[0].filename, page.data[0].content[0].text[:40]  # doctest: +SKIP
    ('design.md', 'Reciprocal rank fusion merges ranked lis')
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any  # Any: the JSON of requests and responses

from local_rag.errors import BadInputError
from local_rag.records import Hit
from local_rag.retrieve.scope import IndexDocument, Scope
from local_rag.server.errors import ApiError, strings_request
from local_rag.settings import Settings

if TYPE_CHECKING:
    from local_rag.index.manifest import IndexManifest
    from local_rag.pipeline import Pipeline

__all__ = ["MAX_RESULTS", "SearchRequest", "VectorStores", "filter_groups", "parse_search"]

MAX_RESULTS = 50  # OpenAI's range for max_num_results: 1 to 50 (default 10)
MAX_CONTENT_CHARS = 5_000_000  # a document's text through the files API (a book is ~1 MB)
MAX_QUERIES = 10  # a query may be a list of strings; their lists are fused as query variants
_DOCUMENT_KEYS = ("filename", "file_id", "document")  # what a filter may name a document by


@dataclass(frozen=True)
class SearchRequest:
    """A vector store search, checked."""

    queries: tuple[str, ...]
    max_results: int = 10
    rerank: bool = True  # ``ranking_options.ranker``: "none" turns the cross-encoder off for this search
    score_threshold: float | None = None
    only: tuple[tuple[str, ...], ...] = ()  # groups of document patterns the filters name (each group must match)


def parse_search(body: bytes, max_chars: int) -> SearchRequest:
    """The search a request body asks for; `ApiError` 400 on anything else (one line, naming the field)."""
    data, texts = strings_request(body, "query", "a vector store search")
    texts = [t.strip()[:max_chars] for t in texts if t.strip()]
    if not texts:
        raise ApiError(400, "'query' is empty: give the words to search for", "invalid_request")
    if len(texts) > MAX_QUERIES:
        raise ApiError(400, f"at most {MAX_QUERIES} queries per search", "invalid_request")
    count = data.get("max_num_results", 10)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_RESULTS:
        raise ApiError(400, f"'max_num_results' must be a whole number from 1 to {MAX_RESULTS}", "invalid_request")
    if data.get("rewrite_query"):
        raise ApiError(400, "'rewrite_query' is not supported: the query is searched as written (/v1/chat/completions "
                       "rewrites a conversation's last turn)", "invalid_request")
    ranking = data.get("ranking_options") or {}
    if not isinstance(ranking, dict):
        raise ApiError(400, "'ranking_options' must be an object", "invalid_request")
    ranker = ranking.get("ranker", "auto")
    if ranker not in ("auto", "none", "default-2024-11-15"):
        raise ApiError(400, "'ranking_options.ranker' must be 'auto', 'default-2024-11-15' or 'none' (no "
                       "cross-encoder)", "invalid_request")
    threshold = ranking.get("score_threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)):
        raise ApiError(400, "'ranking_options.score_threshold' must be a number", "invalid_request")
    only = filter_groups(data["filters"]) if data.get("filters") is not None else ()
    return SearchRequest(tuple(dict.fromkeys(texts)), count, ranker != "none",
                         None if threshold is None else float(threshold), only)


def filter_groups(filters: Any) -> tuple[tuple[str, ...], ...]:
    """OpenAI's ``filters`` as groups of document patterns (`local_rag.retrieve.scope.Scope`: every group must
    match): ``eq``/``in`` on the document's name a group, ``or`` of them one group, ``and`` one group each.

    Example:
        >>> filter_groups({"type": "and", "filters": [{"type": "eq", "key": "filename", "value": "notes/*"},
        ...     {"type": "or", "filters": [{"type": "eq", "key": "filename", "value": "*.md"},
        ...                                {"type": "in", "key": "file_id", "value": ["a.pdf"]}]}]})
        (('notes/*',), ('*.md', 'a.pdf'))
    """
    if not isinstance(filters, dict):
        raise ApiError(400, "'filters' must be an object", "invalid_request")
    kind = filters.get("type")
    if kind == "and":
        parts = filters.get("filters")
        if not isinstance(parts, list) or not parts:
            raise ApiError(400, "an 'and' filter needs a non-empty 'filters' list", "invalid_request")
        return tuple(group for part in parts for group in filter_groups(part))
    if kind == "or":
        parts = filters.get("filters")
        if not isinstance(parts, list) or not parts:
            raise ApiError(400, "an 'or' filter needs a non-empty 'filters' list", "invalid_request")
        groups = [filter_groups(part) for part in parts]
        if any(len(g) != 1 for g in groups):
            raise ApiError(400, "an 'or' filter may hold only 'eq' and 'in' filters on the document", "invalid_request")
        return (tuple(dict.fromkeys(p for g in groups for p in g[0])),)
    if kind not in ("eq", "in") or filters.get("key") not in _DOCUMENT_KEYS:
        raise ApiError(400, f"filters: only 'eq' and 'in' on the document ({', '.join(map(repr, _DOCUMENT_KEYS))}), "
                       f"combined by 'and'/'or', are supported (got type {kind!r}, key {filters.get('key')!r})",
                       "invalid_request")
    value = filters.get("value")
    values = [value] if kind == "eq" else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise ApiError(400, f"an {kind!r} filter's 'value' must be {'a document name' if kind == 'eq' else 'a list of document names'}",
                       "invalid_request")
    return (tuple(v.strip() for v in values),)


class VectorStores:
    """The served index and its collections as OpenAI vector stores, searched one search at a time (retrieval is
    milliseconds; the lock keeps two searches from sharing the encoders' threads)."""

    def __init__(self, settings: Settings, pipeline: Pipeline) -> None:
        self.settings = settings
        self.pipeline = pipeline
        name = settings.index
        self.ids: dict[str, tuple[str, ...]] = {name: (), **{f"{name}:{collection}": tuple(patterns) for
                                                            collection, patterns in settings.server.collections.items()}}
        self._lock = threading.Lock()
        self._folders: dict[str, Path | None] = {}  # each index's followed folder (a file's size and time)
        self._listings: dict[tuple[Any, ...], tuple[Scope, list[IndexDocument]]] = {}

    def _patterns(self, store_id: str) -> tuple[str, ...]:
        if store_id not in self.ids:
            raise ApiError(404, f"no vector store {store_id!r}: this server searches {', '.join(map(repr, self.ids))} "
                           "(GET /v1/vector_stores)", "not_found")
        return self.ids[store_id]

    def store(self, store_id: str) -> dict[str, Any]:
        """One store in OpenAI's ``vector_store`` shape: its documents as the files it holds, the index's size."""
        from local_rag.index.manifest import IndexManifest

        scope = self.pipeline.scope(self._patterns(store_id))  # with the server's own --only
        retriever = self.pipeline.retriever
        scoped = getattr(retriever, "scoped", lambda s: None)(scope) if scope else None
        documents = len(scoped.documents) if scoped is not None else len(getattr(retriever, "documents", list)())
        manifest = IndexManifest.load(self.settings.index_dir)
        folders = [self.settings.indexes_dir / n for n in dict.fromkeys([self.settings.index, *self.settings.retrieval.also])]
        size = sum(p.stat().st_size for folder in folders for p in folder.rglob("*") if p.is_file())  # --also: all
        created = created_at(manifest)
        return {"id": store_id, "object": "vector_store", "created_at": created, "name": store_id,
                "usage_bytes": size, "status": "completed", "last_active_at": created,
                "file_counts": {"in_progress": 0, "completed": documents, "failed": len(manifest.unreadable),
                                "cancelled": 0, "total": documents + len(manifest.unreadable)},
                "expires_after": None, "expires_at": None, "metadata": {}}

    def files(self, store_id: str, params: Mapping[str, str]) -> dict[str, Any]:
        """The store's documents as OpenAI's vector store files (``vector_stores.files.list``), by name, ``limit``
        (1-100, default 20) at a time after (or before) a file id; ``order`` ``asc`` or ``desc`` (the default, as
        OpenAI's) is by name, not by date. A file the build could not read is listed as ``failed`` with the reason
        (the whole index's store only: it is no document, so no pattern names it); ``filter`` keeps one status."""
        from local_rag.index.manifest import IndexManifest

        patterns = self._patterns(store_id)
        limit = _whole(params.get("limit", "20"), "limit", 1, 100)
        order = params.get("order", "desc")
        status = params.get("filter")
        if order not in ("asc", "desc"):
            raise ApiError(400, "'order' must be 'asc' or 'desc'", "invalid_request")
        if status not in (None, "completed", "failed", "in_progress", "cancelled"):
            raise ApiError(400, "'filter' must be 'completed', 'failed', 'in_progress' or 'cancelled'", "invalid_request")
        scope, documents = self._documents(patterns)
        manifest = IndexManifest.load(self.settings.index_dir)
        created = created_at(manifest)  # the time of a document whose file the folder does not give
        entries = [] if status not in (None, "completed") else [
            self._file(store_id, d.document, d.title, d.chunks, created) for d in documents]
        if status in (None, "failed") and not scope:
            for name, reason in manifest.unreadable.items():
                entries.append({**self._file(store_id, name, "", 0, created), "status": "failed",
                                "last_error": {"code": "invalid_file", "message": str(reason)}})
        entries.sort(key=lambda e: e["id"], reverse=order == "desc")
        ids = [e["id"] for e in entries]
        for key in ("after", "before"):
            if (cursor := params.get(key)) is not None and cursor not in ids:
                raise ApiError(400, f"'{key}': no file {cursor!r} in vector store {store_id!r}", "invalid_request")
        if (after := params.get("after")) is not None:
            entries = entries[ids.index(after) + 1:]
        if (before := params.get("before")) is not None:  # the page just before the cursor
            kept = [e["id"] for e in entries]
            entries = entries[:kept.index(before)] if before in kept else []
            page = entries[-limit:]
        else:
            page = entries[:limit]
        return {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None, "has_more": len(entries) > limit}

    def file(self, store_id: str, file_id: str) -> dict[str, Any]:
        """One document of the store (``vector_stores.files.retrieve``); 404 for another name."""
        from local_rag.index.manifest import IndexManifest

        found = self._document(store_id, file_id)
        if found is None:
            raise ApiError(404, f"no file {file_id!r} in vector store {store_id!r} (GET /v1/vector_stores/{store_id}"
                           "/files lists them)", "not_found")
        created = created_at(IndexManifest.load(self.settings.index_dir))
        return self._file(store_id, file_id, found.title, found.chunks, created)

    def holds(self, store_id: str, file_id: str) -> bool:
        """Whether ``file_id`` is a document of the store (a document named ``.../content`` is itself, not a content
        request)."""
        return self._document(store_id, file_id) is not None

    def _document(self, store_id: str, file_id: str) -> IndexDocument | None:
        return next((d for d in self._documents(self._patterns(store_id))[1] if d.document == file_id), None)

    def content(self, store_id: str, file_id: str) -> dict[str, Any]:
        """A document's text, read again from its folder (``vector_stores.files.content``): one text part."""
        from local_rag.server.documents import whole_text

        self.file(store_id, file_id)
        try:
            found = whole_text(self.pipeline, file_id, MAX_CONTENT_CHARS)
        except BadInputError as exc:  # gone since, unreadable now, or an index of records
            raise ApiError(400, str(exc), "invalid_request") from exc
        return {"object": "vector_store.file_content.page", "data": [{"type": "text", "text": found.text}],
                "has_more": False, "next_page": None}

    def _documents(self, patterns: tuple[str, ...]) -> tuple[Scope, list[IndexDocument]]:
        """The scope of a store and its documents, listed again only when an index's chunk file changed (a listing
        reads the whole chunk file: a client paging through a large index would read it once a page)."""
        from local_rag.server.documents import served_documents

        settings = self.settings
        files = [settings.indexes_dir / n / "chunks.jsonl" for n in dict.fromkeys([settings.index, *settings.retrieval.also])]
        key = (patterns, tuple((st.st_mtime_ns, st.st_size) if (st := _stat(f)) is not None else None for f in files))
        with self._lock:
            if key not in self._listings:
                scope = self.pipeline.scope(patterns)
                if len(self._listings) >= 8:
                    self._listings.clear()
                self._listings[key] = (scope, served_documents(self.pipeline, scope))
            return self._listings[key]

    def _file(self, store_id: str, document: str, title: str, chunks: int, created: int) -> dict[str, Any]:
        """A document in OpenAI's ``vector_store.file`` shape: its file's size and time when the folder has it, else
        no size and ``created`` (the index's time)."""
        path = self._path(document)
        stat = _stat(path) if path is not None else None
        attributes = {k: v for k, v in {"title": title, "chunks": chunks}.items() if v}
        return {"id": document, "object": "vector_store.file", "usage_bytes": stat.st_size if stat else 0,
                "created_at": int(stat.st_mtime) if stat else created, "vector_store_id": store_id,
                "status": "completed", "last_error": None, "attributes": attributes,
                "chunking_strategy": {"type": "static", "static": {"max_chunk_size_tokens": self.settings.chunker.size,
                                                                   "chunk_overlap_tokens": self.settings.chunker.overlap}}}

    def _path(self, document: str) -> Path | None:
        from local_rag.index.manifest import IndexManifest
        from local_rag.retrieve.joint import split_name

        names = [self.settings.index, *self.settings.retrieval.also]
        index, name = split_name(document, names) if self.settings.retrieval.also else (self.settings.index, document)
        if index is None:
            return None
        if index not in self._folders:
            try:
                self._folders[index] = IndexManifest.load(self.settings.indexes_dir / index).followed_folder()
            except Exception:  # noqa: BLE001 - a member index gone since: no size, no time
                self._folders[index] = None
        folder = self._folders[index]
        return folder / name if folder is not None else None

    def stores(self) -> dict[str, Any]:
        data = [self.store(i) for i in self.ids]
        return {"object": "list", "data": data, "first_id": data[0]["id"], "last_id": data[-1]["id"],
                "has_more": False}

    def _search(self, patterns: tuple[str, ...], request: SearchRequest) -> list[Hit]:
        with self._lock:
            scope = self.pipeline.scope(patterns, *request.only, what="filters:")
            hits = self.pipeline.passages(request.queries, request.max_results, scope, request.rerank)
        if request.score_threshold is not None:
            hits = [h for h in hits if h.score >= request.score_threshold]
        return hits

    async def search(self, store_id: str, body: bytes) -> dict[str, Any]:
        patterns = self._patterns(store_id)
        request = parse_search(body, self.settings.server.max_message_chars)
        try:
            hits = await asyncio.to_thread(self._search, patterns, request)
        except BadInputError as exc:  # a filter naming no document of the index
            raise ApiError(400, str(exc), "invalid_request") from exc
        return {"object": "vector_store.search_results.page", "search_query": list(request.queries),
                "data": [result(h) for h in hits], "has_more": False, "next_page": None}


def created_at(manifest: IndexManifest) -> int:
    """When the index was built, as OpenAI's ``created_at`` (0 when its manifest does not say)."""
    try:
        return int(datetime.fromisoformat(manifest.created).timestamp())
    except ValueError:
        return 0


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def _whole(value: str, name: str, low: int, high: int) -> int:
    if not value.isdigit() or not low <= int(value) <= high:
        raise ApiError(400, f"'{name}' must be a whole number from {low} to {high}", "invalid_request")
    return int(value)


def result(hit: Hit) -> dict[str, Any]:
    """One hit in OpenAI's search result shape (attributes: only those the chunk has)."""
    where: dict[str, Any] = {"passage_id": hit.passage_id, "title": hit.title, "section": hit.section,
                             "page": hit.page, "line": hit.line, "url": hit.url}
    return {"file_id": hit.doc_id, "filename": hit.doc_id, "score": round(float(hit.score), 6),
            "attributes": {k: v for k, v in where.items() if v},
            "content": [{"type": "text", "text": hit.text}]}

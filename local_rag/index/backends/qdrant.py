"""Qdrant as an index backend: dense vectors and BM25 terms of every chunk in one Qdrant collection.

Why Qdrant (docs/design.md, "Index backends"): one engine holds dense and sparse vectors of the same points, so
hybrid search needs no second system; sparse vectors with the ``idf`` modifier compute BM25's IDF inside the engine
from live statistics (Lucene's formula, the one bm25s's ``lucene`` method uses), so adds and removes never rescore
old points; payload filters; and ``qdrant-client`` runs the same API embedded in-process
(``QdrantClient(path=...)``, pure Python, what the tests use) and against a server or cluster
(``QdrantClient(url=...)``), with no other change.

The index folder keeps what the local backend keeps (manifest, chunks, passage digests, ``dense/vectors.f16.npy``:
nothing is re-embedded to move between backends) plus ``qdrant.json`` (collection, URL, BM25 average length) and,
embedded, the Qdrant storage in ``qdrant/``. Points are keyed by a UUID of the chunk id and text, so a write applies
the difference between the old and the new chunk list: ``add`` upserts the new chunks, ``remove`` deletes points,
nothing is rebuilt. Each chunk's sparse vector holds BM25's term-frequency part, tf / (tf + k1 (1 - b + b dl /
avgdl)), over bm25s's tokens (same stemmer and stopwords) hashed to 32-bit ids; a query's holds its token counts.
Score = sum of idf x tf part = bm25s's lucene BM25 (avgdl frozen at the build, as segments freeze theirs).

Against a server (``backend.url``), a build writes a new collection ``<index>-<id>`` and moves the alias
``<index>`` to it, then drops the old collection; add and remove change the live collection in place (upserts and
deletes by id are idempotent: a failed command can be run again).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import sqlite3
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from local_rag._optional import require
from local_rag.errors import IndexError_
from local_rag.index.segments import _tokens
from local_rag.records import Chunk
from local_rag.settings import Settings, SparseConfig

META_FILE = "qdrant.json"
STORAGE_DIR = "qdrant"
DENSE, SPARSE = "dense", "bm25"
BATCH = 256
_NAMESPACE = uuid.UUID("6f1d2c52-7a0e-4f0e-9a39-0d6b3c7e2a29")


@functools.lru_cache(maxsize=1 << 20)  # a corpus repeats its vocabulary: hash each token once
def token_id(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest(), "little")


def point_id(chunk: Chunk) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{chunk.id}\x00{chunk.title}\x00{chunk.text}"))


def _terms(tokens: list[str], avgdl: float, config: SparseConfig) -> tuple[list[int], list[float]]:
    norm = config.k1 * (1 - config.b + config.b * len(tokens) / max(avgdl, 1e-9))
    weights: dict[int, float] = {}
    for token, tf in Counter(tokens).items():
        key = token_id(token)
        weights[key] = weights.get(key, 0.0) + tf / (tf + norm)
    return list(weights), list(weights.values())


_OPEN: dict[str, tuple[int, Any]] = {}  # embedded storage path -> (inode, client): one client per storage and process


@atexit.register
def _close_all() -> None:
    """Close the shared embedded clients before the interpreter tears their modules down."""
    while _OPEN:
        _, (_, client) = _OPEN.popitem()
        client.close()


def _client(folder: Path, meta: dict[str, Any], shared: bool = False) -> Any:
    """A client for the index's collection. Embedded storage admits one client at a time, so opens for reading
    (``shared``) reuse the client of the same storage folder (same inode: a swapped-in folder gets a new one)."""
    qdrant_client = require("qdrant_client", "the Qdrant index backend")
    if meta.get("url"):
        return qdrant_client.QdrantClient(url=meta["url"], api_key=os.environ.get("QDRANT_API_KEY") or None)
    storage = folder / STORAGE_DIR
    if not shared:
        return _embedded(qdrant_client, storage)
    key, inode = str(storage.resolve()), storage.stat().st_ino
    cached = _OPEN.get(key)
    if cached is not None and cached[0] == inode:
        return cached[1]
    if cached is not None:
        cached[1].close()
    client = _embedded(qdrant_client, storage)
    _OPEN[key] = (inode, client)
    return client


def _embedded(qdrant_client: Any, storage: Path) -> Any:
    """An embedded client of ``storage``; another process holding it is said as such (qdrant-client raises a
    RuntimeError that the callers would report as an unreadable collection to rebuild)."""
    try:
        return qdrant_client.QdrantClient(path=str(storage))
    except RuntimeError as exc:
        if "already accessed by another instance" not in str(exc):
            raise
        raise IndexError_(f"index {storage.parent.name} is open in another process (a running `local-rag serve` or "
                          "`chat`?): Qdrant's embedded storage admits one process at a time; stop that one and try "
                          "again, or keep the collection on a Qdrant server (`--backend-url`) to share it") from None


def _bulk_writes(client: Any, collection: str) -> Path | None:
    """Let an embedded collection's SQLite storage commit without syncing; returns its file, to sync once at the end.

    Local mode stores every upserted point in its own SQLite transaction (``CollectionPersistence.persist``), and
    each commit waits for the disk: 12-16 ms a point here, 93% of an upsert's time (profiled, docs/benchmarks/scale.md).
    The storage written here lives in the temporary folder of the index being written, which is discarded if
    anything fails before the swap, so a torn write costs nothing; the file is synced once after the client
    closes (`_sync`). qdrant-client has no public setting for this: the connection is reached through its local
    mode's attributes, and where they differ (another version, a server) writes stay as they are, only slower.
    """
    collections = getattr(getattr(client, "_client", None), "collections", None)
    persistence = getattr(collections.get(collection), "storage", None) if isinstance(collections, dict) else None
    connection = getattr(persistence, "storage", None)
    if not isinstance(connection, sqlite3.Connection):
        return None
    connection.execute("PRAGMA synchronous=OFF")  # no fsync per commit
    connection.execute("PRAGMA journal_mode=MEMORY")  # no rollback-journal file created and deleted per commit
    location = getattr(persistence, "location", None)
    return Path(location) if location is not None else None


def _sync(path: Path | None) -> None:
    if path is not None and path.exists():
        with path.open("rb+") as fh:
            os.fsync(fh.fileno())


def read_meta(folder: Path) -> dict[str, Any]:
    try:
        meta: dict[str, Any] = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
        return meta
    except (OSError, json.JSONDecodeError) as exc:
        raise IndexError_(f"{folder / META_FILE} is missing or corrupt ({exc}); rebuild the index with "
                          "`local-rag index rebuild` (re-embeds nothing)") from exc


class QdrantIndex:
    """An open collection: rows of the folder's chunk list <-> points (by chunk id)."""

    def __init__(self, client: Any, meta: dict[str, Any], chunks: list[Chunk], config: SparseConfig,
                 vectors: np.ndarray | None) -> None:
        self.client, self.meta, self.config, self.vectors = client, meta, config, vectors
        self.rows = {c.id: i for i, c in enumerate(chunks)}
        self.size = len(chunks)

    @property
    def collection(self) -> str:
        return str(self.meta.get("alias") or self.meta["collection"])

    def query(self, query: Any, using: str, k: int, where: dict[str, Any] | None) -> tuple[np.ndarray, np.ndarray]:
        rows, scores = np.full(k, -1, dtype=np.int64), np.zeros(k, dtype=np.float32)
        found = self.client.query_points(self.collection, query=query, using=using, limit=k, with_payload=["chunk_id"],
                                         query_filter=_filter(where)).points
        for i, point in enumerate(found[:k]):
            rows[i], scores[i] = self.rows.get(point.payload["chunk_id"], -1), point.score
        return rows, scores

    def close(self) -> None:
        """Close the client (embedded: the next open makes a new one)."""
        self.client.close()
        for key, (_, client) in list(_OPEN.items()):
            if client is self.client:
                del _OPEN[key]


class QdrantSparse:
    """BM25 through the collection's sparse vectors (the local backend's `SegmentedSparse` interface)."""

    def __init__(self, index: QdrantIndex) -> None:
        self.index, self.config, self.size = index, index.config, index.size

    def search(self, queries: Sequence[str], k: int, where: dict[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
        models = require("qdrant_client", "the Qdrant index backend").models
        k = min(k, self.size)
        out = []
        for tokens in _tokens(queries, self.config):
            counts = Counter(token_id(t) for t in tokens)
            if not counts:
                out.append((np.full(k, -1, dtype=np.int64), np.zeros(k, dtype=np.float32)))
                continue
            vector = models.SparseVector(indices=list(counts), values=[float(v) for v in counts.values()])
            out.append(self.index.query(vector, SPARSE, k, where))
        rows, scores = np.stack([r for r, _ in out]), np.stack([s for _, s in out])
        rows[scores <= 0] = -1
        return rows, scores


class QdrantDense:
    """Dense search through the collection (the local backend's `DenseIndex` interface)."""

    on_gpu = False

    def __init__(self, index: QdrantIndex, factory: str) -> None:
        self.index, self.factory, self.size = index, factory, index.size
        self.vectors = index.vectors

    @property
    def dimension(self) -> int:
        return int(self.index.meta["dimension"])

    def search(self, query_vectors: np.ndarray, k: int, where: dict[str, Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, self.size)
        out = [self.index.query(np.asarray(v, dtype=np.float32).tolist(), DENSE, k, where) for v in query_vectors]
        return np.stack([r for r, _ in out]), np.stack([s for _, s in out])


def _filter(where: dict[str, Any] | None) -> Any:
    """``{"doc_id": "x", "passage_id": ["a", "b"]}`` as a Qdrant filter (all conditions must hold)."""
    if not where:
        return None
    models = require("qdrant_client", "the Qdrant index backend").models
    must = [models.FieldCondition(key=key, match=models.MatchAny(any=list(value)) if isinstance(value, list | tuple)
                                  else models.MatchValue(value=value)) for key, value in where.items()]
    return models.Filter(must=must)


def open_qdrant(path: Path, settings: Settings, chunks: list[Chunk], dimension: int | None, factory: str) -> tuple[QdrantSparse, QdrantDense | None]:
    """Open the collection of the index folder ``path``, checking it holds exactly the folder's chunks."""
    meta = read_meta(path)
    try:
        client = _client(path, meta, shared=True)
        collection = meta.get("alias") or meta["collection"]
        count = client.count(collection, exact=True).count
    except IndexError_:
        raise
    except Exception as exc:  # noqa: BLE001 - qdrant-client raises many types (storage, network, value errors)
        raise IndexError_(f"Qdrant collection of {path} is unreadable ({type(exc).__name__}: {exc}); rebuild the index "
                          "with `local-rag index rebuild`") from exc
    if count != len(chunks):
        raise IndexError_(f"Qdrant collection {collection!r} holds {count} points for {len(chunks)} chunks in {path}; "
                          "rebuild it with `local-rag index rebuild` (re-embeds nothing)")
    if dimension is not None and dimension != meta.get("dimension"):
        raise IndexError_(f"Qdrant collection {collection!r} has {meta.get('dimension')}-d vectors, the manifest says "
                          f"{dimension}; rebuild the index")
    vectors = None
    if (path / "dense" / "vectors.f16.npy").exists():
        vectors = np.load(path / "dense" / "vectors.f16.npy", mmap_mode="r", allow_pickle=False)
    index = QdrantIndex(client, meta, chunks, settings.sparse, vectors)
    return QdrantSparse(index), QdrantDense(index, factory) if dimension is not None else None


def write_qdrant(tmp: Path, settings: Settings, chunks: list[Chunk], texts: list[str], vectors: np.ndarray | None,
                 base: Path | None = None, old_chunks: Sequence[Chunk] | None = None) -> dict[str, Any]:
    """Write the collection of ``chunks`` for the index being written in ``tmp``.

    With ``base`` (the current index folder) and its ``old_chunks``, only the difference is applied: points of
    chunks no longer listed are deleted, chunks not yet stored are upserted.
    """
    models = require("qdrant_client", "the Qdrant index backend").models
    stored = base / "dense" / "vectors.f16.npy" if base is not None else None
    if vectors is None and stored is not None and stored.exists() and old_chunks is not None:
        stored_row = {c.id: i for i, c in enumerate(old_chunks)}  # a remove: the kept chunks' stored vectors
        if all(c.id in stored_row for c in chunks):
            vectors = np.load(stored, mmap_mode="r")[[stored_row[c.id] for c in chunks]]
    if vectors is not None:
        (tmp / "dense").mkdir(exist_ok=True)
        np.save(tmp / "dense" / "vectors.f16.npy", np.asarray(vectors, dtype=np.float16), allow_pickle=False)
    if base is not None and old_chunks is not None and (base / META_FILE).exists():
        meta = read_meta(base)
        if not meta.get("url"):
            shutil.copytree(base / STORAGE_DIR, tmp / STORAGE_DIR)
        old = {point_id(c) for c in old_chunks}
        todo = [i for i, c in enumerate(chunks) if point_id(c) not in old]
        gone = old - {point_id(c) for c in chunks}
        tokens_all: list[list[str]] | None = None
    else:
        tokens_all = _tokens(texts, settings.sparse)  # tokenised once: for the average length and for the points
        avgdl = float(np.mean([len(t) for t in tokens_all])) if tokens_all else 1.0
        url = settings.backend.url
        meta = {"url": url, "collection": f"{settings.index}-{uuid.uuid4().hex[:8]}" if url else settings.index,
                "alias": settings.index if url else "", "avgdl": avgdl,
                "dimension": int(vectors.shape[1]) if vectors is not None else None}
        todo, gone = list(range(len(chunks))), set()
    client = _client(tmp, meta)
    storage = None
    try:
        if base is None or old_chunks is None:
            dense = {DENSE: models.VectorParams(size=meta["dimension"], distance=models.Distance.DOT)} if vectors is not None else {}
            client.create_collection(meta["collection"], vectors_config=dense,
                                     sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)})
        collection = meta.get("alias") or meta["collection"]
        storage = _bulk_writes(client, collection)
        if gone:
            client.delete(collection, points_selector=models.PointIdsList(points=sorted(gone)))
        for start in range(0, len(todo), BATCH):
            batch = todo[start : start + BATCH]
            tokens = ([tokens_all[i] for i in batch] if tokens_all is not None
                      else _tokens([texts[i] for i in batch], settings.sparse))
            points = []
            for row, toks in zip(batch, tokens, strict=True):
                chunk = chunks[row]
                vector: dict[str, Any] = {}
                if vectors is not None:
                    vector[DENSE] = np.asarray(vectors[row], dtype=np.float32).tolist()
                indices, values = _terms(toks, meta["avgdl"], settings.sparse)
                if indices:
                    vector[SPARSE] = models.SparseVector(indices=indices, values=values)
                payload = {"chunk_id": chunk.id, "passage_id": chunk.passage_id, "doc_id": chunk.doc_id, "title": chunk.title}
                points.append(models.PointStruct(id=point_id(chunk), vector=vector, payload=payload))
            client.upsert(collection, points=points, wait=True)
        if meta.get("url") and (base is None or old_chunks is None):
            _move_alias(client, models, meta)
    finally:
        client.close()
    _sync(storage)
    (tmp / META_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


def _move_alias(client: Any, models: Any, meta: dict[str, Any]) -> None:
    """Point the alias at the new collection in one request, then drop the collection it pointed at."""
    previous = [a.collection_name for a in client.get_aliases().aliases if a.alias_name == meta["alias"]]
    actions = [models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=meta["alias"]))] if previous else []
    actions.append(models.CreateAliasOperation(create_alias=models.CreateAlias(collection_name=meta["collection"],
                                                                                alias_name=meta["alias"])))
    client.update_collection_aliases(change_aliases_operations=actions)
    for name in previous:
        client.delete_collection(name)


def verify_qdrant(path: Path, chunks: int, dimension: int | None) -> list[str]:
    """Problems of the collection behind an index folder (empty when it holds one point per chunk)."""
    try:
        meta = read_meta(path)
        client = _client(path, meta, shared=True)
    except IndexError_ as exc:
        return [str(exc)]
    except Exception as exc:  # noqa: BLE001 - storage or network errors of any type
        return [f"Qdrant collection unreadable: {type(exc).__name__}: {exc}"]
    try:
        count = client.count(meta.get("alias") or meta["collection"], exact=True).count
    except Exception as exc:  # noqa: BLE001
        return [f"Qdrant collection unreadable: {type(exc).__name__}: {exc}"]
    problems = [] if count == chunks else [f"Qdrant collection holds {count} points for {chunks} chunks"]
    if dimension is not None and meta.get("dimension") != dimension:
        problems.append(f"Qdrant vectors have dimension {meta.get('dimension')}, manifest says {dimension}")
    return problems

"""The BM25 index in segments, merged at query time (as Lucene does), so that ``index add`` costs the new rows only.

bm25s cannot add documents to a built index: its matrix holds precomputed scores (IDF and length normalisation
baked in). So ``sparse/`` holds segment 0 (the bm25s files, as a one-segment index always had) and, after appends,
``seg-001/``, ``seg-002/`` ... each a bm25s index over the rows appended at once, described by ``segments.json``.

A new segment is scored with the statistics of the whole index (document count, document frequencies summed over
all segments, average length), so its scores are comparable with the older segments'. The older segments keep the
statistics they were built with: after appending a fraction f of the rows their IDFs are at most about f stale.
Once there are more than `MAX_SEGMENTS` segments, or the appended rows outweigh `MERGE_SHARE` of the index, the next
write merges everything into one segment again (a full bm25s build), and ``index rebuild`` always does.

Example:
    >>> SegmentedSparse.build(["a cat sat"], SparseConfig(), folder)  # doctest: +SKIP
    >>> SegmentedSparse.append(folder, new_folder, ["a dog ran"], SparseConfig())  # doctest: +SKIP
    >>> SegmentedSparse.load(new_folder, SparseConfig()).search(["dog"], k=1)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from local_rag._optional import require
from local_rag.errors import BadInputError, IndexError_
from local_rag.index.sparse import SparseIndex, bm25_texts, numbered
from local_rag.settings import SparseConfig

SEGMENTS_FILE = "segments.json"
MAX_SEGMENTS = 8
MERGE_SHARE = 0.25  # appended rows beyond this share of the index trigger a merge (their stale IDF would grow)


def _tokens(texts: Sequence[str], config: SparseConfig, progress: bool = False) -> list[list[str]]:
    bm25s = require("bm25s", "sparse retrieval")
    tokens: list[list[str]] = bm25s.tokenize(
        bm25_texts(texts, config), stopwords=config.stopwords or None, stemmer=SparseIndex._stemmer(config),
        return_ids=False, show_progress=progress,
    )
    return tokens


def _df(retriever: Any) -> dict[str, int]:
    """Document frequency per token of a built bm25s index: the column lengths of its CSC score matrix."""
    counts = np.diff(np.asarray(retriever.scores["indptr"]))
    return {token: int(counts[i]) for token, i in retriever.vocab_dict.items() if i < len(counts)}


def _index_with_stats(tokens: list[list[str]], config: SparseConfig, base: dict[str, Any] | None) -> Any:
    """A bm25s index over ``tokens`` scored with the segment's statistics plus ``base`` (docs, length, df)."""
    bm25s = require("bm25s", "sparse retrieval")
    from bm25s import scoring

    retriever = bm25s.BM25(method=config.method, k1=config.k1, b=config.b)
    if base is None or retriever.method in retriever.methods_requiring_nonoccurrence:
        retriever.index(numbered(tokens), show_progress=False)
        return retriever
    corpus = numbered(tokens)
    vocab: dict[str, int] = corpus.vocab
    ids: list[list[int]] = corpus.ids
    vocab.setdefault("", len(vocab))  # bm25s's empty token: a query with no known term scores nothing
    local_df = scoring._calculate_doc_freqs(ids, list(vocab.values()), show_progress=False)
    n_docs = len(ids) + base["docs"]
    avg_len = (sum(len(d) for d in ids) + base["tokens"]) / max(1, n_docs)
    df = {i: local_df[i] + base["df"].get(t, 0) for t, i in vocab.items()}
    idf = scoring._build_idf_array(df, n_docs, scoring._select_idf_scorer(retriever.idf_method), retriever.dtype)
    data, doc_idx, voc_idx = scoring._build_scores_and_indices_for_matrix(
        corpus_token_ids=ids, idf_array=idf, avg_doc_len=avg_len, doc_frequencies=local_df, k1=config.k1,
        b=config.b, delta=retriever.delta, nonoccurrence_array=None, method=config.method, dtype=retriever.dtype,
        int_dtype=retriever.int_dtype, show_progress=False,
    )
    from scipy import sparse

    matrix = sparse.csc_matrix((data, (doc_idx, voc_idx)), shape=(len(ids), len(vocab)), dtype=retriever.dtype)
    retriever.scores = {"data": matrix.data, "indices": matrix.indices, "indptr": matrix.indptr, "num_docs": len(ids)}
    retriever.vocab_dict = vocab
    retriever.nonoccurrence_array = None
    retriever.unique_token_ids_set = set(vocab.values())
    return retriever


class SegmentedSparse:
    """BM25 over several bm25s segments; row ``i`` is chunk ``i`` of the index folder (segments hold consecutive rows)."""

    def __init__(self, retrievers: list[Any], meta: list[dict[str, Any]], config: SparseConfig) -> None:
        self.retrievers = retrievers
        self.meta = meta
        self.config = config
        self.size = sum(m["rows"] for m in meta)

    @staticmethod
    def read_meta(folder: Path) -> list[dict[str, Any]] | None:
        path = folder / SEGMENTS_FILE
        if not path.exists():
            return None
        try:
            segments: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["segments"]
            return segments
        except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise IndexError_(f"{path} is corrupt ({exc}); rebuild the index with `local-rag index rebuild`") from exc

    @staticmethod
    def _save_meta(folder: Path, meta: list[dict[str, Any]]) -> None:
        (folder / SEGMENTS_FILE).write_text(json.dumps({"segments": meta}, indent=1) + "\n", encoding="utf-8")

    @classmethod
    def build(cls, texts: Sequence[str], config: SparseConfig, folder: Path, progress: bool = False) -> None:
        """Write a one-segment index of ``texts`` into ``folder``."""
        tokens = _tokens(texts, config, progress)
        if not any(tokens):  # bm25s fails on it with a bare ValueError
            raise BadInputError(
                f"none of the {len(texts)} chunks has a word BM25 can index (2+ letters, not a stopword); "
                "add text or build with --sparse-only off"
            )
        _index_with_stats(tokens, config, None).save(str(folder))
        cls._save_meta(folder, [{"dir": ".", "rows": len(tokens), "tokens": sum(len(t) for t in tokens)}])

    @classmethod
    def can_append(cls, old: Path, added: int) -> bool:
        """Whether appending ``added`` rows to the index in ``old`` may write one more segment (else: full build)."""
        meta = cls.read_meta(old)
        if not meta:
            return False  # an index from before segments: its length statistics are unknown
        appended = sum(m["rows"] for m in meta[1:]) + added
        return len(meta) < MAX_SEGMENTS and appended <= MERGE_SHARE * meta[0]["rows"]

    @classmethod
    def append(cls, old: Path, new: Path, texts: Sequence[str], config: SparseConfig) -> None:
        """Write into ``new`` the segments of ``old`` (hard links, nothing copied) plus one segment of ``texts``."""
        meta = cls.read_meta(old) or []
        current = cls.load(old, config)
        base = {"docs": current.size, "tokens": sum(m["tokens"] for m in meta), "df": {}}
        for retriever in current.retrievers:
            for token, count in _df(retriever).items():
                base["df"][token] = base["df"].get(token, 0) + count
        for m in meta:
            source, target = old / m["dir"], new / m["dir"]
            target.mkdir(parents=True, exist_ok=True)
            for item in source.iterdir():
                if item.is_file() and item.name != SEGMENTS_FILE:
                    _link(item, target / item.name)
        tokens = _tokens(texts, config)
        name = f"seg-{len(meta):03d}"
        (new / name).mkdir()
        _index_with_stats(tokens, config, base).save(str(new / name))
        cls._save_meta(new, [*meta, {"dir": name, "rows": len(tokens), "tokens": sum(len(t) for t in tokens)}])

    @classmethod
    def load(cls, folder: Path, config: SparseConfig, mmap: bool = True) -> SegmentedSparse:
        bm25s = require("bm25s", "sparse retrieval")
        meta = cls.read_meta(folder)
        if meta is None:  # one bm25s index, as written before segments
            params = json.loads((folder / "params.index.json").read_text(encoding="utf-8"))
            meta = [{"dir": ".", "rows": int(params["num_docs"]), "tokens": None}]
        retrievers = []
        for m in meta:
            retriever = bm25s.BM25.load(str(folder / m["dir"]), mmap=mmap, load_corpus=False)
            if int(retriever.scores["num_docs"]) != m["rows"]:
                raise IndexError_(f"BM25 segment {folder / m['dir']} holds {retriever.scores['num_docs']} rows, "
                                  f"{SEGMENTS_FILE} says {m['rows']}; rebuild the index")
            retrievers.append(retriever)
        return cls(retrievers, meta, config)

    def search(self, queries: Sequence[str], k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` rows and scores per query over all segments (rows ``-1`` for zero scores); with ``mask``, rows
        it leaves out score 0 (bm25s's ``weight_mask``), so they are never returned."""
        k = min(k, self.size)
        tokens = _tokens(queries, self.config)
        all_rows, all_scores, offset = [], [], 0
        for retriever, m in zip(self.retrievers, self.meta, strict=True):
            depth = min(k, m["rows"])
            weights = None if mask is None else mask[offset : offset + m["rows"]].astype(np.float32)
            if weights is not None and not weights.any():  # nothing of this segment is in the scope
                all_rows.append(np.full((len(queries), depth), -1, dtype=np.int64))
                all_scores.append(np.zeros((len(queries), depth), dtype=np.float32))
                offset += m["rows"]
                continue
            try:
                rows, scores = retriever.retrieve(tokens, k=depth, show_progress=False, n_threads=1, sorted=True,
                                                  weight_mask=weights)
            except (IndexError, ValueError) as exc:
                raise IndexError_(f"the sparse index is corrupt ({type(exc).__name__}: {exc}); run `local-rag index "
                                  "verify --deep` and rebuild it") from exc
            rows, scores = np.asarray(rows, dtype=np.int64), np.asarray(scores, dtype=np.float32)
            if not np.isfinite(scores).all() or (rows >= m["rows"]).any():
                raise IndexError_("the sparse index returned impossible results (NaN scores or rows out of range): it "
                                  "is corrupt; run `local-rag index verify --deep` and rebuild it")
            all_rows.append(rows + offset)
            all_scores.append(scores)
            offset += m["rows"]
        rows, scores = np.concatenate(all_rows, axis=1), np.concatenate(all_scores, axis=1)
        if len(self.retrievers) > 1:
            order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
            rows, scores = np.take_along_axis(rows, order, 1), np.take_along_axis(scores, order, 1)
        rows[scores <= 0] = -1
        return rows, scores


def write_sparse(target: Path, texts: Sequence[str], config: SparseConfig, old: Path | None = None, appended: int = 0,
                 progress: bool = False) -> None:
    """Write the BM25 index of ``texts`` into ``target``: one more segment over the last ``appended`` texts when
    ``old`` holds the index of the others and the merge policy allows it, else one segment over all."""
    if old is not None and appended and SegmentedSparse.can_append(old, appended):
        SegmentedSparse.append(old, target, texts[len(texts) - appended :], config)
    else:
        SegmentedSparse.build(texts, config, target, progress)


def _link(source: Path, target: Path) -> None:
    """Hard-link a segment file into the new index folder (a copy where the file system cannot link)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)

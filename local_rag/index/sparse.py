"""bm25s sparse index over chunk texts (stemming and stopwords from settings), saved and loaded memory-mapped."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from local_rag._optional import require
from local_rag.errors import BadInputError, IndexError_
from local_rag.settings import SparseConfig

if TYPE_CHECKING:
    from bm25s.tokenization import Tokenized


_WORD = re.compile(r"\w+")
_CASE_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def identifier_words(text: str) -> str:
    """``text`` with each compound identifier followed by the words it is made of, for BM25 (``SparseConfig
    .identifiers``, set by `index build --code`): BM25's words run through underscores and capitals, so a question
    about "the index folder" found no ``IndexFolder`` and one naming ``read_code`` no "read the code". Split at
    underscores, and at the case changes of an ASCII part (``HTTPServer``: HTTP, Server; digits apart); the identifier
    itself stays, so a question that names it matches it whole as before.

        >>> identifier_words("def read_code(path): return IndexFolder(HTTPServer)")
        'def read_code read code(path): return IndexFolder Index Folder(HTTPServer HTTP Server)'
        >>> identifier_words("__init__ sha256 größe_wert plain")
        '__init__ init sha256 sha 256 größe_wert größe wert plain'
    """

    def words(match: re.Match[str]) -> str:
        word = match.group(0)
        parts = [p for piece in word.split("_") if piece
                 for p in (_CASE_PART.findall(piece) if piece.isascii() else [piece])]
        return word if parts == [word] or not parts else f"{word} {' '.join(parts)}"

    return _WORD.sub(words, text)


def bm25_texts(texts: Sequence[str], config: SparseConfig) -> list[str]:
    """What BM25 tokenizes of ``texts`` (chunks or queries alike): the texts, or with ``config.identifiers`` the texts
    with their identifiers' words (`identifier_words`)."""
    return [identifier_words(t) for t in texts] if config.identifiers else list(texts)


def numbered(tokens: object) -> Tokenized:
    """A bm25s ``Tokenized`` corpus whose token ids follow the order in which each token first occurs.

    ``tokens``: what ``bm25s.tokenize`` returns (ids and vocabulary), or token strings per document. bm25s numbers a
    stemmed vocabulary (and one it builds from token strings) in the iteration order of a Python ``set`` of strings,
    which changes with the per-process hash seed: one corpus gave index files that differed from build to build (a
    permuted vocabulary and score matrix, and a different order of additions when a query's scores are summed).
    Numbered here, one corpus always gives the same files."""
    from bm25s.tokenization import Tokenized

    if isinstance(tokens, Tokenized):
        word = {i: t for t, i in tokens.vocab.items()}
        docs = [[word[i] for i in doc] for doc in tokens.ids]
    else:
        docs = tokens  # type: ignore[assignment]
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in docs]
    return Tokenized(ids=ids, vocab=vocab)


class SparseIndex:
    """A bm25s index; row ``i`` is chunk ``i`` of the index folder.

    Example:
        >>> index = SparseIndex.build(["a cat sat", "a dog ran"], SparseConfig())  # doctest: +SKIP
        >>> rows, scores = index.search(["cat"], k=1)  # doctest: +SKIP
    """

    def __init__(self, retriever: object, config: SparseConfig, size: int) -> None:
        self.retriever = retriever
        self.config = config
        self.size = size

    @staticmethod
    def _stemmer(config: SparseConfig) -> object | None:
        if not config.stemmer:
            return None
        stemmer_mod = require("Stemmer", "BM25 stemming")
        return stemmer_mod.Stemmer(config.stemmer)

    def _tokenize(self, texts: Sequence[str], show_progress: bool = False) -> object:
        bm25s = require("bm25s", "sparse retrieval")
        return bm25s.tokenize(
            bm25_texts(texts, self.config),
            stopwords=self.config.stopwords or None,
            stemmer=self._stemmer(self.config),
            show_progress=show_progress,
        )

    @classmethod
    def build(cls, texts: Sequence[str], config: SparseConfig, progress: bool = False) -> SparseIndex:
        bm25s = require("bm25s", "sparse retrieval")
        retriever = bm25s.BM25(method=config.method, k1=config.k1, b=config.b)
        index = cls(retriever, config, len(texts))
        tokens = index._tokenize(texts, show_progress=progress)
        if not any(len(doc) for doc in tokens.ids):  # type: ignore[attr-defined]
            raise BadInputError(
                f"none of the {len(texts)} chunks has a word BM25 can index (2+ letters, not a stopword); "
                "add text or build with --sparse-only off"
            )
        retriever.index(numbered(tokens), show_progress=progress)
        return index

    def save(self, folder: Path) -> None:
        self.retriever.save(str(folder))  # type: ignore[attr-defined]

    @classmethod
    def load(cls, folder: Path, config: SparseConfig, size: int, mmap: bool = True) -> SparseIndex:
        bm25s = require("bm25s", "sparse retrieval")
        retriever = bm25s.BM25.load(str(folder), mmap=mmap, load_corpus=False)
        return cls(retriever, config, size)

    def search(self, queries: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` chunk rows and scores for each query: two ``(len(queries), k)`` arrays.

        Rows of zero-score results are ``-1`` (a query with no known term matches nothing).
        """
        k = min(k, self.size)
        tokens = self._tokenize(queries)
        try:
            rows, scores = self.retriever.retrieve(  # type: ignore[attr-defined]
                tokens, k=k, show_progress=False, n_threads=1, sorted=True
            )
        except (IndexError, ValueError) as exc:
            raise IndexError_(f"the sparse index is corrupt ({type(exc).__name__}: {exc}); run `local-rag index "
                              "verify --deep` and rebuild it") from exc
        rows = np.asarray(rows, dtype=np.int64)
        scores = np.asarray(scores, dtype=np.float32)
        if not np.isfinite(scores).all() or (rows >= self.size).any():
            raise IndexError_("the sparse index returned impossible results (NaN scores or rows out of range): it is "
                              "corrupt; run `local-rag index verify --deep` and rebuild it")
        rows[scores <= 0] = -1
        return rows, scores

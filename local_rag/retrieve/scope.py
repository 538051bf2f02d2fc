"""Asking about some of the documents: `Scope`, the documents a search may return, given as patterns.

A pattern names documents by their id (`local_rag.patterns`): for an index of a folder, the file's path inside it
(``reports/2024/q3.pdf``), a folder of it, or a shell-style pattern (``*.pdf``), without regard to case; patterns that
name no document so are matched against the documents' titles (`title_matches`: ``annual report`` finds "Annual
Report 2024"). Patterns
given together widen each other (any one may match); a scope narrowed again (`Scope.narrow`: a request to a server
started with ``--only``) keeps only documents every group matches.

Retrieval then never leaves the scope: BM25 scores the documents outside it as 0 (bm25s's ``weight_mask``), dense
search keeps to the scope's rows (`local_rag.index.dense.DenseIndex.search_rows`), a Qdrant collection filters by
``doc_id``.

Example:
    >>> scope = Scope.of(["reports/2024", "*.md"])
    >>> [scope.matches(d) for d in ("reports/2024/q3.pdf", "notes/a.MD", "reports/2023/q3.pdf")]
    [True, True, False]
    >>> Scope.of(["handbook"]).narrow(["*.pdf"]).matches("handbook/leave.md")
    False
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from local_rag.errors import BadInputError
from local_rag.patterns import in_folder, matches, norm, patterns_of
from local_rag.records import Chunk

_DOC_ID = re.compile(rb'"doc_id": "((?:[^"\\]|\\.)*)"')  # the key as `json.dumps` writes it; never inside a string


@dataclass(frozen=True)
class Scope:
    """Groups of patterns: a document is in the scope when, in every group, one pattern matches it. No groups: every
    document."""

    groups: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def of(cls, patterns: Iterable[str]) -> Scope:
        found = patterns_of(patterns)
        return cls((found,) if found else ())

    def narrow(self, patterns: Iterable[str]) -> Scope:
        """This scope, cut to the documents ``patterns`` also match (no patterns: unchanged)."""
        found = patterns_of(patterns)
        return Scope((*self.groups, found)) if found and found not in self.groups else self

    def __bool__(self) -> bool:
        return bool(self.groups)

    def matches(self, doc_id: str) -> bool:
        return all(any(matches(doc_id, p) for p in group) for group in self.groups)

    def describe(self) -> str:
        """``reports/2024, *.md`` (groups joined by `` and ``)."""
        return " and ".join(", ".join(group) for group in self.groups) or "all documents"

    def to_json(self) -> list[list[str]]:
        return [list(group) for group in self.groups]


@dataclass(frozen=True)
class ScopedRows:
    """A scope resolved against one index: the documents in it and the chunk rows they hold."""

    scope: Scope
    documents: tuple[str, ...]
    mask: np.ndarray  # bool, one entry per chunk row

    @property
    def rows(self) -> int:
        return int(self.mask.sum())


def document_table(chunks: Sequence[Chunk]) -> tuple[list[str], np.ndarray]:
    """The index's document ids, and for each chunk row the position of its document among them.

    A ``chunks.jsonl`` (`local_rag.index.chunkfile.ChunkFile`) is scanned for its ``doc_id`` keys without parsing a
    row (a million rows in a second or two); other sequences are read chunk by chunk.
    """
    from local_rag.index.chunkfile import ChunkFile

    raw: list[str] | None = None
    if isinstance(chunks, ChunkFile):
        raw = chunks.scan(_DOC_ID, lambda found: json.loads(b'"' + found + b'"') if b"\\" in found else found.decode())
    if raw is None:
        raw = [c.doc_id for c in chunks]
    names = sorted(set(raw))
    position = {name: i for i, name in enumerate(names)}
    return names, np.fromiter((position[d] for d in raw), dtype=np.int32, count=len(raw))


def resolve(scope: Scope, names: Sequence[str], codes: np.ndarray, index: str = "",
            what: str = "--only", source: str = "", titles: Callable[[], Sequence[str]] | None = None) -> ScopedRows:
    """The rows of the documents in ``scope`` (``index``: the index's name; ``what``: how the user gave the scope, for
    the error; ``source``: the indexed folder, whose path a pattern may begin with, `in_folder`; ``titles``: the
    documents' titles in the order of ``names``, asked for when a group of patterns names no document by its id, so
    that ``--only "annual report"`` finds the PDF titled "Annual Report 2024" whatever its file is called).

    Raises:
        BadInputError: a pattern group matches no document of the index: the error names it, the nearest document
            ids or folders, and how the index names its documents.
    """
    keep = np.ones(len(names), dtype=bool)
    for group in scope.groups:
        forms = {form for p in group for form in (p, in_folder(p, source))}
        hit = np.fromiter((any(matches(n, p) for p in forms) for n in names), dtype=bool, count=len(names))
        if not hit.any() and titles is not None:
            hit = np.fromiter((any(title_matches(t, p) for p in group) for t in titles()), dtype=bool,
                              count=len(names))
        if not hit.any():
            raise BadInputError(_no_match(group, names, index, what))
        keep &= hit
    if not keep.any():
        raise BadInputError(f"no document of {_label(index)} is in all of {scope.describe()} (each matches some, never the "
                            "same ones)")
    documents = tuple(n for n, k in zip(names, keep.tolist(), strict=True) if k)
    return ScopedRows(scope, documents, keep[codes] if len(codes) else np.zeros(0, dtype=bool))


def title_matches(title: str, pattern: str) -> bool:
    """Whether ``pattern`` names a document by its title: its words, in order, without regard to case, spacing or
    the punctuation around them ("#ops" and "ops" name "#ops, 3 Nov 2025"; "annual report" names "Annual Report,
    2024": before, a comma after a word hid it), or a shell-style pattern over the whole title.

    Example:
        >>> title_matches("Annual Report 2024", "annual  report"), title_matches("Annual Report 2024", "*20??")
        (True, True)
        >>> title_matches("Annual Report 2024", "report annual"), title_matches("Annual Report 2024", "port")
        (False, False)
        >>> title_matches("#ops, 3 Nov 2025", "#ops"), title_matches("Direct messages, Ana and Ben", "direct messages")
        (True, True)
    """
    folded = pattern.casefold()
    if any(c in folded for c in "*?["):
        return fnmatch.fnmatchcase(" ".join(title.casefold().split()), " ".join(folded.split()))
    wanted, words = (" ".join(re.findall(r"\w+", text)) for text in (folded, title.casefold()))
    return bool(wanted) and f" {wanted} " in f" {words} "


def document_titles(chunks: Sequence[Chunk], codes: np.ndarray, count: int) -> list[str]:
    """The title of each of the ``count`` documents of `document_table` (``codes``: its rows' documents): the title
    of its first chunk."""
    first = np.unique(codes, return_index=True)[1] if len(codes) else np.zeros(0, dtype=np.int64)
    titles = [chunks[int(row)].title for row in first.tolist()]
    return titles + [""] * (count - len(titles))


class IndexDocument(NamedTuple):
    document: str  # its id: for an index of a folder, the file's path in it
    chunks: int
    title: str  # its first chunk's title (a PDF's metadata title, a Markdown file's first heading, ...)


def index_documents(index_dir: Path, patterns: Iterable[str] = ()) -> list[IndexDocument]:
    """The documents of the index folder ``index_dir`` with their chunk counts and titles, in id order; with
    ``patterns``, those `Scope.of` them keeps (what ``--only`` would search: `local-rag index documents`).

    Raises:
        IndexError_: the folder holds no index. BadInputError: a pattern matches no document.
    """
    from local_rag.index.chunkfile import ChunkFile
    from local_rag.index.manifest import IndexManifest

    manifest = IndexManifest.load(index_dir)
    chunks = ChunkFile(index_dir / "chunks.jsonl")
    names, codes = document_table(chunks)
    counts = np.bincount(codes, minlength=len(names)) if len(codes) else np.zeros(len(names), dtype=np.int64)
    titles = document_titles(chunks, codes, len(names))
    scope = Scope.of(patterns)
    keep = set(resolve(scope, names, codes, index=manifest.name, source=manifest.corpus_source,
                       titles=lambda: titles).documents) if scope else set(names)
    return [IndexDocument(name, int(n), title)
            for name, n, title in zip(names, counts.tolist(), titles, strict=True) if name in keep]


def _label(index: str) -> str:
    return f"index {index!r}" if index else "the index"


def _no_match(group: Sequence[str], names: Sequence[str], index: str, what: str) -> str:
    shown = ", ".join(repr(p) for p in group)
    folders = sorted({n.rsplit("/", 1)[0] for n in names if "/" in n})
    near: list[str] = []
    for pattern in group:
        plain = norm(pattern).replace("*", "").replace("?", "")
        lower = {norm(n): n for n in [*folders, *names]}
        near += [lower[m] for m in difflib.get_close_matches(plain, list(lower), n=3, cutoff=0.6) if lower[m] not in near]
    hint = f"; did you mean {', '.join(repr(n) for n in near[:3])}?" if near else ""
    example = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    listing = f"`local-rag index documents{' ' + index if index else ''}` lists them"
    return (f"{what} {shown} matches no document of {_label(index)} ({len(names)} documents, named by their path in "
            f"the folder or their id, or by words of their title: {example}; {listing}){hint}")

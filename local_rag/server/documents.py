"""The served index's documents, for the tools that list and read them: the MCP server's ``documents`` and ``read``,
and the vector store files API (``GET /v1/vector_stores/{id}/files[/{file}[/content]]``, `local_rag.server.search`).

Example:
    >>> [d.document for d in served_documents(pipeline, pipeline.scope())]  # doctest: +SKIP
    ['design.md', 'notes/audit.md']
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from local_rag.errors import BadInputError
from local_rag.retrieve.scope import IndexDocument, Scope

if TYPE_CHECKING:
    from local_rag.pipeline import Pipeline


class WholeText(NamedTuple):
    document: str
    title: str
    text: str  # a section after another under its heading ("## heading")
    cut: bool  # cut at the caller's max_chars


def served_documents(pipeline: Pipeline, scope: Scope | None = None) -> list[IndexDocument]:
    """The documents of the served index, in id order (``INDEX:name`` for each index of ``--also`` when there are
    several), those ``scope`` keeps when given (`Pipeline.scope`: the server's ``--only`` and any narrowing)."""
    from local_rag.retrieve.scope import index_documents

    settings = pipeline.settings
    joint = bool(settings.retrieval.also)
    every = [d._replace(document=f"{name}:{d.document}") if joint else d
             for name in [settings.index, *settings.retrieval.also]
             for d in index_documents(settings.indexes_dir / name)]
    resolved = getattr(pipeline.retriever, "scoped", lambda s: None)(scope) if scope else None
    if resolved is None:
        return every
    kept = set(resolved.documents)
    return [d for d in every if d.document in kept]


def document_file(pipeline: Pipeline, document: str) -> tuple[Path, str]:
    """Where ``document`` of the served index (``INDEX:name`` with ``--also``) lies: the folder its index follows,
    and its name there.
    Only a document the index holds: a file its build left out (``--exclude``, ``.gitignore``, hidden) is not given.

    Raises:
        BadInputError: no such document in the index, or a corpus of records (its documents are records, not files).
    """
    from local_rag.index.manifest import IndexManifest
    from local_rag.retrieve.joint import split_name

    settings = pipeline.settings
    names = [settings.index, *settings.retrieval.also]
    index, name = split_name(document, names) if settings.retrieval.also else (settings.index, document)
    if index is None or document not in set(getattr(pipeline.retriever, "documents", list)()):
        raise BadInputError(f"{document!r} is not a document of index {', '.join(names)} (`documents` lists them)")
    folder = IndexManifest.load(settings.indexes_dir / index).followed_folder()
    if folder is None:
        raise BadInputError(f"index {index} holds records, not a folder's files: its passages are what `search` "
                            "returns")
    return folder, name


def whole_text(pipeline: Pipeline, document: str, max_chars: int) -> WholeText:
    """``document`` read whole, again, from the folder its index follows (`document_file`), at most ``max_chars``.

    Raises:
        BadInputError: as `document_file`, or a file that is gone or cannot be read now.
    """
    from local_rag.corpus.readers import CorpusReport, read_file_passages

    folder, name = document_file(pipeline, document)
    path = folder / name
    if not path.exists():
        raise BadInputError(f"{document!r} is no longer in {folder} (the next sync removes it from the index)")
    report = CorpusReport()
    passages = read_file_passages(folder, path, report)
    if not passages:
        raise BadInputError(f"{document!r} cannot be read now: {report.unreadable.get(name, 'no text')}")
    parts = []
    for passage in passages:
        heading = f"## {passage.section}\n\n" if passage.section and passage.section != passage.title else ""
        parts.append(heading + passage.text)
    text = "\n\n".join(parts)
    return WholeText(document, passages[0].title, text[:max_chars], len(text) > max_chars)

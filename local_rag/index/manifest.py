"""The index manifest: what an index was built from, checked on every load."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from local_rag.corpus.options import ReadOptions
from local_rag.errors import IndexError_

FORMAT_VERSION = 1
MANIFEST_FILE = "manifest.json"
_SHAPE: dict[str, type] = {
    "name": str, "created": str, "corpus_hash": str, "passages": int, "chunks": int, "chunker": dict, "skipped": int,
    "format_version": int, "history": list, "stats": dict, "integrity": dict, "checksum": str, "unreadable": dict,
    "backend": str, "left_out": list, "exclude": list, "unread_scans": dict, "images": bool,
    "code": bool, "gitignore": bool, "git_log": bool, "folder": str,
}
_DENSE_KEYS = ("backend", "model", "model_checksum", "dimension", "factory")


@dataclass
class IndexManifest:
    name: str
    created: str
    package_version: str
    corpus_source: str
    corpus_hash: str
    passages: int
    chunks: int
    chunker: dict[str, Any]
    sparse: dict[str, Any] | None = None
    dense: dict[str, Any] | None = None
    skipped: int = 0
    backend: str = "local"  # where the vectors and BM25 terms live: local (FAISS + bm25s files) or qdrant
    format_version: int = FORMAT_VERSION
    history: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, float] = field(default_factory=dict)  # seconds per build step, peak RSS
    #: files of a document folder that could not be read -> the reason (the end-of-build report)
    unreadable: dict[str, str] = field(default_factory=dict)
    #: files of a document folder that `index remove --by doc` took out: `index sync` leaves them out (``--restore``)
    left_out: list[str] = field(default_factory=list)
    #: patterns of files (or document ids) every build, add and sync of the index leaves out (``--exclude``)
    exclude: list[str] = field(default_factory=list)
    #: files of a document folder with scanned pages left unread for want of the ``ocr`` extra -> those pages
    #: (`index sync` reads them once it is installed)
    unread_scans: dict[str, list[int]] = field(default_factory=dict)
    #: a folder's pictures are read too, by OCR (``--images``): at every add and sync
    images: bool = False
    #: a folder's source and configuration files are read too (``--code``): at every add and sync
    code: bool = False
    #: what the folder's ``.gitignore`` files name is left out (``--gitignore``): at every add and sync
    gitignore: bool = False
    #: the repository's commit messages are read too (``--git-log``): at every add and sync
    git_log: bool = False
    #: the folder of documents the index follows, absolute (as resolved at its build or last sync; "" for a corpus
    #: of records, and in indexes built before session 60): what `index sync --all` syncs
    folder: str = ""
    integrity: dict[str, Any] = field(default_factory=dict)  # file checksums, see `local_rag.index.integrity`
    checksum: str = ""  # sha256 of the manifest's own content (all fields but this one); "" in older indexes

    def read_options(self) -> ReadOptions:
        """What every add and sync of the index reads of a folder besides its documents, as it was built (and
        synced) with."""
        return ReadOptions(tuple(self.exclude), self.images, self.code, self.gitignore, self.git_log)

    def keep(self, options: ReadOptions) -> None:
        """Keep ``options`` for every later add and sync."""
        self.exclude = list(options.exclude)
        self.images, self.code, self.gitignore, self.git_log = (options.images, options.code, options.gitignore,
                                                                 options.git_log)

    def followed_source(self) -> str:
        """The corpus or folder the index follows: the folder of its last sync, else what it was built from (as
        given then)."""
        synced = [h["source"] for h in self.history if h.get("action") == "sync" and h.get("source")]
        return str(synced[-1]) if synced else self.corpus_source

    def of_records(self) -> bool:
        """The index was built from a corpus of records (a ``.jsonl``, ``.gz``, ``.zip`` or ``.json`` file), not a
        folder of documents: there is no folder to sync."""
        return Path(self.corpus_source).suffix.lower() in (".jsonl", ".gz", ".zip", ".json")

    def followed_folder(self) -> Path | None:
        """The folder of documents the index follows, absolute: as its build or last sync resolved it, else what it
        was built from when that was given as an absolute folder; None for a corpus of records, or a folder an older
        index recorded as a relative path (relative to wherever it was built)."""
        if self.folder:
            return Path(self.folder)
        source = Path(self.followed_source()).expanduser()
        return source if source.is_absolute() and source.is_dir() else None

    def own_checksum(self) -> str:
        # `unreadable`, `backend`, `left_out`, `exclude`, `unread_scans`, `images`, `code`, `gitignore`, `git_log` came
        # later: left out
        # when at their defaults, so older manifests' checksums match
        data = {k: v for k, v in asdict(self).items() if k != "checksum"
                and not (k in ("unreadable", "left_out", "exclude", "unread_scans", "images", "code", "gitignore",
                               "git_log", "folder") and not v)
                and not (k == "backend" and v == "local")}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    def save(self, folder: Path) -> None:
        self.checksum = self.own_checksum()
        tmp = folder / (MANIFEST_FILE + ".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, folder / MANIFEST_FILE)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def shape_problem(self) -> str:
        """What is wrong with the types of a loaded manifest ('' when nothing): a hand-edited or damaged file must
        fail here with one line, not later with a traceback."""
        for key, kind in _SHAPE.items():
            value = getattr(self, key)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                return f"{key!r} is {type(value).__name__}, expected {kind.__name__}"
        for key in ("sparse", "dense"):
            value = getattr(self, key)
            if value is not None and not isinstance(value, dict):
                return f"{key!r} is {type(value).__name__}, expected an object or null"
        missing = [k for k in _DENSE_KEYS if self.dense is not None and k not in self.dense]
        if missing:
            return f"'dense' lacks {', '.join(missing)}"
        if self.chunks < 0 or self.passages < 0:
            return "negative counts"
        return ""

    @classmethod
    def load(cls, folder: Path) -> IndexManifest:
        path = folder / MANIFEST_FILE
        if not folder.exists():
            raise IndexError_(f"no index at {folder}; build one with `local-rag index build CORPUS --index {folder.name}`")
        if not path.exists():
            raise IndexError_(f"{folder} is not a local-rag index (no {MANIFEST_FILE}); rebuild it with `local-rag index build`")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            manifest = cls(**data)
        except (json.JSONDecodeError, TypeError, UnicodeDecodeError, RecursionError) as exc:
            raise IndexError_(f"{path} is corrupt ({exc}); rebuild the index with `local-rag index build`") from exc
        problem = manifest.shape_problem()
        if not problem and manifest.checksum and manifest.checksum != manifest.own_checksum():
            problem = "its content does not match its checksum: edited or damaged"
        if problem:
            raise IndexError_(f"{path} is corrupt ({problem}); rebuild the index with `local-rag index build`")
        if manifest.format_version != FORMAT_VERSION:
            raise IndexError_(
                f"{folder} has index format {manifest.format_version}, this local-rag reads {FORMAT_VERSION}; rebuild it"
            )
        return manifest


def built_from_elsewhere(folder: Path, corpus: str | Path) -> str | None:
    """The corpus an existing index at ``folder`` was built from, when it is not ``corpus``: a build under that name
    would replace an index of other documents (``None``: no index there, an unreadable manifest, or the same corpus,
    by its path as given or resolved).

    Example:
        >>> built_from_elsewhere(Path("indexes/notes"), "~/notes")  # doctest: +SKIP
        '/home/me/old-notes'
    """
    try:
        source = IndexManifest.load(folder).corpus_source
    except IndexError_:
        return None
    return None if same_place(source, corpus) else source


def same_place(recorded: str, given: str | Path) -> bool:
    """Whether a path a manifest recorded (as given then, maybe relative) names ``given``: spelled the same, or the
    same place once resolved."""
    return recorded == str(given) or Path(recorded).expanduser().resolve() == Path(given).expanduser().resolve()

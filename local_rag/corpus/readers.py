"""Corpus readers. Each yields `Passage` records and reports problems with the file and line.

Supported inputs:
- the official MTRAG corpus files: ``{"_id", "title", "text", "url"}`` per line, as ``.jsonl``, ``.jsonl.gz`` or the
  published ``.jsonl.zip``;
- a ``.json`` file holding a JSON array of such records (as many tools export passages);
- a BEIR dataset folder (its ``corpus.jsonl``);
- a folder of a person's own documents: ``.txt``, ``.md``, ``.html``/``.htm``, ``.pdf``, ``.docx``, ``.pptx`` (see
  `local_rag.corpus.documents`; one passage per PDF page or PPTX slide, one per file otherwise, a section longer
  than ~2,000 characters cut into pieces at headings and paragraph breaks (`local_rag.corpus.pieces`); the chunker
  windows each passage). A file that cannot be read is listed with its reason in ``CorpusReport.unreadable``.
  Hidden folders and files (a name starting with a dot) are left out (`folder_files`);
- one such document given alone, read as a folder holding only it would be.

A malformed line, an empty text, a duplicate id or an undecodable byte stops the read with `BadInputError`
naming the file and line, unless ``skip_bad=True``, which skips the record and counts it in the `CorpusReport`.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import tarfile
import time
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple, cast

from local_rag.corpus.assistants import assistant_export_part
from local_rag.corpus.chats import CHAT_KINDS, chat_export_part
from local_rag.corpus.digest import corpus_hash, file_digest, passage_digest
from local_rag.corpus.documents import (
    CODE_KINDS,
    DOC_SUFFIXES,
    IMAGE_SUFFIXES,
    UnreadableFile,
    document_suffix,
    printable_name,
    read_document,
)
from local_rag.corpus.git_log import history_paths
from local_rag.corpus.gitignore import GitIgnores
from local_rag.corpus.google_chat import google_chat_part
from local_rag.corpus.keep import keep_trashed, keep_twin
from local_rag.corpus.mbox import left_out_mail, mail_store_part
from local_rag.corpus.options import ReadOptions
from local_rag.corpus.pieces import heading_at, piece_bounds
from local_rag.corpus.progress import show_progress
from local_rag.errors import BadInputError
from local_rag.patterns import matches_any
from local_rag.records import Passage
from local_rag.safejson import problem

log = logging.getLogger("local_rag.corpus")

__all__ = ["DOC_SUFFIXES", "IMAGE_SUFFIXES", "CorpusReport", "check_corpus_path", "document_paths", "folder_files", "mtrag_doc_id", "note_read", "read_corpus",
           "originals", "read_file_passages", "relative_name"]


@dataclass
class CorpusReport:
    """What a read saw: counts, skipped records with reasons, and an order-independent corpus hash."""

    passages: int = 0
    skipped: list[str] = field(default_factory=list)
    #: files of a document folder that could not be read -> the reason (encrypted, corrupt, scanned, ...)
    unreadable: dict[str, str] = field(default_factory=dict)
    #: format -> (seconds reading, pages read): what `local-rag index build` reports as pages a second
    formats: dict[str, tuple[float, int]] = field(default_factory=dict)
    progress: bool = False  # a progress bar over the files of a folder
    #: a folder of documents: relative path -> sha256 of the file's bytes, for every file read (readable or not)
    files: dict[str, str] = field(default_factory=dict)
    where: str = ""  # file (and line) of the record read last, for messages about it
    #: files of a document folder that are not UTF-8 -> the encoding they were read in (`decode_text`)
    decoded: dict[str, str] = field(default_factory=dict)
    #: files read despite damage -> what their parser repaired or warned of (`local_rag.corpus.notes`)
    repaired: dict[str, list[str]] = field(default_factory=dict)
    #: files of a document folder whose bytes equal another's -> the file read for them (`originals`): not read, so
    #: a search does not return the same text twice (a download's "report (1).pdf")
    copies: dict[str, str] = field(default_factory=dict)
    #: documents (files of a folder, document ids of records) that exclude patterns left out (``--exclude``)
    excluded: list[str] = field(default_factory=list)
    #: files with pages read by OCR -> those pages (a scanned PDF: `local_rag.corpus.ocr`)
    ocr: dict[str, list[int]] = field(default_factory=dict)
    #: files with pages that have no text layer, left unread for want of the ``ocr`` extra -> those pages
    unread_scans: dict[str, list[int]] = field(default_factory=dict)
    #: file digest -> the file read for it (`index sync` sets it for the folder's files it does not read again)
    originals: dict[str, str] = field(default_factory=dict, repr=False)
    _hashes: dict[str, str] = field(default_factory=dict, repr=False)

    def add(self, passage: Passage) -> None:
        self.passages += 1
        self._hashes[passage.id] = passage_digest(passage)

    @property
    def corpus_hash(self) -> str:
        return corpus_hash(self._hashes)


_CLAPNQ_ID = re.compile(r"^(\d+)_\d+-\d+")  # Wikipedia page id, then the passage's character offsets


def mtrag_doc_id(passage_id: str) -> str:
    """Document id of an MTRAG passage id: the part before the first offset (``ibmcld_00474-7885-8455`` ->
    ``ibmcld_00474``; ``100045-0-277`` -> ``100045``); ClapNQ's ids put the page id before an underscore
    (``502521937_10538-10692-0-150`` -> ``502521937``).

    Example:
        >>> [mtrag_doc_id(p) for p in ("ibmcld_00474-7885-8455", "502521937_10538-10692-0-150")]
        ['ibmcld_00474', '502521937']
    """
    match = _CLAPNQ_ID.match(passage_id)
    return match.group(1) if match else passage_id.split("-", 1)[0]


def read_corpus(path: str | Path, skip_bad: bool = False, report: CorpusReport | None = None,
                options: ReadOptions = ReadOptions()) -> Iterator[Passage]:
    """Yield the passages of a corpus file or folder, but those of the documents ``options.exclude`` names
    (`local_rag.patterns`: a folder's files by their path in it, never read; records by their document id); the
    rest of ``options`` says what else of a folder is read (`ReadOptions`: pictures, code, the history) and what
    its ``.gitignore`` files leave out.

    Example:
        >>> report = CorpusReport()
        >>> passages = list(read_corpus("corpus.jsonl", report=report))  # doctest: +SKIP
        >>> report.corpus_hash  # doctest: +SKIP
    """
    check_corpus_path(path)
    path = Path(path)
    report = report if report is not None else CorpusReport()
    seen: set[str] = set()
    if path.is_dir():
        beir = path / "corpus.jsonl"
        source: Iterator[Passage] = (_read_jsonl_file(beir, skip_bad, report) if beir.exists()
                                     else _read_folder(path, skip_bad, report, options))
    elif document_suffix(path) in _READ + IMAGE_SUFFIXES + CODE_KINDS:
        source = _read_document_file(path, report)
    else:
        _check_jsonl_like(path)
        source = _read_jsonl_file(path, skip_bad, report)
    left_out: set[str] = set()
    for passage in source:
        if options.exclude and matches_any(passage.doc_id, options.exclude):  # records (a folder's files are never read)
            left_out.add(passage.doc_id)
            continue
        if passage.id in seen:
            _bad(f"{report.where or path}: duplicate passage id {passage.id!r}", skip_bad, report)
            continue
        seen.add(passage.id)
        report.add(passage)
        yield passage
    if left_out:
        report.excluded += sorted(left_out)
        log.warning("note: %d document(s) left out by --exclude %s: %s", len(left_out), " ".join(options.exclude),
                    _first_five(sorted(left_out)))


_WEB_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|www\.)", re.IGNORECASE)


def check_corpus_path(path: str | Path) -> None:
    """Refuse, in one line, a corpus that is not on this machine: the commands call it before loading any model (a
    web address or a mistyped path was named only after "model ... is not in ...", or as ``https:/docs.example.com``).

    Raises:
        BadInputError: a web address (local-rag never goes online: save the pages first), or no such file or folder
            (with a hint when a quoted ``~`` was not expanded by the shell).
    """
    text = str(path)
    if text.lower().startswith("file://"):
        from urllib.parse import unquote, urlsplit

        raise BadInputError(f"{text} is a file URL: give the path itself ({unquote(urlsplit(text).path)})")
    if _WEB_ADDRESS.match(text):
        raise BadInputError(f"{text} is a web address: local-rag reads files on this machine and never goes online; "
                            "save the pages first (a browser's Save Page As, or `wget --mirror --convert-links "
                            f"--adjust-extension {text}`) and build from that folder")
    if Path(text).exists():
        return
    if text.startswith("~") and Path(text).expanduser().exists():
        raise BadInputError(f"corpus not found: {text} (the shell did not expand ~ inside quotes: write "
                            f"{Path(text).expanduser()})")
    raise BadInputError(f"corpus not found: {text}")


def _check_jsonl_like(path: Path) -> None:
    """Refuse a file that is neither a document local-rag reads nor JSONL passages (a ``.csv``, a ``.tsv``, an
    ``.odt``): it was read as JSONL and said "line 1: not valid JSON", as if the file were a broken corpus."""
    name = path.name.lower()
    if name.endswith((".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tar.xz")) and tarfile.is_tarfile(path):
        raise BadInputError(f"{path}: a tar archive, not JSONL passages: unpack it and build from its folder "
                            f"(`mkdir notes && tar -xf {path.name} -C notes && local-rag index build notes`)")
    if name.endswith((".jsonl", ".json", ".ndjson", ".gz", ".zip")):
        return
    with path.open("rb") as fh:
        head = fh.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    if head and not head.startswith(b"{"):
        raise BadInputError(f"{path}: not a corpus local-rag reads: JSONL passages (.jsonl, .jsonl.gz, .zip), a BEIR "
                            f"folder, or documents ({' '.join(DOC_SUFFIXES)}) or a folder of them")


def _bad(message: str, skip_bad: bool, report: CorpusReport) -> None:
    if not skip_bad:
        raise BadInputError(message + " (use --skip-bad to skip such records)")
    report.skipped.append(message)


def _open_jsonl(path: Path) -> Iterator[tuple[str, IO[bytes]]]:
    name = path.name.lower()
    if name.endswith(".zip"):
        try:
            archive = zipfile.ZipFile(path)
        except zipfile.BadZipFile as exc:
            raise BadInputError(f"{path}: not a valid zip archive ({exc})") from exc
        with archive:
            if {"users.json", "channels.json"} <= {Path(m).name for m in archive.namelist()}:
                raise BadInputError(f"{path}: a Slack export, not JSONL passages: unpack it and build from its folder "
                                    f"(`unzip {path.name} -d slack && local-rag index build slack`)")
            members = [m for m in archive.namelist() if m.endswith((".jsonl", ".json")) and not m.startswith("__MACOSX")]
            if not members:
                documents = [m for m in archive.namelist() if m.lower().endswith(DOC_SUFFIXES)]
                if documents:  # a zipped folder of notes: the documents are read from a folder (files.json, sync)
                    raise BadInputError(f"{path}: a zip of {len(documents)} document(s), not JSONL passages: unpack "
                                        f"it and build from its folder (`unzip {path.name} -d notes && local-rag "
                                        "index build notes`)")
                raise BadInputError(f"{path}: the archive holds no .jsonl file")
            for member in members:
                with archive.open(member) as fh:
                    yield f"{path}!{member}", fh
    elif name.endswith(".gz"):
        with gzip.open(path, "rb") as fh:
            yield str(path), cast(IO[bytes], fh)
    else:
        with path.open("rb") as fh:
            yield str(path), fh


def _read_jsonl_file(path: Path, skip_bad: bool, report: CorpusReport) -> Iterator[Passage]:
    whole = _json_array(path)
    if whole is not None:  # a `.json` file holding a JSON array of passage objects
        for i, record in enumerate(whole, start=1):
            passage = _passage(record, f"{path}[{i}]", skip_bad, report)
            if passage is not None:
                yield passage
        return
    for label, fh in _open_jsonl(path):
        for lineno, raw in enumerate(fh, start=1):
            where = f"{label}:{lineno}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                _bad(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})", skip_bad, report)
                continue
            if lineno == 1:
                line = line.removeprefix("\ufeff")  # a UTF-8 byte order mark (Windows editors write one)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError) as exc:
                what = (f"{exc.msg.removesuffix(' at')} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError)
                        else problem(exc))
                _bad(f"{where}: not valid JSON ({what})", skip_bad, report)
                continue
            passage = _passage(record, where, skip_bad, report)
            if passage is not None:
                yield passage


def _json_array(path: Path) -> list[Any] | None:
    """The records of a plain ``.json`` file that is one JSON array (``[{"_id": ..., "text": ...}, ...]``, as many
    tools export passages); None for JSON lines. Before, such a file stopped at "line 1: not valid JSON" (pretty-printed)
    or "expected a JSON object, got list" (on one line); a pretty-printed single object is named as such.

    Raises:
        BadInputError: a JSON document that is one object (not passages), or not UTF-8.
    """
    if not path.name.lower().endswith(".json") or not path.is_file():
        return None
    with path.open("rb") as fh:
        head = fh.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    if not head.startswith((b"[", b"{")):
        return None
    try:
        data = json.loads(path.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except (ValueError, RecursionError):
        return None  # JSON lines under a .json name (one object a line), or broken: read line by line, as before
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and "\n" in head.decode("utf-8", "replace").strip():
        if "text" in data:  # one passage, pretty-printed (on one line it is a JSON line, read as before)
            return [data]
        keys = ", ".join(list(map(str, data))[:5])
        raise BadInputError(f"{path}: one JSON object (keys: {keys}), not passages: a corpus is JSON lines (one "
                            "passage object a line: _id, title, text, url) or a JSON array of such objects")
    return None


def _passage(record: Any, where: str, skip_bad: bool, report: CorpusReport) -> Passage | None:
    """The passage of one record (``_id`` or ``id`` or ``document_id``, ``text``, ``title``, ``url``), or None when it
    is refused (then skipped with ``skip_bad``, else an error)."""
    if not isinstance(record, dict):
        _bad(f"{where}: expected a JSON object, got {type(record).__name__}", skip_bad, report)
        return None
    pid = record.get("_id", record.get("id", record.get("document_id")))
    text = record.get("text")
    if pid is None or (isinstance(pid, str) and not pid.strip()):
        _bad(f"{where}: missing '_id'", skip_bad, report)
        return None
    if not isinstance(text, str):
        _bad(f"{where}: missing or non-string 'text'", skip_bad, report)
        return None
    if not text.strip():
        _bad(f"{where}: empty text for passage {pid!r}", skip_bad, report)
        return None
    pid = str(pid)
    report.where = where
    return Passage(
        id=pid,
        text=text,
        title=str(record.get("title") or ""),
        url=str(record.get("url") or ""),
        doc_id=str(record.get("doc_id") or mtrag_doc_id(pid)),
    )


def _read_folder(folder: Path, skip_bad: bool, report: CorpusReport, options: ReadOptions) -> Iterator[Passage]:
    """The documents of a folder, one passage per page (PDF), slide (PPTX) or file (the rest), long ones in pieces
    (`local_rag.corpus.pieces`). A file that cannot be read is listed in ``report.unreadable`` with its reason and
    the read goes on; files and folders ``options.exclude`` names are not read (nor walked)."""
    found = folder_files(folder, options.exclude, options.gitignore)  # one walk for the documents and the notes
    history = history_paths(folder, options.git_log)
    files = document_paths(found.files, options.images, options.code) + history
    if history:  # read, as its history: not among the hidden folders left out
        found = found._replace(hidden=[h for h in found.hidden if h != ".git"])
    sources = _note_unread(folder, found, report, options)
    if not files:
        left = f" (--exclude left out {len(found.excluded)} file(s) or folder(s))" if found.excluded else ""
        left += f" (.gitignore left out {len(found.ignored)} file(s) or folder(s))" if found.ignored else ""
        hint = f" ({sources} source file(s): --code reads them)" if sources else ""
        raise BadInputError(f"{folder}: no {', '.join(DOC_SUFFIXES)} files found{left}{hint}")
    for path in files:  # hashed first, so each text is read from the file `originals` keeps, whatever the order
        try:
            report.files[relative_name(folder, path)] = file_digest(path)
        except OSError:
            pass  # read_file_passages records why
    report.originals = originals(report.files)
    files = progress_files(files, report.progress)
    for path in files:
        yield from read_file_passages(folder, path, report)
    note_read(report)
    if not report.passages and report.unreadable:
        first, why = next(iter(report.unreadable.items()))
        raise BadInputError(f"{folder}: none of the {len(report.unreadable)} file(s) could be read ({first}: {why})")


def _read_document_file(path: Path, report: CorpusReport) -> Iterator[Passage]:
    """One document given alone (a PDF, a Markdown file, ...): its passages, named as in a folder that holds only it
    (before, it was read as JSON lines: "report.pdf:1: not valid JSON ... use --skip-bad").

    Raises:
        BadInputError: it cannot be read (the reason, as a folder build would list it).
    """
    passages = read_file_passages(path.parent, path, report)
    note_read(report)
    if report.unreadable:
        raise BadInputError(f"{path}: {next(iter(report.unreadable.values()))}")
    yield from passages


def _note_unread(folder: Path, found: FolderFiles, report: CorpusReport, options: ReadOptions) -> int:
    """Files of a type no reader handles are counted as skipped and named in a warning, never passed over in
    silence; so are the pictures not read (no ``options.images``), the source files not read (no ``options.code``),
    the hidden folders and files left out, the links to nothing, the links to folders not followed, the folders of
    installed packages and what ``options.exclude`` left out (``found``: `folder_files`). Returns how many source files were not read
    (a folder of code alone says so in its error)."""
    files, hidden, broken, looped, packages = found.files, found.hidden, found.broken, found.looped, found.packages
    read_as = [(p, document_suffix(p)) for p in files]
    unread = [p for p, kind in read_as
              if kind not in _READ + IMAGE_SUFFIXES + CODE_KINDS and not _store_part(p, kind)]
    trash = [p for p, kind in read_as if kind in _MAIL and left_out_mail(p)]
    if trash:
        report.skipped += [f"{p}: deleted mail or spam, not read" for p in trash]
        log.warning("note: %d mail folder(s) or message(s) of deleted mail or spam left out, as mail programs leave "
                    "them out of a search: %s", len(trash), _first_five(relative_name(folder, p) for p in trash))
    binned = [p for p, kind in read_as if kind == ".keep" and keep_trashed(p)]
    if binned:
        report.skipped += [f"{p}: a note in Google Keep's trash, not read" for p in binned]
        log.warning("note: %d note(s) in Google Keep's trash left out, as Keep leaves them out of a search: %s",
                    len(binned), _first_five(relative_name(folder, p) for p in binned))
    pictures = [] if options.images else [p for p in files if p.suffix.lower() in IMAGE_SUFFIXES]
    if pictures:
        report.skipped += [f"{p}: a picture, not read (--images reads the text in pictures)" for p in pictures]
        log.warning("note: %d picture(s) not read (%s): `--images` reads the text in them by OCR (a scanned page, a "
                    "screenshot; the ocr extra), first: %s", len(pictures),
                    ", ".join(sorted({p.suffix.lower() for p in pictures})), pictures[0])
    sources = [] if options.code else [(p, kind) for p, kind in read_as if kind in CODE_KINDS]
    if sources:
        report.skipped += [f"{p}: source code, not read (--code reads source and configuration files)"
                           for p, _ in sources]
        named = ", ".join(sorted({p.suffix.lower() or p.name for p, _ in sources}))
        log.warning("note: %d source or configuration file(s) not read (%s): `--code` reads them, a definition a "
                    "heading, first: %s", len(sources), named, sources[0][0])
    if found.excluded:
        report.excluded += found.excluded
        log.warning("note: %d file(s) or folder(s) left out by --exclude %s: %s", len(found.excluded),
                    " ".join(options.exclude), _first_five(found.excluded))
    if found.ignored:
        report.excluded += found.ignored
        log.warning("note: %d file(s) or folder(s) the .gitignore files name left out (--gitignore): %s",
                    len(found.ignored), _first_five(found.ignored))
    if broken:
        report.skipped += [f"{folder / b}: a link to nothing, not read" for b in broken]
        log.warning("note: %d link(s) to nothing skipped: %s", len(broken), _first_five(broken))
    if packages:
        log.warning("note: %d folder(s) of installed packages not read: %s (to index one, name it: `index build "
                    "%s`)", len(packages), _first_five(packages), folder / packages[0])
    if looped:
        log.warning("note: %d link(s) to a folder above them or read through another link, not followed: %s",
                    len(looped), _first_five(looped))
    if hidden:
        folders = sorted(h for h in hidden if (folder / h).is_dir() and not h.endswith(".git"))  # never git's insides
        hint = f" (to index a hidden folder, name it: `index build {folder / folders[0]}`)" if folders else ""
        if ".git" in hidden:
            hint += " (.git: `--git-log` reads the repository's history)"
        log.warning("note: %d hidden folder(s) or file(s) not read: %s%s", len(hidden), _first_five(hidden), hint)
    if unread:
        kinds = sorted({p.suffix.lower() or "(no suffix)" for p in unread})
        report.skipped += [f"{p}: unsupported file type, not read" for p in unread]
        log.warning("note: %d file(s) of %s skipped: local-rag reads %s (first: %s)", len(unread), ", ".join(kinds),
                    FORMATS, unread[0])
    return len(sources)


def note_read(report: CorpusReport) -> None:
    """Files read in an encoding other than UTF-8 are named in one warning, with the encoding (a wrong guess shows as
    odd characters in answers: the user can convert the file and sync); copies of files read, in one; files read
    despite damage (a PDF pypdf had to repair) in another, with the parser's first note (some of their text may be
    missing)."""
    if report.decoded:
        log.warning("note: %d file(s) not UTF-8, read in the encoding that fits them best: %s", len(report.decoded),
                    _first_five(f"{rel} ({enc})" for rel, enc in sorted(report.decoded.items())))
    if report.copies:
        log.warning("note: %d file(s) are byte-for-byte copies of others, indexed once: %s", len(report.copies),
                    _first_five(f"{rel} (= {original})" for rel, original in sorted(report.copies.items())))
    if report.ocr:
        log.warning("note: %d file(s) with %d scanned page(s) read by OCR (check what answers quote from them): %s",
                    len(report.ocr), sum(map(len, report.ocr.values())),
                    _first_five(f"{rel} ({_pages(pages)})" for rel, pages in sorted(report.ocr.items())))
    if report.unread_scans:
        log.warning("note: %d file(s) with scanned pages not read, for want of OCR (pip install 'local-rag[ocr]', then "
                    "`local-rag index sync` reads them): %s",
                    len(report.unread_scans),
                    _first_five(f"{rel} ({_pages(pages)})" for rel, pages in sorted(report.unread_scans.items())))
    if report.repaired:
        log.warning("note: %d file(s) damaged, read as far as their parser could repair them (text may be missing): %s",
                    len(report.repaired),
                    _first_five(f"{rel} ({notes[0]})" for rel, notes in sorted(report.repaired.items())))


def originals(digests: dict[str, str]) -> dict[str, str]:
    """Digest -> the file kept for it, of the files (relative name -> digest) of a folder: of byte-for-byte copies,
    the one with the shortest name, then the first in sorted order ("report.pdf" before "report (1).pdf" and
    "old/report.pdf"); the others are `CorpusReport.copies`, not read.

    Example:
        >>> originals({"report (1).pdf": "d1", "report.pdf": "d1", "notes.md": "d2"})
        {'d2': 'notes.md', 'd1': 'report.pdf'}
    """
    kept: dict[str, str] = {}
    for rel in sorted(digests, key=lambda r: (len(r), r)):
        kept.setdefault(digests[rel], rel)
    return kept


def _pages(numbers: list[int]) -> str:
    """``page 3``, ``pages 1-12``, ``pages 2, 5, 9``.

    Example:
        >>> _pages([1, 2, 3]), _pages([4]), _pages([2, 5, 9, 10])
        ('pages 1-3', 'page 4', 'pages 2, 5, 9, 10')
    """
    if len(numbers) == 1:
        return f"page {numbers[0]}"
    if numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"pages {numbers[0]}-{numbers[-1]}"
    return "pages " + ", ".join(map(str, numbers))


def _first_five(named: Iterable[str]) -> str:
    items = list(named)
    return ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")


def document_paths(files: list[Path], images: bool = False, code: bool = False) -> list[Path]:
    """Those of ``files`` (`folder_files`) that `read_corpus` reads as documents, by their suffix (``images``: the
    pictures too; ``code``: the source and configuration files too), but mail folders of deleted mail or spam and
    empty ones (`local_rag.corpus.mbox`)."""
    suffixes = _READ + (IMAGE_SUFFIXES if images else ()) + (CODE_KINDS if code else ())
    return [p for p in files if (kind := document_suffix(p)) in suffixes and not _left_out(p, kind)]


def _left_out(path: Path, kind: str) -> bool:
    """``path`` (read as ``kind``) is mail left out (Trash, Spam, a message marked deleted) or a mail store's empty
    folder, a note in Google Keep's trash, an empty source file, or the HTML twin of notes or conversations read from
    their JSON (Keep's, ChatGPT's ``chat.html``); looked at for those kinds only, each look costing a few file-system
    calls."""
    if kind in _MAIL:
        return left_out_mail(path) or mail_store_part(path)
    if kind == ".keep":
        return keep_trashed(path)
    if kind in CODE_KINDS:
        return _empty(path)  # a package's empty __init__.py: nothing to read, nothing to list
    return kind == ".html" and (keep_twin(path) or assistant_export_part(path))


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False  # read_file_passages says why


_MAIL = (".mbox", ".eml")  # what a mail program's own files are read as (`local_rag.corpus.mbox.mail_store_suffix`)
_READ = DOC_SUFFIXES + CHAT_KINDS  # what is read: documents by their suffix, chat exports' .json files by their kind
# what the skip note names
FORMATS = (", ".join(DOC_SUFFIXES)
           + " and the exports of Slack, Discord, Telegram, Google Chat, Mattermost, Google Keep, ChatGPT and Claude")


def _store_part(path: Path, kind: str) -> bool:
    """``path`` (read as ``kind``, not a document) belongs to a mail store or a chat export and is read with it, or
    holds nothing to read: not named as unsupported."""
    if kind == ".json":
        return chat_export_part(path) or assistant_export_part(path) or google_chat_part(path)
    return mail_store_part(path)


class FolderFiles(NamedTuple):
    files: list[Path]  # the files read or named as unsupported, sorted
    hidden: list[str]  # hidden folders and files left out (paths under the folder)
    broken: list[str]  # links to nothing (paths under the folder)
    looped: list[str] = []  # links to a folder above them or already read, not followed (paths under the folder)
    packages: list[str] = []  # folders of installed packages left out (`installed_packages`)
    excluded: list[str] = []  # files and folders exclude patterns named (paths under the folder), not walked
    ignored: list[str] = []  # files and folders the .gitignore files name (``gitignore``), not walked


def folder_files(folder: Path, exclude: Sequence[str] = (), gitignore: bool = False) -> FolderFiles:
    """The files under ``folder``, sorted, the hidden folders and files left out, the links that point nowhere and
    the links to folders not followed (their paths under ``folder``): a name that starts with a dot is skipped with
    all it holds, as git, ripgrep and file managers hide them (a notes vault's ``.trash`` of deleted notes, ``.git``,
    a ``.venv`` full of package READMEs). Links to files are read; a link to a folder elsewhere (a vault's
    ``work -> /mnt/share/work``) is followed, its files named through the link, unless its folder is inside
    ``folder`` (read at its own place), above the link (a loop) or already read through another link. Files and
    folders ``exclude`` names (`local_rag.patterns.matches` of their path under ``folder``) are left out, and with
    ``gitignore`` those its ``.gitignore`` files name (`local_rag.corpus.gitignore`).

    Example:
        >>> folder_files(Path("notes")).hidden  # doctest: +SKIP
        ['.obsidian', '.trash']
    """
    files: list[Path] = []
    hidden: list[str] = []
    broken: list[str] = []
    looped: list[str] = []
    packages: list[str] = []
    excluded: list[str] = []
    ignored: list[str] = []
    ignores = GitIgnores(folder) if gitignore else None
    top = Path(os.path.realpath(folder))
    followed: set[Path] = set()
    for root, dirs, names in os.walk(folder, followlinks=True):
        here = Path(root)
        hidden += [relative_name(folder, here / name) for name in dirs if name.startswith(".")]
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        installed = {d for d in dirs if installed_packages(here / d)}  # one look at each folder
        packages += [relative_name(folder, here / d) for d in sorted(installed)]
        dirs[:] = [d for d in dirs if d not in installed]
        if exclude:
            named = {d for d in dirs if matches_any(relative_name(folder, here / d), exclude)}
            excluded += [relative_name(folder, here / d) + "/" for d in sorted(named)]
            dirs[:] = [d for d in dirs if d not in named]
        if ignores is not None:
            named = {d for d in dirs if ignores.ignored(relative_name(folder, here / d), is_dir=True)}
            ignored += [relative_name(folder, here / d) + "/" for d in sorted(named)]
            dirs[:] = [d for d in dirs if d not in named]
        for d in [d for d in dirs if (here / d).is_symlink()]:
            target = Path(os.path.realpath(here / d))
            inside = target.is_relative_to(top)  # read at its own place
            if inside or target in followed or Path(os.path.realpath(here)).is_relative_to(target):
                dirs.remove(d)
                if not inside:
                    looped.append(relative_name(folder, here / d))
            else:
                followed.add(target)
        for name in names:
            path = here / name
            if name.startswith("."):
                hidden.append(relative_name(folder, path))
            elif exclude and matches_any(relative_name(folder, path), exclude):
                excluded.append(relative_name(folder, path))
            elif ignores is not None and ignores.ignored(relative_name(folder, path), is_dir=False):
                ignored.append(relative_name(folder, path))
            elif path.is_file():
                files.append(path)
            elif path.is_symlink():
                broken.append(relative_name(folder, path))
    return FolderFiles(sorted(files), sorted(hidden), sorted(broken), sorted(looped), sorted(packages), sorted(excluded),
                       sorted(ignored))


PACKAGE_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages", "bower_components"})


def installed_packages(path: Path) -> bool:
    """A folder of installed packages, not of one's documents: ``node_modules``, ``__pycache__``, ``site-packages``,
    or a Python environment (it holds ``pyvenv.cfg``: ``venv``, ``env``), or a ``vendor`` folder of Go modules
    (``modules.txt``), Composer packages (``autoload.php``) or Ruby gems (``bundle``): a folder named ``vendor`` of
    one's own (a business's vendor contracts) is read. A project folder indexed whole read every package's README and
    licence (a Node project: thousands), which then answered questions beside one's own notes."""
    if path.name in PACKAGE_FOLDERS or (path / "pyvenv.cfg").is_file():
        return True
    return path.name == "vendor" and any((path / marker).exists() for marker in _VENDOR_MARKERS)


_VENDOR_MARKERS = ("modules.txt", "autoload.php", "bundle")  # Go's `go mod vendor`, Composer, Bundler


def relative_name(folder: Path, path: Path) -> str:
    """The name of a folder's file in the index: its path under the folder, in ``/`` form and `printable_name`."""
    return printable_name(path.relative_to(folder).as_posix())


def progress_files(files: list[Path], show: bool) -> list[Path]:
    if not show:
        return files
    from tqdm import tqdm

    return cast(list[Path], tqdm(files, desc="reading", unit="file"))


def read_file_passages(folder: Path, path: Path, report: CorpusReport) -> list[Passage]:
    """The passages of one document of ``folder`` (ids from its relative path), or none when it cannot be read
    (the reason goes to ``report.unreadable``)."""
    rel = relative_name(folder, path)
    report.where = str(path)
    started = time.perf_counter()
    try:
        report.files[rel] = digest = report.files.get(rel) or file_digest(path)
        if report.originals.setdefault(digest, rel) != rel:
            report.copies[rel] = report.originals[digest]
            return []
        token = show_progress.set(report.progress)
        try:
            document = read_document(path)
        finally:
            show_progress.reset(token)
    except (UnreadableFile, OSError) as exc:
        report.unreadable[rel] = str(exc)
        return []
    if document.encoding != "utf-8":
        report.decoded[rel] = document.encoding
    if document.notes:
        report.repaired[rel] = document.notes
    if document.ocr_pages:
        report.ocr[rel] = document.ocr_pages
    if document.unread_scans:
        report.unread_scans[rel] = document.unread_scans
    suffix = document.kind or document_suffix(path).lstrip(".")
    seconds, pages = report.formats.get(suffix, (0.0, 0))
    report.formats[suffix] = (seconds + time.perf_counter() - started, pages + document.pages)
    url = path.resolve().as_uri()
    cut = [piece_bounds(section.text, section.headings) for section in document.sections]
    single = sum(map(len, cut)) == 1
    out = []
    k = 0  # pieces of unpaged sections, numbered through the file (one piece a section: its index, as before)
    for section, bounds in zip(document.sections, cut, strict=True):
        for j, (start, end) in enumerate(bounds, 1):
            if single:
                pid = rel
            elif section.page:
                pid = f"{rel}#p{section.page}" if len(bounds) == 1 else f"{rel}#p{section.page}.{j}"
            else:
                pid = f"{rel}#s{k}"
            k += 0 if section.page else 1
            out.append(Passage(
                id=pid, text=section.text[start:end], title=document.title, url=url, doc_id=rel, page=section.page,
                section=heading_at(start, section.headings, section.heading),
                headings=tuple((o - start, h) for o, h in section.headings if start <= o < end),
                line=document.first_line + section.text.count("\n", 0, start) if document.first_line else 0,
            ))
    return out

"""Corpus readers. Each yields `Passage` records and reports problems with the file and line.

Supported inputs:
- the official MTRAG corpus files: ``{"_id", "title", "text", "url"}`` per line, as ``.jsonl``, ``.jsonl.gz`` or the
  published ``.jsonl.zip``;
- a BEIR dataset folder (its ``corpus.jsonl``);
- a folder of a person's own documents: ``.txt``, ``.md``, ``.html``/``.htm`` (one passage per file; the chunker
  windows long files).

A malformed line, an empty text, a duplicate id or an undecodable byte stops the read with `BadInputError`
naming the file and line, unless ``skip_bad=True``, which skips the record and counts it in the `CorpusReport`.
"""

from __future__ import annotations

import gzip
import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import IO, cast

from local_rag.corpus.digest import corpus_hash, passage_digest
from local_rag.errors import BadInputError
from local_rag.records import Passage

DOC_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm")


@dataclass
class CorpusReport:
    """What a read saw: counts, skipped records with reasons, and an order-independent corpus hash."""

    passages: int = 0
    skipped: list[str] = field(default_factory=list)
    _hashes: dict[str, str] = field(default_factory=dict, repr=False)

    def add(self, passage: Passage) -> None:
        self.passages += 1
        self._hashes[passage.id] = passage_digest(passage)

    @property
    def corpus_hash(self) -> str:
        return corpus_hash(self._hashes)


def mtrag_doc_id(passage_id: str) -> str:
    """Document id of an MTRAG passage id: the part before the first offset (``ibmcld_00474-7885-8455`` ->
    ``ibmcld_00474``; ``100045-0-277`` -> ``100045``)."""
    return passage_id.split("-", 1)[0]


def read_corpus(path: str | Path, skip_bad: bool = False, report: CorpusReport | None = None) -> Iterator[Passage]:
    """Yield the passages of a corpus file or folder.

    Example:
        >>> report = CorpusReport()
        >>> passages = list(read_corpus("corpus.jsonl", report=report))  # doctest: +SKIP
        >>> report.corpus_hash  # doctest: +SKIP
    """
    path = Path(path)
    report = report if report is not None else CorpusReport()
    if not path.exists():
        raise BadInputError(f"corpus not found: {path}")
    seen: set[str] = set()
    if path.is_dir():
        beir = path / "corpus.jsonl"
        source: Iterator[Passage] = _read_jsonl_file(beir, skip_bad, report) if beir.exists() else _read_folder(
            path, skip_bad, report
        )
    else:
        source = _read_jsonl_file(path, skip_bad, report)
    for passage in source:
        if passage.id in seen:
            _bad(f"{path}: duplicate passage id {passage.id!r}", skip_bad, report)
            continue
        seen.add(passage.id)
        report.add(passage)
        yield passage


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
            members = [m for m in archive.namelist() if m.endswith((".jsonl", ".json")) and not m.startswith("__MACOSX")]
            if not members:
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
    for label, fh in _open_jsonl(path):
        for lineno, raw in enumerate(fh, start=1):
            where = f"{label}:{lineno}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                _bad(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})", skip_bad, report)
                continue
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                _bad(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})", skip_bad, report)
                continue
            if not isinstance(record, dict):
                _bad(f"{where}: expected a JSON object, got {type(record).__name__}", skip_bad, report)
                continue
            pid = record.get("_id", record.get("id", record.get("document_id")))
            text = record.get("text")
            if pid is None or (isinstance(pid, str) and not pid.strip()):
                _bad(f"{where}: missing '_id'", skip_bad, report)
                continue
            if not isinstance(text, str):
                _bad(f"{where}: missing or non-string 'text'", skip_bad, report)
                continue
            if not text.strip():
                _bad(f"{where}: empty text for passage {pid!r}", skip_bad, report)
                continue
            pid = str(pid)
            yield Passage(
                id=pid,
                text=text,
                title=str(record.get("title") or ""),
                url=str(record.get("url") or ""),
                doc_id=str(record.get("doc_id") or mtrag_doc_id(pid)),
            )


class _HTMLText(HTMLParser):
    _SKIP = {"script", "style", "noscript", "template"}
    _BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article", "pre"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skip:
            self._skip -= 1
        elif tag == "title":
            self._in_title = False
        elif tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page, scripts and styles dropped, block elements on their own lines."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    text = re.sub(r"[ \t\r\f\v]+", " ", "".join(parser.parts))
    text = re.sub(r"\n\s*\n+", "\n\n", text).strip()
    return parser.title.strip(), text


def _read_folder(folder: Path, skip_bad: bool, report: CorpusReport) -> Iterator[Passage]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in DOC_SUFFIXES)
    if not files:
        raise BadInputError(f"{folder}: no {', '.join(DOC_SUFFIXES)} files found")
    for path in files:
        rel = path.relative_to(folder).as_posix()
        try:
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            _bad(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})", skip_bad, report)
            continue
        title = ""
        if path.suffix.lower() in (".html", ".htm"):
            title, text = html_to_text(raw)
        else:
            text = raw.strip()
            match = re.match(r"#\s+(.+)", text)
            if match and path.suffix.lower() in (".md", ".markdown"):
                title = match.group(1).strip()
        if not text.strip():
            _bad(f"{path}: empty document", skip_bad, report)
            continue
        yield Passage(id=rel, text=text, title=title or path.stem, url=path.resolve().as_uri(), doc_id=rel)

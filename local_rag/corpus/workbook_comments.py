"""The comments on an Excel workbook's cells (``.xlsx``): notes (Excel's "New Note", what older Excel called a
comment) and threaded comments with their replies (Excel 365's "New Comment"), read from the package's parts, which
openpyxl's read-only mode (`local_rag.corpus.tables.workbook_sheets`) leaves out.

A threaded comment is kept twice in the file: in its own part, with its author's name and its replies, and as a note
for older readers ("[Threaded comment] Your version of Excel allows you to read this threaded comment; ..."), whose
author is the thread's id. The thread is read from its part; the note only where that part is missing.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path
from typing import NamedTuple
from xml.etree import ElementTree

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_THREADED = "{http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments}"
MAX_PART = 50 << 20  # a comments part larger than this (unpacked) is not read: no workbook's comments come near it
#: what Excel writes before a thread's text in the note it keeps for older readers; the replies follow "Reply:"
_THREAD_NOTE = re.compile(r"^\[Threaded comment\].*?^Comment:\n", re.DOTALL | re.MULTILINE)


class CellComment(NamedTuple):
    """A comment on a cell: where (``ref``, "B3"), who wrote it ("" when the file does not say) and what."""

    ref: str
    author: str
    text: str


def workbook_comments(path: Path) -> dict[str, list[CellComment]]:
    """The comments of each sheet of a workbook, by sheet name, in the order the file keeps them (a reply after the
    comment it answers); {} for a workbook without any, or whose parts cannot be read (the cells are read alone)."""
    try:
        with zipfile.ZipFile(path) as package:
            return _read(package)
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError, OSError, ValueError, EOFError):
        return {}


def _read(package: zipfile.ZipFile) -> dict[str, list[CellComment]]:
    workbook = "xl/workbook.xml"
    rels = _rels(package, workbook)
    people = {}
    for kind, target in rels.values():
        if kind.endswith("/person"):
            root = _xml(package, target)
            people = {p.get("id", ""): p.get("displayName", "") for p in root.iter(f"{_THREADED}person")}
    out: dict[str, list[CellComment]] = {}
    for sheet in _xml(package, workbook).iter(f"{_MAIN}sheet"):
        kind, part = rels.get(sheet.get(_R_ID, ""), ("", ""))
        if not kind.endswith("/worksheet"):
            continue
        parts = _rels(package, part).values()
        threads = [c for kind, target in parts if kind.endswith("/threadedComment")
                   for c in _threads(_xml(package, target), people)]
        notes = [c for kind, target in parts if kind.endswith("/comments")
                 for c in _notes(_xml(package, target), {c.ref for c in threads})]
        if notes or threads:
            out[sheet.get("name", "")] = notes + threads
    return out


def _threads(root: ElementTree.Element, people: dict[str, str]) -> list[CellComment]:
    return [CellComment(c.get("ref", ""), people.get(c.get("personId", ""), ""), _text(c.find(f"{_THREADED}text")))
            for c in root.iter(f"{_THREADED}threadedComment")]


def _notes(root: ElementTree.Element, threaded: set[str]) -> list[CellComment]:
    """A comments part's notes; the note Excel keeps for a thread is skipped where the thread was read (``threaded``:
    its cells), and read as the thread's text and replies where it was not."""
    authors = [_text(a) for a in root.iter(f"{_MAIN}author")]
    out = []
    for note in root.iter(f"{_MAIN}comment"):
        ref, text = note.get("ref", ""), _text(note.find(f"{_MAIN}text"))
        index = int(note.get("authorId") or 0)
        author = authors[index] if 0 <= index < len(authors) else ""
        if author.startswith("tc="):  # the note of a thread
            if ref in threaded:
                continue
            out += [CellComment(ref, "", part) for part in _THREAD_NOTE.sub("", text).split("\nReply:\n")]
            continue
        if author and text.startswith(f"{author}:"):  # Excel starts a new note with its author's name
            text = text[len(author) + 1 :]
        out.append(CellComment(ref, author, text))
    return [c for c in out if c.text.strip()]


def _text(element: ElementTree.Element | None) -> str:
    return "".join(element.itertext()) if element is not None else ""


def _rels(package: zipfile.ZipFile, part: str) -> dict[str, tuple[str, str]]:
    """The relationships of ``part``: id -> (type, the target part's name in the package)."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", f"{name}.rels")
    if rels not in package.namelist():
        return {}
    out = {}
    for rel in _xml(package, rels).iter(f"{_RELS}Relationship"):
        target = rel.get("Target", "")
        if rel.get("TargetMode") == "External" or not target:
            continue
        name = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        out[rel.get("Id", "")] = (rel.get("Type", ""), name)
    return out


def _xml(package: zipfile.ZipFile, name: str) -> ElementTree.Element:
    if package.getinfo(name).file_size > MAX_PART:
        raise ValueError(f"{name} is too large")
    return ElementTree.fromstring(package.read(name))

"""Evernote's export (``.enex``: a notebook, or notes chosen, exported by Evernote for Mac, Windows or the web; also
what Apple Notes exporters and Joplin write): an XML file of notes, each with its title, dates, tags, source and
content in ENML (Evernote's XHTML), and its attached files base64-encoded inside it.

The file is one document titled by its name (the notebook), a note a section headed by its title and the day it was
made ("Pump station 4 (3 Nov 2025)"); its tags and the page a web clip came from open its text, then the content,
its headings kept and checkboxes as ``[ ]``/``[x]``; the documents attached to a note (a PDF, a Word file) are read
after it, as a mail's are. The XML is read as a stream, a note at a time (an export with years of scanned receipts
runs to gigabytes).
"""

from __future__ import annotations

import base64
import binascii
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from local_rag.corpus.progress import part_bar
from local_rag.corpus.sections import Document, Section, UnreadableFile, day_name
from local_rag.corpus.web import chapter_text

__all__ = ["read_enex"]

#: (attached files as (name, bytes), the note's heading) -> (their sections, notes on those not read)
Attachments = Callable[[list[tuple[str, bytes]], str], tuple[list[Section], list[str]]]

_TODO = re.compile(r"<en-todo\b([^>]*)/?>(?:\s*</en-todo>)?", re.IGNORECASE)


def read_enex(path: Path, attachments: Attachments, wanted: Callable[[str, int], bool]) -> Document:
    """The notes of an Evernote export, a section each, the documents attached to them after (those ``wanted`` by
    name and size are decoded; the rest, pictures and recordings, are named).

    Raises:
        UnreadableFile: not an Evernote export (no ``<en-export>``), damaged XML before any note, or no note with text.
    """
    with path.open("rb") as fh:
        head = fh.read(2048)
    if b"<en-export" not in head:
        raise UnreadableFile("not an Evernote export (no <en-export>)")
    document = Document(path.stem, [])
    notes = 0
    size_kb = path.stat().st_size // 1024
    bar = part_bar(size_kb, path.name, "KB", least=4096)  # over the bytes read: the notes are counted only at the end
    try:
        fh = path.open("rb")
        for _, element in ET.iterparse(fh, events=("end",)):
            if element.tag != "note":
                continue
            notes += 1
            sections, heading, files = _note(element, wanted)
            element.clear()  # a note's resources can be megabytes: let them go
            document.sections += sections
            if files:
                more, problems = attachments(files, heading)
                document.sections += more
                document.notes += [f"note {heading!r}: {p}" for p in problems]
            if bar is not None:
                bar.update(min(fh.tell() // 1024, size_kb) - bar.n)
    except ET.ParseError as exc:
        if not notes:
            raise UnreadableFile(f"damaged Evernote export ({exc})") from exc
        document.notes.append(f"damaged after note {notes} ({exc}): the notes before were read")
    finally:
        fh.close()
        if bar is not None:
            bar.close()
    if not document.sections:
        raise UnreadableFile("no note with text in the Evernote export")
    document.pages = notes  # what the build counts
    return document


def _note(note: ET.Element, wanted: Callable[[str, int], bool]) -> tuple[list[Section], str, list[tuple[str, bytes]]]:
    """(its sections, its heading, its attached files to read) of one ``<note>``."""
    title = " ".join((note.findtext("title") or "").split()) or "(untitled note)"
    made = _day(note.findtext("created") or "")
    heading = f"{title} ({made})" if made else title
    lines = []
    tags = [t.text.strip() for t in note.findall("tag") if t.text and t.text.strip()]
    if tags:
        lines.append("Tags: " + ", ".join(tags))
    source = (note.findtext("note-attributes/source-url") or "").strip()
    if source.startswith(("http://", "https://")):
        lines.append(f"Source: {source}")
    content = note.findtext("content") or ""
    text, headings = chapter_text(_TODO.sub(_checkbox, content))
    opening = "\n".join(lines) + ("\n\n" if lines and text else "")
    section = Section(opening + text, heading=heading, headings=[(o + len(opening), h) for o, h in headings])
    files = []
    for resource in note.findall("resource"):
        name = (resource.findtext("resource-attributes/file-name") or "").strip()
        data = resource.find("data")
        if not name or data is None or not data.text:
            continue
        size = len(data.text) * 3 // 4  # about the decoded size: decode only what is read
        if wanted(name, size):
            try:
                files.append((name, base64.b64decode(data.text)))
            except (binascii.Error, ValueError):
                continue
    return ([section] if section.text.strip() else []), heading, files


def _checkbox(match: re.Match[str]) -> str:
    return "[x] " if re.search(r'checked\s*=\s*"true"', match.group(1), re.IGNORECASE) else "[ ] "


def _day(stamp: str) -> str:
    """An ENEX time (``20251103T091200Z``) as a day ("3 Nov 2025"); "" when it is none.

    Example:
        >>> _day("20251103T091200Z"), _day("")
        ('3 Nov 2025', '')
    """
    try:
        made = datetime.strptime(stamp.strip(), "%Y%m%dT%H%M%SZ")
    except ValueError:
        return ""
    return day_name(made)

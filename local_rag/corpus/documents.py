"""A person's own documents: PDF, DOCX, PPTX, HTML, Markdown and plain text, read into `Section` lists.

Libraries (the ``docs`` extra; chosen by measurement, see docs/design.md): pypdf for PDF (one section per page),
python-docx for DOCX (headings from the ``Heading n`` / ``Title`` styles, tables row by row), python-pptx for PPTX (one
section per slide, its title as the heading) and trafilatura for HTML (main text only, boilerplate dropped, headings
kept as Markdown). Markdown and plain text need nothing. Text (HTML, Markdown, plain) is UTF-8, or else the encoding
charset-normalizer finds (`decode_text`: a legacy Windows-1252 or Shift-JIS file is read, and the build names the
encoding it read it in).

A file that cannot be read raises `UnreadableFile` with the reason (encrypted, corrupt, no text layer); the folder
reader lists it in the build report and goes on.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import format_datetime
from itertools import accumulate
from pathlib import Path
from typing import Any

from local_rag._optional import available, require
from local_rag.corpus import office97
from local_rag.corpus.frontmatter import split_front_matter
from local_rag.corpus.markup import asciidoc_heading, rst_headings
from local_rag.corpus.notes import library_notes
from local_rag.corpus.ocr import STAMP_CHARS, image_texts, ocr_missing, page_cache, page_texts, scans_under_stamps
from local_rag.corpus.rtf import rtf_text
from local_rag.corpus.tables import LockedWorkbook, legacy_workbook_sheets, row_lines, table_lines, workbook_sheets
from local_rag.corpus.transcripts import transcript_lines
from local_rag.errors import MissingDependencyError
from local_rag.text import plain_letters

DOC_SUFFIXES = (".txt", ".md", ".markdown", ".mdx", ".qmd", ".rmd", ".rst", ".adoc", ".ipynb", ".html", ".htm", ".pdf",
                ".docx", ".doc", ".rtf", ".odt", ".pptx", ".ppt", ".pps", ".odp", ".epub", ".eml", ".msg", ".mht", ".mhtml",
                ".vtt", ".srt", ".csv", ".tsv", ".xlsx", ".xls", ".ods",
                # macro-enabled documents, templates and slide shows: read as the document they hold
                ".docm", ".dotx", ".dotm", ".pptm", ".ppsx", ".ppsm", ".potx", ".potm", ".xlsm", ".xltx", ".xltm")
# pictures: read by OCR (the ``ocr`` extra) when an index asks for them (``--images``), or when one is given alone
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp")
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the compound-file header: an encrypted Office file, or a .doc/.xls/.ppt
# the stream that tells which Office 97-2003 format a compound file is, and the reader of that format
_OLE_FORMATS = {"WordDocument": ".doc", "PowerPoint Document": ".ppt", "Workbook": ".xls", "Book": ".xls"}  # Book: Excel 5/95
_LOCKED = "password-protected: open it and save it again without a password"
# a form field's name that a program gave it ("topmostSubform[0].Page1[0].f1_01[0]"): its value is shown alone
_MACHINE_NAME = re.compile(r"\[\d+\]|^[\w]+\.[\w.]+$|^(?:text|field|check ?box)\s*\d+$", re.I)
# formats that are ZIP packages (Office Open XML, OpenDocument, EPUB)
_PACKAGES = (".docx", ".docm", ".dotx", ".dotm", ".odt", ".pptx", ".pptm", ".ppsx", ".ppsm", ".potx", ".potm", ".odp",
             ".epub", ".xlsx", ".xlsm", ".xltx", ".xltm", ".ods")
# below this many characters of text per page, a PDF with pages has no usable text layer (a scan)
MIN_CHARS_PER_PAGE = 20
_MD_HEADING = re.compile(r"^(#{1,6}) (\S.*?)\s*#*\s*$")
# numbered headings of PDF text ("3 Results", "2.1. Setup"): short, capitalised, no full stop at the end
_PDF_HEADING = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3}\.?)\s+([A-Z][^\n]{1,70})$")
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


# the library each format needs (the ``docs`` extra); the others need nothing beyond local-rag itself
FORMAT_LIBRARIES = {
    "pypdf": (".pdf",),
    "docx": (".docx", ".docm", ".dotx", ".dotm"),
    "pptx": (".pptx", ".pptm", ".ppsx", ".ppsm", ".potx", ".potm"),
    "openpyxl": (".xlsx", ".xlsm", ".xltx", ".xltm"),
    "xlrd": (".xls",),
    "olefile": (".doc", ".ppt", ".pps", ".msg"),
    "trafilatura": (".html", ".htm", ".mht", ".mhtml"),
}


def unreadable_formats() -> dict[str, tuple[str, ...]]:
    """{missing library: the suffixes it reads} here: files of those are listed as unreadable ("needs the docs
    extra"), as `local-rag doctor` says; {} when every format can be read."""
    return {module: suffixes for module, suffixes in FORMAT_LIBRARIES.items() if not available(module)}


def read_document(path: Path) -> Document:
    """Read one file by its suffix. Raises `UnreadableFile` (with the reason) when it yields no text."""
    suffix = path.suffix.lower()
    reader = _READERS.get(suffix)
    if reader is None:
        raise UnreadableFile(f"unsupported file type {suffix!r}")
    if path.stat().st_size == 0:
        raise UnreadableFile("empty file (0 bytes)")
    if suffix in _PACKAGES:
        with path.open("rb") as fh:
            ole = fh.read(8) == OLE_MAGIC  # tested first: a Word 2007+ .doc holds a ZIP (its theme) that is_zipfile finds
        if ole or not zipfile.is_zipfile(path):  # python-docx says "Package not found at ..."
            reader = _misnamed(path, suffix, ole)
    try:
        with library_notes() as notes:
            document = reader(path)
    except UnreadableFile:
        raise
    except MissingDependencyError as exc:
        raise UnreadableFile(f"needs the docs extra: pip install 'local-rag[docs]' ({exc.args[0].split(' is needed')[0]} missing)") from exc
    except UnicodeDecodeError as exc:
        raise UnreadableFile(f"not UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except Exception as exc:  # noqa: BLE001 - every parser error of a user's file is reported, not raised
        raise UnreadableFile(f"cannot be parsed as {suffix[1:].upper()} ({type(exc).__name__}: {exc})") from exc
    document.sections = [s for s in map(_plain, document.sections) if s.text.strip()]
    if not document.sections:
        raise UnreadableFile("empty document (no text)")
    document.notes = [*document.notes, *notes]  # the reader's own (pages lost), then the parser's warnings
    document.title = printable_name(plain_letters(document.title))  # a title taken from a file name
    return document


def _misnamed(path: Path, suffix: str, ole: bool) -> Callable[[Path], Document]:
    """The reader of an Office file that is no ZIP package under a ``.docx``/``.xlsx``/``.pptx``... name: an old binary
    Word, Excel or PowerPoint file renamed (read as what it is), else an `UnreadableFile` that says why (``ole``: it
    begins as a compound file)."""
    if not ole:
        raise UnreadableFile(f"corrupt {suffix[1:].upper()}: not a ZIP package (cut short, or another format under "
                             f"a {suffix} name)")
    try:
        streams = office97.ole_streams(path)
    except MissingDependencyError:
        streams = set()
    except Exception as exc:  # noqa: BLE001 - a damaged compound file is named below
        raise UnreadableFile(f"corrupt {suffix[1:].upper()}: a damaged Office compound file ({exc})") from exc
    if "EncryptedPackage" in streams:  # an Office 2007+ file saved with a password is a compound file
        raise UnreadableFile(_LOCKED)
    if not streams:  # no olefile to tell
        raise UnreadableFile("password-protected, or the old binary format (.doc/.xls/.ppt) under a new name: open "
                             f"it and save it again as {suffix} without a password")
    found = next((_OLE_FORMATS[name] for name in streams if name in _OLE_FORMATS), None)
    if found is None:
        raise UnreadableFile(f"not {suffix[1:].upper()}: an Office compound file of another kind")
    return _READERS[found]


def _plain(section: Section) -> Section:
    """`text.plain_letters` of a section, its heading offsets moved with the characters dropped or spelt out."""
    if section.text == plain_letters(section.text):
        return section
    cuts = [0, *(off for off, _ in section.headings), len(section.text)]
    parts = [plain_letters(section.text[a:b]) for a, b in zip(cuts, cuts[1:], strict=False)]
    starts = list(accumulate(len(p) for p in parts))[:len(section.headings)]
    headings = [(start, plain_letters(h)) for start, (_, h) in zip(starts, section.headings, strict=True)]
    return Section("".join(parts), plain_letters(section.heading), section.page, headings)


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


def _markdown_heading(line: str) -> str | None:
    match = _MD_HEADING.match(line)
    return match.group(2).strip("*_ ").rstrip("¶").strip() if match else None


def _pdf_heading(line: str) -> str | None:
    match = _PDF_HEADING.match(line)
    if not match or line.endswith((".", ",", ";", ":")) or len(match.group(2).split()) > 10:
        return None
    return line


_MDX_STATEMENT = re.compile(r"^(?:import|export)\s.*$\n?", re.MULTILINE)
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.DOTALL)
_MDX_ADMONITION = re.compile(r"^:::(\w+)?(?:[ \t]+(.*))?$", re.MULTILINE)
# a JSX component's tag (a capitalised name: HTML's own lowercase tags are left to Markdown), or an inline code span
_MDX_TAG = re.compile(r"(?P<code>`[^`\n]+`)|</?[A-Z][\w.]*(?P<attributes>(?:\s+[^<>]*?)?)\s*/?>")
_MDX_LABEL = re.compile(r"""\b(label|title)=["']([^"']*)["']""")


def _markdown(path: Path) -> Document:
    """Markdown, and the Markdown dialects of documentation and notebooks: MDX (Docusaurus: its ``import``/``export``
    lines left out), Quarto ``.qmd`` and R Markdown ``.Rmd`` (their code chunks are fenced code)."""
    text, encoding = decode_text(path.read_bytes())
    title, text = split_front_matter(text.strip())  # a note's or page's YAML/TOML block: its title, not its text
    if path.suffix.lower() == ".mdx":
        text = _outside_fences(text, _mdx_prose).strip()
    document = _markdown_document(text, path.stem, title)
    document.encoding = encoding
    return document


def _mdx_prose(text: str) -> str:
    """MDX outside code fences as the page reads: ``import``/``export`` lines and ``{/* comments */}`` left out; JSX
    components' tags dropped and their text kept (a ``<TabItem label="Ubuntu">``'s label a line of its own, as its tab
    shows it); Docusaurus admonitions (``:::note Title`` ... ``:::``) reduced to their title; inline code untouched.

    Example:
        >>> _mdx_prose('<Tabs>\\n<TabItem value="apt" label="Ubuntu">\\n\\nRun `<Setup />` then:\\n</TabItem>\\n</Tabs>')
        '\\nUbuntu\\n\\nRun `<Setup />` then:\\n\\n'
        >>> _mdx_prose(":::warning Back up first\\nIt deletes data.\\n:::\\n{/* draft */}")
        'Back up first\\nIt deletes data.\\n\\n'
    """
    text = _MDX_COMMENT.sub("", _MDX_STATEMENT.sub("", text))
    text = _MDX_ADMONITION.sub(lambda m: (m.group(2) or "").strip(), text)

    def tag(match: re.Match[str]) -> str:
        if match.group("code"):
            return match.group("code")
        named = _MDX_LABEL.search(match.group("attributes") or "")
        return named.group(2) if named and not match.group(0).startswith("</") else ""

    return re.sub(r"\n{3,}", "\n\n", _MDX_TAG.sub(tag, text))  # a tag's own line gone, not a run of blank lines


def _outside_fences(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` applied to its parts outside Markdown code fences (```` ``` ```` or ``~~~``)."""
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[^\n]*$)", text, flags=re.MULTILINE | re.DOTALL)
    return "".join(part if i % 2 else change(part) for i, part in enumerate(parts))


def _markdown_document(text: str, fallback_title: str, title: str = "") -> Document:
    headings = split_headings(text, _markdown_heading)
    if not title:
        title = next((h for off, h in headings if text[off:].startswith("# ")), "") or fallback_title
    return Document(title, [Section(text, headings=headings)])


def _rst(path: Path) -> Document:
    """A reStructuredText file (Sphinx): its section titles are headings, the first its title."""
    text, encoding = decode_text(path.read_bytes())
    text = text.strip()
    headings = rst_headings(text)
    return Document(headings[0][1] if headings else path.stem, [Section(text, headings=headings)], encoding=encoding)


def _asciidoc(path: Path) -> Document:
    """An AsciiDoc file (Antora, Asciidoctor): ``= Title`` is its title, ``==`` lines its headings."""
    text, encoding = decode_text(path.read_bytes())
    text = text.strip()
    headings = split_headings(text, asciidoc_heading)
    title = next((h for off, h in headings if text[off:].startswith("= ")), "") or path.stem
    return Document(title, [Section(text, headings=headings)], encoding=encoding)


def _notebook(path: Path) -> Document:
    """A Jupyter notebook: its Markdown cells as Markdown (headings, the first ``#`` its title), its code cells as
    fenced code in the kernel's language, outputs left out (images, tables of numbers, tracebacks)."""
    data = json.loads(path.read_bytes())
    if isinstance(data, dict) and isinstance(data.get("worksheets"), list) and data["worksheets"]:  # nbformat 3
        data = {**data, "cells": data["worksheets"][0].get("cells")}
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise UnreadableFile("not a Jupyter notebook (no cells)")
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    language = str((meta.get("language_info") or {}).get("name") or (meta.get("kernelspec") or {}).get("language") or "")
    parts = []
    for cell in (c for c in cells if isinstance(c, dict)):
        source = cell.get("source", cell.get("input", ""))
        text = ("".join(source) if isinstance(source, list) else str(source)).strip()
        if text:
            parts.append(f"```{language}\n{text}\n```" if cell.get("cell_type") == "code" else text)
    return _markdown_document("\n\n".join(parts), path.stem)


def _plain_text(path: Path) -> Document:
    text, encoding = decode_text(path.read_bytes())
    text = text.strip()
    title = path.stem if meaningful_name(path.stem) else first_line_title(text, path.stem)
    return Document(title, [Section(text)], encoding=encoding)


def _captions(path: Path) -> Document:
    """A meeting's or a video's captions (``.vtt``, ``.srt``): paragraphs by speaker, each opening with the time it
    begins (`local_rag.corpus.transcripts`)."""
    text, encoding = decode_text(path.read_bytes())
    if path.suffix.lower() == ".vtt" and not text.lstrip("\ufeff \n").startswith("WEBVTT"):
        raise UnreadableFile("not WebVTT captions (a .vtt file begins with WEBVTT)")
    lines = transcript_lines(text)
    if not lines:
        raise UnreadableFile("no captions (no cue timing such as 00:00:01,000 --> 00:00:04,000)")
    return Document(path.stem if meaningful_name(path.stem) else "Transcript", [Section("\n\n".join(lines))],
                    encoding=encoding)


def _web_archive(path: Path) -> Document:
    """A web page saved as one file (``.mht``/``.mhtml``: a browser's "Save as MHTML", Word's "Single File Web Page"):
    its HTML part read as an ``.html`` file is (`html_text`); its pictures and styles left out."""
    from email import policy
    from email.parser import BytesParser

    archive = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
    page = next((part for part in archive.walk() if part.get_content_type() == "text/html"), None)
    if page is None:
        raise UnreadableFile("not a web archive (no HTML part)")
    raw = page.get_payload(decode=True)  # Chrome names no charset: the page's bytes are decoded as a .html file's
    if not isinstance(raw, bytes):
        raise UnreadableFile("not a web archive (its HTML part holds no text)")
    charset = page.get_content_charset()
    try:
        html = raw.decode(charset) if charset else decode_text(raw)[0]
    except (LookupError, UnicodeDecodeError):
        html = decode_text(raw)[0]
    title, text, headings = html_text(html)
    subject = " ".join(str(archive.get("subject") or "").split())
    return Document(title or subject or (headings[0][1] if headings else path.stem),
                    [Section(text, headings=headings)])


def _table(path: Path) -> Document:
    """A ``.csv`` or ``.tsv``: one line per row, its values named by their columns (`local_rag.corpus.tables`)."""
    text, encoding = decode_text(path.read_bytes())
    lines = table_lines(text, path.suffix.lower())
    title = path.stem if meaningful_name(path.stem) else first_line_title("\n".join(lines), path.stem)
    return Document(title, [Section("\n".join(lines))], encoding=encoding)


def _xls(path: Path) -> Document:
    """An Excel 97-2003 workbook, whatever its suffix (an ``.xls`` renamed ``.xlsx`` too)."""
    return _workbook(path, legacy=True)


def _workbook(path: Path, legacy: bool = False) -> Document:
    """An Excel workbook (``.xlsx``, or ``.xls`` of Excel 97-2003: ``legacy``): one section per visible sheet, headed
    by the sheet's name (`local_rag.corpus.tables`)."""
    try:
        sheets = legacy_workbook_sheets(path) if legacy else workbook_sheets(path)
    except LockedWorkbook as exc:
        raise UnreadableFile(_LOCKED) from exc
    sections = [Section("\n".join(lines), heading=name) for name, lines in sheets if lines]
    title = path.stem if meaningful_name(path.stem) else first_line_title(sections[0].text if sections else "", path.stem)
    return Document(title, sections, pages=max(1, len(sheets)))


def _html(path: Path) -> Document:
    """Main text by trafilatura (navigation, footers and scripts dropped). Its XML output is walked rather than its
    Markdown one, which loses text inside formatted code blocks (measured: half the words of zlib's example page)."""
    html, encoding = decode_text(path.read_bytes())
    title, text, headings = html_text(html)
    return Document(title or (headings[0][1] if headings else path.stem), [Section(text, headings=headings)],
                    encoding=encoding)


def html_text(html: str) -> tuple[str, str, list[tuple[int, str]]]:
    """An HTML page's ``<title>``, main text (paragraphs apart by a blank line) and headings (offset, text)."""
    trafilatura = require("trafilatura", "reading HTML files")
    from xml.etree import ElementTree

    title = ""
    match = re.search(r"<title[^>]*>(.*?)</title\s*>", html, re.IGNORECASE | re.DOTALL)
    if match:
        from html import unescape

        title = " ".join(unescape(match.group(1)).split())
    xml = trafilatura.extract(html, output_format="xml", include_tables=True, favor_recall=True, include_comments=False)
    lines: list[str] = []
    headings: list[tuple[int, str]] = []
    offset = 0
    if xml:
        main = ElementTree.fromstring(xml).find("main")
        for element in main if main is not None else []:
            if element.tag == "head":
                text = " ".join("".join(element.itertext()).split()).rstrip("¶").strip()
                if text:
                    headings.append((offset, text))
            elif element.tag == "code":
                text = "".join(element.itertext()).strip("\n")
            elif element.tag == "table":
                text = "\n".join(" | ".join(" ".join("".join(c.itertext()).split()) for c in row) for row in element.iter("row"))
            elif element.tag == "list":
                text = "\n".join("- " + " ".join("".join(i.itertext()).split()) for i in element.iter("item"))
            else:
                text = " ".join("".join(element.itertext()).split())
            for piece in (text, " ".join((element.tail or "").split())):  # the tail: text after the element
                if piece:
                    lines.append(piece)
                    offset += len(piece) + 2
    if not lines:  # trafilatura keeps no main text of a fragment (`<div>...` alone) or an XML feed under .html
        lines = visible_text(html)
    return title, "\n\n".join(lines), headings


_ODF_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_ODF_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_ODF_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_ODF_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
MAX_REPEAT = 1000  # a spreadsheet cell or row repeated more often than this is taken this often


def _odf(path: Path, kind: str) -> tuple[Any, str]:
    """An OpenDocument package's ``content.xml`` root and its metadata title ("" without one)."""
    from xml.etree import ElementTree

    with zipfile.ZipFile(path) as package:
        names = package.namelist()
        if "content.xml" not in names:
            raise UnreadableFile(f"not an OpenDocument {kind} (no content.xml)")
        root = ElementTree.fromstring(package.read("content.xml"))
        meta = ElementTree.fromstring(package.read("meta.xml")) if "meta.xml" in names else None
    title = next((" ".join(e.text.split()) for e in (meta.iter() if meta is not None else [])
                  if e.tag.endswith("}title") and e.text and e.text.strip()), "")
    return root, title


def _odf_lines(element: Any) -> tuple[list[str], list[str]]:
    """The Markdown lines of an OpenDocument element (headings with their levels, paragraphs, list items, table rows,
    frames' text boxes, in order) and its notes (footnotes, endnotes: ``[^1] ...``, their marks left in the text)."""
    lines: list[str] = []
    notes: list[str] = []

    def words(node: Any) -> str:
        parts = [node.text or ""]
        for child in node:
            if child.tag == f"{_ODF_TEXT}note":  # a footnote's body goes to the notes, its mark stays
                citation = child.find(f"{_ODF_TEXT}note-citation")
                mark = "".join(citation.itertext()) if citation is not None else str(len(notes) + 1)
                body = child.find(f"{_ODF_TEXT}note-body")
                notes.append(f"[^{mark}] " + " ".join(" ".join(words(p).split()) for p in (body if body is not None else [])))
                parts.append(f"[^{mark}]")
            elif child.tag in (f"{_ODF_TEXT}s", f"{_ODF_TEXT}tab", f"{_ODF_TEXT}line-break"):
                parts.append(" ")
            else:
                parts.append(words(child))
            parts.append(child.tail or "")
        return "".join(parts)

    def walk(node: Any) -> None:
        for child in node:
            if child.tag == f"{_ODF_TEXT}h":
                level = int(child.get(f"{_ODF_TEXT}outline-level") or 1)
                text = " ".join(words(child).split())
                if text:
                    lines.extend([f"{'#' * min(level, 6)} {text}", ""])
            elif child.tag == f"{_ODF_TEXT}p":
                text = " ".join(words(child).split())
                if text:
                    lines.extend([text, ""])
            elif child.tag == f"{_ODF_TABLE}table-row":
                cells = [" ".join(words(c).split()) for c in child if c.tag == f"{_ODF_TABLE}table-cell"]
                lines.append(" | ".join(dict.fromkeys(c for c in cells if c)))
            elif child.tag != f"{_ODF_TEXT}tracked-changes":  # recorded changes hold the deleted text: not read
                walk(child)  # lists, sections, tables, frames, text boxes

    walk(element)
    return lines, notes


def _odt(path: Path) -> Document:
    """An OpenDocument text (LibreOffice Writer, the format some public administrations require): its headings
    (``text:h``, the first its title unless the metadata has one), paragraphs, list items and table rows in order, as
    Markdown; notes (footnotes, endnotes) close it under "Notes"."""
    root, title = _odf(path, "text")
    body = root.find(f".//{_ODF_OFFICE}text")
    lines, notes = _odf_lines(body) if body is not None else ([], [])
    if notes:
        lines += ["", "## Notes", "", *notes]
    return _markdown_document("\n".join(lines).strip(), path.stem, title)


def _odp(path: Path) -> Document:
    """An OpenDocument presentation (LibreOffice Impress): one section a slide, as a PPTX: its frames' text in order,
    the speaker notes after it; a slide's first line is its heading."""
    root, title = _odf(path, "presentation")
    sections = []
    for number, page in enumerate(root.iter(f"{_ODF_DRAW}page"), start=1):
        lines, notes = _odf_lines(page)  # the speaker notes (presentation:notes) are inside the page
        text = "\n".join(line for line in [*lines, *notes] if line)
        heading = text.split("\n", 1)[0] if text else ""
        sections.append(Section(text, heading=heading, page=number))
        title = title or heading
    return Document(title or path.stem, sections, pages=len(sections))


def _ods(path: Path) -> Document:
    """An OpenDocument spreadsheet (LibreOffice Calc): one section per sheet under its name, rows as a ``.csv``'s
    (`local_rag.corpus.tables.row_lines`)."""
    root, title = _odf(path, "spreadsheet")
    sections = [Section("\n".join(lines), heading=str(sheet.get(f"{_ODF_TABLE}name") or ""))
                for sheet in root.iter(f"{_ODF_TABLE}table") if (lines := row_lines(_ods_rows(sheet)))]
    return Document(title or path.stem, sections, pages=max(1, len(sections)))


def _ods_rows(sheet: Any) -> list[list[str]]:
    """A sheet's rows of cell texts. Repeats are expanded within bounds: Calc writes a sheet's empty tail as one row
    repeated a million times and a row's empty end as one cell repeated a thousand times."""
    rows: list[list[str]] = []
    for row in sheet.iter(f"{_ODF_TABLE}table-row"):
        cells: list[str] = []
        for cell in row:
            if cell.tag not in (f"{_ODF_TABLE}table-cell", f"{_ODF_TABLE}covered-table-cell"):
                continue
            text = " ".join(" ".join("".join(p.itertext()).split()) for p in cell.iter(f"{_ODF_TEXT}p")).strip()
            cells += [text] * min(int(cell.get(f"{_ODF_TABLE}number-columns-repeated") or 1), MAX_REPEAT)
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            rows += [cells] * min(int(row.get(f"{_ODF_TABLE}number-rows-repeated") or 1), MAX_REPEAT)
    return rows


def _email(path: Path) -> Document:
    """An e-mail saved as ``.eml`` (Thunderbird, Outlook, Apple Mail): its subject is the title; its sender, date and
    recipients and the names of its attachments open the text, then its plain-text body (its HTML body's text when it
    has no plain one); the attachments themselves are left out (save them beside it to index them)."""
    from email import policy
    from email.parser import BytesParser

    message = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
    if not any(message.get(h) for h in ("from", "subject", "date", "to")):
        raise UnreadableFile("not an e-mail (no From, Subject, Date or To header)")
    head = [f"{name}: {' '.join(str(message.get(name)).split())}" for name in ("From", "Date", "To", "Cc")
            if message.get(name)]
    attached = [name for part in message.iter_attachments() if (name := part.get_filename())]
    if attached:  # their names (as an Outlook .msg's): "the mail with the invoice attached" finds it
        head.append(f"Attachments: {' '.join(', '.join(attached).split())}")
    part = message.get_body(preferencelist=("plain", "html"))
    body = ""
    if part is not None:
        body = part.get_content()
        if part.get_content_type() == "text/html":
            body = html_text(body)[1]
    text = "\n".join(head) + "\n\n" + line_feeds(body).strip()
    subject = " ".join(str(message.get("subject") or "").split())
    return Document(subject or path.stem, [Section(text.strip())])


def _outlook(path: Path) -> Document:
    """An Outlook ``.msg`` (dragged out of Outlook, or kept by a case or records system), read as an ``.eml`` is:
    subject as title; sender, date, recipients and its attachments' names open the text, then the body (its HTML
    body's text when it has no plain one) (`local_rag.corpus.office97.message`)."""
    with path.open("rb") as fh:
        start = fh.read(8)
    if start != OLE_MAGIC:  # some mail programs save a plain RFC 822 message under this name; Tcl its message catalogues
        if re.search(rb"^(from|subject|date|to):", path.read_bytes()[:4096], re.I | re.M):
            return _email(path)
        raise UnreadableFile("not an Outlook message (no Outlook compound file, no e-mail headers)")
    try:
        mail = office97.message(path)
    except office97.OldFormat as exc:
        raise UnreadableFile(str(exc)) from exc
    head = [f"{name}: {' '.join(value.split())}" for name, value in
            (("From", mail.sender), ("Date", format_datetime(mail.sent) if mail.sent else ""), ("To", mail.to),
             ("Cc", mail.cc), ("Attachments", ", ".join(mail.attachments))) if value]
    body = mail.body or (html_text(mail.html)[1] if mail.html else "")
    text = "\n".join(head) + "\n\n" + line_feeds(body).strip()
    return Document(" ".join(mail.subject.split()) or path.stem, [Section(text.strip())])


def _epub(path: Path) -> Document:
    """An EPUB book: its chapters in reading order (the package's spine), each read by `chapter_text`, one section
    each, so that a citation names the chapter's heading; the title from the package metadata. A book with DRM
    (``META-INF/encryption.xml``) cannot be read."""
    import posixpath
    from urllib.parse import unquote
    from xml.etree import ElementTree

    with zipfile.ZipFile(path) as book:
        names = set(book.namelist())
        if "META-INF/encryption.xml" in names:
            raise UnreadableFile("EPUB with DRM (encrypted chapters): export an unprotected copy to index it")
        if "META-INF/container.xml" not in names:
            raise UnreadableFile("not an EPUB (no META-INF/container.xml)")
        container = ElementTree.fromstring(book.read("META-INF/container.xml"))
        package = next((e.get("full-path") for e in container.iter() if e.tag.endswith("rootfile")), None)
        if not package or package not in names:
            raise UnreadableFile("not an EPUB (its package file is missing)")
        opf = ElementTree.fromstring(book.read(package))
        items = {e.get("id"): e for e in opf.iter() if e.tag.endswith("}item")}
        title = next((" ".join(e.text.split()) for e in opf.iter() if e.tag.endswith("}title") and e.text), "")
        sections = []
        for ref in (e.get("idref") for e in opf.iter() if e.tag.endswith("}itemref")):
            item = items.get(ref)
            if item is None or "html" not in (item.get("media-type") or "") or "nav" in (item.get("properties") or "").split():
                continue  # not a page, or the table of contents (EPUB 3's nav document): a list of the chapters' titles
            name = posixpath.normpath(posixpath.join(posixpath.dirname(package), unquote(item.get("href") or "")))
            if name not in names:
                continue
            text, headings = chapter_text(decode_text(book.read(name))[0])
            if text.strip():
                sections.append(Section(text, headings=headings))
    return Document(title or path.stem, sections, pages=len(sections))


def visible_text(html: str) -> list[str]:
    """The text of an HTML (or XML) page outside scripts and styles, a line per block, whitespace collapsed: the
    fallback when trafilatura finds no main text (before, such a file was "empty document (no text)").

    Example:
        >>> visible_text("<div>Tides <b>rise</b> twice a day.<script>x()</script></div><p>Moons.</p>")
        ['Tides rise twice a day.', 'Moons.']
    """
    return [text for text, _ in _blocks(html)]


def chapter_text(html: str) -> tuple[str, list[tuple[int, str]]]:
    """An e-book chapter's text (its ``<body>``: a block a paragraph) and its ``<h1>``-``<h6>`` headings (offset,
    text). Trafilatura, made to strip a web page's boilerplate, is not used: a chapter has none, and trafilatura
    merged a short one's heading and paragraphs into one line.

    Example:
        >>> chapter_text("<html><head><title>T</title></head><body><h1>Oil</h1><p>Every spring.</p></body></html>")
        ('Oil\\n\\nEvery spring.', [(0, 'Oil')])
    """
    lines: list[str] = []
    headings: list[tuple[int, str]] = []
    offset = 0
    for text, heading in _blocks(html, body_only=True):
        if heading:
            headings.append((offset, text))
        lines.append(text)
        offset += len(text) + 2
    return "\n\n".join(lines), headings


_HIDDEN_TAGS = frozenset({"script", "style", "noscript", "template"})
_INLINE_TAGS = frozenset({"a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "i", "kbd", "mark", "q",
                          "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr", "font"})
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def _blocks(html: str, body_only: bool = False) -> list[tuple[str, bool]]:
    """(text, is a heading) of each block of a page outside scripts and styles, whitespace collapsed; a line break
    of the page ends a block too, unless ``body_only`` (a chapter: its ``<body>`` alone, a paragraph one block)."""
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.blocks: list[tuple[str, bool]] = []
            self.parts: list[str] = []
            self.hidden = 0
            self.heading = False

        def flush(self) -> None:
            text = " ".join("".join(self.parts).split())
            if text:
                self.blocks.append((text, self.heading))
            self.parts = []

        def handle_starttag(self, tag: str, attrs: object) -> None:
            self.hidden += tag in _HIDDEN_TAGS or (body_only and tag == "head")
            if tag not in _INLINE_TAGS:
                self.flush()
                self.heading = tag in _HEADING_TAGS

        def handle_endtag(self, tag: str) -> None:
            self.hidden -= (tag in _HIDDEN_TAGS or (body_only and tag == "head")) and self.hidden > 0
            if tag not in _INLINE_TAGS:
                self.flush()
                self.heading = False

        def handle_data(self, data: str) -> None:
            if self.hidden:
                return
            if body_only:
                self.parts.append(data)
                return
            first, *rest = data.split("\n")  # a page's line breaks end lines too (`visible_text`, as before)
            self.parts.append(first)
            for piece in rest:
                self.flush()
                self.parts.append(piece)

    parser = Text()
    parser.feed(html)
    parser.close()
    parser.flush()
    return parser.blocks


def _dehyphenate(text: str) -> str:
    """Join words that PDF text (or slides imported from a PDF) broke at the line end ("ex-\\nploring" -> "exploring")."""
    return re.sub(r"(\w)-[\n\v](\w)", lambda m: m.group(1) + m.group(2) if m.group(2).islower() else m.group(0), text)


def _pdf(path: Path) -> Document:
    pypdf = require("pypdf", "reading PDF files")
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:
        reader = pypdf.PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile("encrypted PDF: it needs a password (save an unencrypted copy to index it)")
        pages, lost = _pdf_pages(reader)
    except FileNotDecryptedError as exc:
        raise UnreadableFile("encrypted PDF: it needs a password (save an unencrypted copy to index it)") from exc
    except (PdfReadError, ValueError, KeyError) as exc:
        raise UnreadableFile(f"corrupt PDF ({exc})") from exc
    except NotImplementedError as exc:  # an encryption algorithm that pypdf cannot read without cryptography
        raise UnreadableFile(f"encrypted PDF that cannot be opened ({exc})") from exc
    if not pages:
        raise UnreadableFile("PDF with no pages")
    if len(lost) == len(pages):
        raise UnreadableFile(f"corrupt PDF: no page could be read ({lost[0].split(': ', 1)[1]})")
    ocr_pages, unread_scans = _scanned_pages(path, reader, pages, lost)
    for number, page in enumerate(reader.pages):  # a filled-in form's answers: not in the text layer
        if filled := _form_values(page):
            pages[number] = f"{pages[number].rstrip()}\n{filled}".lstrip("\n")
    if not any(len(t.strip()) >= MIN_CHARS_PER_PAGE for t in pages):
        missing = ocr_missing()
        if missing:
            raise UnreadableFile(f"scanned PDF: {len(pages)} page(s) with no text layer: {missing}, or add a text "
                                 "layer first (ocrmypdf)")
        raise UnreadableFile(f"scanned PDF: OCR found no text on its {len(pages)} page(s)")
    meta_title = ""
    try:
        meta_title = str((reader.metadata or {}).get("/Title") or "").strip()
    except (PdfReadError, ValueError, KeyError):
        pass
    if placeholder_title(meta_title):
        meta_title = first_line_title(next((t for t in pages if t.strip()), ""), path.stem)
    sections = []
    heading = ""
    for number, text in enumerate(pages, start=1):
        headings = split_headings(text, _pdf_heading)
        sections.append(Section(text.strip(), heading=heading, page=number, headings=headings))
        if headings:
            heading = headings[-1][1]
    return Document(meta_title, sections, pages=len(pages), notes=lost, ocr_pages=ocr_pages, unread_scans=unread_scans)


def waits_for_ocr(reason: str) -> bool:
    """An unreadable file's reason (`read_document`) says it is a scan or a picture left unread for want of the
    ``ocr`` extra (in this wording or in that of indexes built before OCR: "... no text layer (run OCR ...)"), so that
    `index sync` reads it once the extra is there.

    Example:
        >>> waits_for_ocr("scanned PDF: 3 page(s) with no text layer (run OCR, e.g. ocrmypdf, first)")
        True
        >>> waits_for_ocr("a picture: install the ocr extra to read it: pip install 'local-rag[ocr]'")
        True
        >>> waits_for_ocr("scanned PDF: OCR found no text on its 3 page(s)"), waits_for_ocr("corrupt PDF (EOF)")
        (False, False)
    """
    return ((reason.startswith("scanned PDF:") and "no text layer" in reason)
            or reason.startswith("a picture: install the ocr extra"))


def _image(path: Path) -> Document:
    """A picture's text, read by OCR: one section, or one a page for a multi-page TIFF (cited as pages)."""
    missing = ocr_missing()
    if missing:
        raise UnreadableFile(f"a picture: {missing}")
    texts = image_texts(path, cache=page_cache(path))
    read = [n for n, t in texts.items() if len(t.strip()) >= MIN_CHARS_PER_PAGE]
    if not read:
        raise UnreadableFile("a picture with no text OCR could read (a photo, a drawing)")
    paged = len(texts) > 1
    sections = [Section(_dehyphenate(texts[n]).strip(), page=n if paged else 0) for n in read]
    title = first_line_title(sections[0].text, path.stem)
    return Document(title, sections, pages=len(texts), ocr_pages=read)


def _scanned_pages(path: Path, reader: Any, pages: list[str], notes: list[str]) -> tuple[list[int], list[int]]:
    """Read by OCR (`local_rag.corpus.ocr`) the pages with no text layer: every page of a scanned PDF, and in a PDF
    with text the pages that show an image but hold no text (a signed page scanned into a report), and the scanned
    pages whose only text is a stamp in a margin (a Bates number, a fax header: `ocr.scans_under_stamps`). ``pages`` gets
    their text; a page that cannot be rendered gets a line in ``notes``. Returns the pages read so and, without the
    ``ocr`` extra, the pages left unread."""
    scanned = [n for n, t in enumerate(pages, start=1) if len(t.strip()) < MIN_CHARS_PER_PAGE]
    if len(scanned) < len(pages):
        scanned = [n for n in scanned if _shows_image(reader.pages[n - 1])]
    stamped = [n for n, t in enumerate(pages, start=1)
               if MIN_CHARS_PER_PAGE <= len(t.strip()) < STAMP_CHARS and _shows_image(reader.pages[n - 1])]
    if not scanned and not stamped:
        return [], []
    if ocr_missing():
        return [], scanned
    scanned = sorted(scanned + scans_under_stamps(path, stamped)) if stamped else scanned
    read = []
    texts, lost = page_texts(path, scanned, cache=page_cache(path))
    for number, text in texts.items():
        if len(text.strip()) > len(pages[number - 1].strip()):
            pages[number - 1] = _dehyphenate(text)
            read.append(number)
    notes += [f"page {number} not read by OCR: {why}" for number, why in sorted(lost.items())]
    return read, []


def _form_values(page: Any) -> str:
    """The values filled into the form fields of a PDF page, a line each, named by the field's tooltip or name
    ("Policy number: PN-448812"; a box ticked: "Urgent: yes"): pypdf's text is the page's content, which holds the
    form's labels but not what was typed into it. "" for a page without filled fields, or whose fields cannot be
    read."""
    lines = []
    try:
        for annotation in page.get("/Annots") or []:
            widget = annotation.get_object()
            if widget.get("/Subtype") != "/Widget":
                continue
            field = widget if "/T" in widget or "/Parent" not in widget else widget["/Parent"].get_object()
            kind = widget.get("/FT", field.get("/FT"))
            value = field.get("/V", widget.get("/V"))
            if value is None or kind not in ("/Tx", "/Ch", "/Btn"):
                continue
            if isinstance(value, list):
                value = ", ".join(str(v) for v in value)
            text = " ".join(str(value).split())
            if kind == "/Btn":
                state = text.lstrip("/")
                if state in ("", "Off"):
                    continue
                text = "yes" if state in ("Yes", "On", "1", "True") else state
            label = " ".join(str(field.get("/TU") or field.get("/T") or "").split())
            if text:
                lines.append(f"{label}: {text}" if label and not _MACHINE_NAME.search(label) else text)
    except Exception:  # noqa: BLE001 - a damaged annotation costs the form's values, not the page
        return ""
    return "\n".join(dict.fromkeys(lines))


def _shows_image(page: Any) -> bool:
    """The page draws an image of its own (an image XObject among its resources)."""
    try:
        xobjects = (page.get("/Resources") or {}).get("/XObject") or {}
        return any(x.get_object().get("/Subtype") == "/Image" for x in xobjects.values())
    except Exception:  # noqa: BLE001 - a damaged resource dictionary: the page is taken as text, as before
        return False


def _pdf_pages(reader: object) -> tuple[list[str], list[str]]:
    """Each page's text ("" for a page that cannot be read) and a note per page lost: a damaged content stream on
    one page (an unsupported filter, a corrupt LZW stream) made the whole PDF unreadable before, its other pages
    lost with it, under "encrypted PDF that cannot be opened" for a mere filter pypdf lacks."""
    from pypdf.errors import FileNotDecryptedError

    pages: list[str] = []
    lost: list[str] = []
    for number, page in enumerate(reader.pages, start=1):  # type: ignore[attr-defined]
        try:
            pages.append(_dehyphenate(page.extract_text() or ""))
        except FileNotDecryptedError:
            raise
        except Exception as exc:  # noqa: BLE001 - any parser error of one page of a user's file: the rest is read
            pages.append("")
            lost.append(f"page {number} not read: {exc or type(exc).__name__}")
    return pages, lost


# the main parts of a macro-enabled document, a template or a slide show: their content, to python-docx and
# python-pptx, is a document's or a presentation's, but they refuse these types ("is not a Word file")
_WORD_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
_SLIDES_MAIN = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
_OTHER_MAINS = {
    "application/vnd.ms-word.document.macroEnabled.main+xml": _WORD_MAIN,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml": _WORD_MAIN,
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml": _WORD_MAIN,
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml": _SLIDES_MAIN,
    "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml": _SLIDES_MAIN,
    "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml": _SLIDES_MAIN,
    "application/vnd.ms-powerpoint.template.macroEnabled.main+xml": _SLIDES_MAIN,
}


def _office_package(path: Path) -> str | io.BytesIO:
    """``path`` for python-docx or python-pptx to open; a ``.docm``, ``.dotx``, ``.ppsx``, ``.potx``... is given as a
    copy in memory whose main part has the type of a document or a presentation (`_OTHER_MAINS`)."""
    with zipfile.ZipFile(path) as package:
        types = package.read("[Content_Types].xml")
        found = [kind for kind in _OTHER_MAINS if kind.encode() in types]
        if not found:
            return str(path)
        copy = io.BytesIO()
        with zipfile.ZipFile(copy, "w", zipfile.ZIP_DEFLATED) as retyped:
            for item in package.infolist():
                data = package.read(item.filename)
                if item.filename == "[Content_Types].xml":
                    for kind in found:
                        data = data.replace(kind.encode(), _OTHER_MAINS[kind].encode())
                retyped.writestr(item, data)
    copy.seek(0)
    return copy


def _docx(path: Path) -> Document:
    docx = require("docx", "reading DOCX files")
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(_office_package(path))
    lines: list[str] = []
    title = str(document.core_properties.title or "").strip()
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            text = _docx_paragraph_text(block._p)  # noqa: SLF001 - with tracked insertions and content controls
            boxes = _docx_text_boxes(block._p)  # noqa: SLF001 - python-docx reads no text box
            if not text and not boxes:
                continue
            if text:
                style = (block.style.name if block.style is not None else "") or ""
                if style == "Title":
                    title = title or text
                    lines.append(f"# {text}")
                elif style.startswith("Heading"):
                    level = style.removeprefix("Heading").strip()
                    lines.append(f"{'#' * (int(level) + 1 if level.isdigit() else 2)} {text}")
                else:
                    lines.append(text)
            lines.extend(boxes)
        elif isinstance(block, Table):
            for row in block.rows:
                cells = [" ".join(c.text.split()) for c in row.cells]
                lines.append(" | ".join(dict.fromkeys(cells)))  # merged cells repeat: keep each once
        lines.append("")
    notes = _docx_notes(document.part)
    if notes:
        lines += ["## Notes", "", *notes]
    text = "\n".join(lines).strip()
    return _markdown_document(text, path.stem, title)


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"


# a paragraph's runs as Word shows them: python-docx's `Paragraph.text` reads only ``w:r`` and ``w:hyperlink`` directly
# under ``w:p``, so a tracked insertion not yet accepted ("Pumps run twice a day" read as "Pumps run a day"), a moved
# passage's new place and a content control's (a form field's) text were lost; deletions (``w:delText``) stay out
_DOCX_RUNS = ("w:r | w:hyperlink | w:ins/w:r | w:ins/w:hyperlink | w:moveTo/w:r | w:sdt/w:sdtContent/w:r"
              " | w:sdt/w:sdtContent/w:hyperlink | w:smartTag/w:r | w:fldSimple/w:r")


def _docx_paragraph_text(paragraph: Any) -> str:
    """The text of a DOCX paragraph (`_DOCX_RUNS`), in document order."""
    return "".join(run.text for run in paragraph.xpath(_DOCX_RUNS)).strip()


def _docx_paragraph_texts(element: object) -> list[str]:
    """The text of each ``w:p`` under ``element`` (`_docx_paragraph_text`), blank ones left out."""
    return [text for p in element.iter(f"{_W}p") if (text := _docx_paragraph_text(p))]  # type: ignore[attr-defined]


def _docx_text_boxes(paragraph: object) -> list[str]:
    """The text of the text boxes anchored in a paragraph (a flyer's, a form's, a newsletter's columns), which
    python-docx does not read: each box once (Word writes it twice, as the drawing and as its ``mc:Fallback``)."""
    out: list[str] = []
    for box in paragraph.iter(f"{_W}txbxContent"):  # type: ignore[attr-defined]
        ancestors = {a.tag for a in box.iterancestors()}
        if _MC_FALLBACK in ancestors or f"{_W}txbxContent" in ancestors:
            continue
        out += _docx_paragraph_texts(box)
    return out


def _docx_notes(part: object) -> list[str]:
    """The footnotes and endnotes of a document (python-docx reads neither), one line each, numbered as in it."""
    from docx.oxml.parser import parse_xml  # python-docx's own lxml parser (entities not resolved)

    out: list[str] = []
    for rel in part.rels.values():  # type: ignore[attr-defined]
        if rel.is_external or not rel.reltype.endswith(("/footnotes", "/endnotes")):
            continue
        root = parse_xml(rel.target_part.blob)
        for note in root:
            if note.get(f"{_W}type") in ("separator", "continuationSeparator", "continuationNotice"):
                continue
            text = " ".join(_docx_paragraph_texts(note))
            if text:
                out.append(f"[^{note.get(f'{_W}id')}] {text}")
    return out


def _doc(path: Path) -> Document:
    """A Word 97-2003 ``.doc`` (`local_rag.corpus.office97`), or what web applications save under that name: RTF or
    HTML."""
    with path.open("rb") as fh:
        head = fh.read(512)
    if head.lstrip().startswith(b"{\\rtf"):
        return _rtf(path)
    if head[:8] != OLE_MAGIC:
        if b"<html" in head.lower() or b"<!doctype html" in head.lower():
            return _html(path)
        raise UnreadableFile("not a Word document (no Word 97-2003 compound file, RTF or HTML)")
    with _office97_errors(".docx"):
        title, text = office97.word_text(path)
    return _markdown_document(text, path.stem, "" if placeholder_title(title) else title)


@contextmanager
def _office97_errors(save_as: str) -> Iterator[None]:
    """`office97`'s errors as the reasons a build lists: a password, or a format older than 97 (``save_as``: the
    format to save it again as)."""
    try:
        yield
    except office97.EncryptedFile as exc:
        raise UnreadableFile(_LOCKED) from exc
    except office97.OldFormat as exc:
        raise UnreadableFile(f"{exc}: open it and save it again as {save_as}") from exc


def _ppt(path: Path) -> Document:
    """A PowerPoint 97-2003 ``.ppt`` or ``.pps``, slide by slide as a PPTX: its text, then the speaker notes, the
    slide's title as the heading (`local_rag.corpus.office97`)."""
    with _office97_errors(".pptx"):
        title, slides = office97.slides(path)
    sections = [Section(_dehyphenate("\n".join([*slide.texts, *slide.notes])), heading=slide.title, page=number)
                for number, slide in enumerate(slides, start=1)]
    first = next((slide.title for slide in slides if slide.title), "")
    return Document(first if placeholder_title(title) else title, sections, pages=max(1, len(sections)))


def _rtf(path: Path) -> Document:
    """A Rich Text Format file (`local_rag.corpus.rtf`): its outline levels as headings."""
    try:
        title, text = rtf_text(path.read_bytes())
    except ValueError as exc:
        raise UnreadableFile(str(exc)) from exc
    return _markdown_document(text, path.stem, "" if placeholder_title(title) else title)


def _pptx(path: Path) -> Document:
    pptx = require("pptx", "reading PPTX files")
    presentation = pptx.Presentation(_office_package(path))
    sections = []
    title = str(presentation.core_properties.title or "").strip()
    for number, slide in enumerate(presentation.slides, start=1):
        heading = ""
        if slide.shapes.title is not None and slide.shapes.title.has_text_frame:
            heading = " ".join(slide.shapes.title.text_frame.text.split())
        parts = _slide_texts(slide.shapes)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            parts.append(slide.notes_slide.notes_text_frame.text.strip())
        sections.append(Section(_dehyphenate("\n".join(p for p in parts if p)), heading=heading, page=number))
        title = title or heading
    return Document(title or path.stem, sections, pages=len(sections))


def _slide_texts(shapes: Iterable[Any]) -> list[str]:
    """The text of a slide's shapes in order: text frames, tables row by row, and the shapes inside groups, nested
    groups included (before, a group's text, as in most diagrams, was never read)."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    parts: list[str] = []
    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            parts += _slide_texts(shape.shapes)
        elif shape.has_text_frame:
            parts.append(shape.text_frame.text.strip())
        elif getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                parts.append(" | ".join(" ".join(c.text.split()) for c in row.cells))
    return parts


_READERS: dict[str, Callable[[Path], Document]] = {
    **dict.fromkeys(IMAGE_SUFFIXES, _image),
    ".txt": _plain_text,
    ".md": _markdown,
    ".markdown": _markdown,
    ".mdx": _markdown,
    ".qmd": _markdown,
    ".rmd": _markdown,
    ".rst": _rst,
    ".adoc": _asciidoc,
    ".ipynb": _notebook,
    ".epub": _epub,
    ".odt": _odt,
    ".odp": _odp,
    ".eml": _email,
    ".msg": _outlook,
    ".mht": _web_archive,
    ".mhtml": _web_archive,
    ".vtt": _captions,
    ".srt": _captions,
    ".html": _html,
    ".htm": _html,
    ".pdf": _pdf,
    **dict.fromkeys((".docx", ".docm", ".dotx", ".dotm"), _docx),
    ".doc": _doc,
    ".rtf": _rtf,
    **dict.fromkeys((".pptx", ".pptm", ".ppsx", ".ppsm", ".potx", ".potm"), _pptx),
    ".ppt": _ppt,
    ".pps": _ppt,
    ".csv": _table,
    ".tsv": _table,
    **dict.fromkeys((".xlsx", ".xlsm", ".xltx", ".xltm"), _workbook),
    ".xls": _xls,
    ".ods": _ods,
}

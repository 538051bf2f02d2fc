"""A person's own documents read into `Section` lists, by suffix (`read_document`): the readers of each kind live in
`pdf` (PDF, and pictures by OCR), `office` (Word, PowerPoint, Excel, OpenDocument), `web` (HTML, MHTML, EPUB,
e-mail) and here (Markdown and its dialects, reStructuredText, AsciiDoc, notebooks, plain text, captions, CSV, Word
97-2003 and RTF); the records they fill and what they share are in `sections`.

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

import json
import re
import tempfile
import zipfile
from collections.abc import Callable
from contextvars import ContextVar
from itertools import accumulate
from pathlib import Path

from local_rag._optional import available
from local_rag.corpus import chats, office97
from local_rag.corpus.bibtex import read_bibtex
from local_rag.corpus.calendars import read_calendar, read_contacts
from local_rag.corpus.code import CODE_KINDS, code_kind, read_code
from local_rag.corpus.enex import read_enex
from local_rag.corpus.frontmatter import split_front_matter
from local_rag.corpus.git_log import GIT_KIND, read_git_log
from local_rag.corpus.google_chat import GOOGLE_CHAT_KIND, is_google_chat, read_google_chat
from local_rag.corpus.kindle import is_clippings, read_clippings
from local_rag.corpus.latex import read_latex
from local_rag.corpus.markup import asciidoc_heading, rst_headings
from local_rag.corpus.mattermost import MATTERMOST_KIND, is_mattermost, read_mattermost
from local_rag.corpus.mbox import mail_store_suffix, read_mbox
from local_rag.corpus.notes import library_notes
from local_rag.corpus.office import (
    office97_errors,
    read_docx,
    read_odp,
    read_ods,
    read_odt,
    read_ppt,
    read_pptx,
    read_workbook,
    read_xls,
)
from local_rag.corpus.org import org_markdown
from local_rag.corpus.pdf import read_image, read_pdf, waits_for_ocr
from local_rag.corpus.pst import read_pst
from local_rag.corpus.rtf import rtf_text
from local_rag.corpus.sections import (
    LOCKED,
    OLE_MAGIC,
    Document,
    Section,
    UnreadableFile,
    decode_text,
    first_line_title,
    is_compound,
    markdown_document,
    meaningful_name,
    placeholder_title,
    printable_name,
    split_headings,
)
from local_rag.corpus.tables import table_lines
from local_rag.corpus.transcripts import transcript_lines
from local_rag.corpus.web import (
    attached_files,
    email_files,
    read_email,
    read_epub,
    read_html,
    read_outlook,
    read_web_archive,
)
from local_rag.corpus.whatsapp import is_whatsapp, read_whatsapp
from local_rag.errors import MissingDependencyError
from local_rag.text import plain_letters

__all__ = ["CODE_KINDS", "DOC_SUFFIXES", "IMAGE_SUFFIXES", "OLE_MAGIC", "Document", "Section", "UnreadableFile", "decode_text",
           "document_suffix", "meaningful_name", "printable_name", "read_document", "unreadable_formats", "waits_for_ocr"]

DOC_SUFFIXES = (".txt", ".md", ".markdown", ".mdx", ".qmd", ".rmd", ".rst", ".adoc", ".org", ".tex", ".bib", ".ipynb", ".html",
                ".htm", ".pdf", ".docx", ".doc", ".rtf", ".odt", ".pptx", ".ppt", ".pps", ".odp", ".epub", ".eml", ".emlx",
                ".msg", ".mbox", ".pst", ".ost", ".ics", ".vcf", ".enex", ".mht", ".mhtml", ".vtt", ".srt", ".csv",
                ".tsv", ".xlsx", ".xls", ".ods",
                # macro-enabled documents, templates and slide shows: read as the document they hold
                ".docm", ".dotx", ".dotm", ".pptm", ".ppsx", ".ppsm", ".potx", ".potm", ".xlsm", ".xltx", ".xltm")


# pictures: read by OCR (the ``ocr`` extra) when an index asks for them (``--images``), or when one is given alone
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp")


# the stream that tells which Office 97-2003 format a compound file is, and the reader of that format
_OLE_FORMATS = {"WordDocument": ".doc", "PowerPoint Document": ".ppt", "Workbook": ".xls", "Book": ".xls"}  # Book: Excel 5/95


# Office Open XML documents, presentations and workbooks, with their macro-enabled, template and slide-show kinds
_WORD = (".docx", ".docm", ".dotx", ".dotm")
_SLIDES = (".pptx", ".pptm", ".ppsx", ".ppsm", ".potx", ".potm")
_WORKBOOKS = (".xlsx", ".xlsm", ".xltx", ".xltm")
# formats that are ZIP packages (Office Open XML, OpenDocument, EPUB)
_PACKAGES = (*_WORD, *_SLIDES, *_WORKBOOKS, ".odt", ".odp", ".ods", ".epub")


# the library each format needs (the ``docs`` extra); the others need nothing beyond local-rag itself
FORMAT_LIBRARIES = {
    "pypdf": (".pdf",),
    "docx": _WORD,
    "pptx": _SLIDES,
    "openpyxl": _WORKBOOKS,
    "xlrd": (".xls",),
    "olefile": (".doc", ".ppt", ".pps", ".msg"),
    "pypff": (".pst", ".ost"),
    "icalendar": (".ics", ".vcf"),
    "pylatexenc": (".tex", ".bib"),
    "pybtex": (".bib",),
    "trafilatura": (".html", ".htm", ".mht", ".mhtml"),
}


def unreadable_formats() -> dict[str, tuple[str, ...]]:
    """{missing library: the suffixes it reads} here: files of those are listed as unreadable ("needs the docs
    extra"), as `local-rag doctor` says; {} when every format can be read."""
    return {module: suffixes for module, suffixes in FORMAT_LIBRARIES.items() if not available(module)}


def document_suffix(path: Path) -> str:
    """The suffix that tells how ``path`` is read: its own, in lower case; for the files of a mail program's store,
    whose names say nothing (an Apple Mail export's ``mbox``, a Thunderbird folder, a Maildir message), the suffix
    of what they hold (`local_rag.corpus.mbox.mail_store_suffix`); for the ``.json`` files of a chat export, its kind
    (`local_rag.corpus.chats.CHAT_KINDS`); for a ``Makefile`` or a ``Dockerfile``, the kind of code it is
    (`local_rag.corpus.code.code_kind`).

    Example:
        >>> document_suffix(Path("Report.PDF")), document_suffix(Path("Inbox.mbox/mbox")), document_suffix(Path("mbox"))
        ('.pdf', '.mbox', '')
    """
    suffix = path.suffix.lower()
    if suffix in _READERS:
        return suffix
    if path.name == ".git":  # a repository's history (``--git-log``)
        return GIT_KIND
    if is_google_chat(path):
        return GOOGLE_CHAT_KIND
    if suffix == ".jsonl" and is_mattermost(path):
        return MATTERMOST_KIND
    return code_kind(path) or mail_store_suffix(path) or chats.chat_export_kind(path) or suffix


def read_document(path: Path) -> Document:
    """Read one file by its suffix. Raises `UnreadableFile` (with the reason) when it yields no text."""
    suffix = document_suffix(path)
    reader = _READERS.get(suffix)
    if reader is None:
        raise UnreadableFile(f"unsupported file type {suffix!r}")
    if path.stat().st_size == 0:
        raise UnreadableFile("empty file (0 bytes)")
    if suffix in _PACKAGES:
        ole = is_compound(path)  # tested first: a Word 2007+ .doc holds a ZIP (its theme) that is_zipfile finds
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


MAX_ATTACHMENT_BYTES = 50 * 2**20  # an attached file larger than this is named, not read
_attached: ContextVar[bool] = ContextVar("attached", default=False)  # reading a message's attachments now


def _with_attachments(read: Callable[[Path], Document], files: Callable[[Path, int], list[tuple[str, bytes]]]
                      ) -> Callable[[Path], Document]:
    """An e-mail reader that also reads the message's attached documents (`attachment_sections`) into sections after
    the message."""

    def reader(path: Path) -> Document:
        document = read(path)
        if not _attached.get():  # a message attached to a message: its own attachments stay names
            sections, notes = attachment_sections(files(path, MAX_ATTACHMENT_BYTES))
            document.sections += sections
            document.notes += notes
        return document

    return reader


def _wanted_attachment(name: str, size: int) -> bool:
    """An attached file of this name and size is read (`attachment_sections`): a document of a format read, of at
    most `MAX_ATTACHMENT_BYTES`, not inside a message that is itself an attachment."""
    return Path(name).suffix.lower() in DOC_SUFFIXES and size <= MAX_ATTACHMENT_BYTES and not _attached.get()


def attachment_sections(files: list[tuple[str, bytes]], subject: str = "") -> tuple[list[Section], list[str]]:
    """The sections of a message's attached documents (a contract as a PDF, minutes as a .docx, a forwarded message),
    each headed "Attachment NAME" (", p. N" for a page: the message has no pages of its own, so the page is said, not
    linked; ``subject``: "SUBJECT: Attachment NAME", a message of a mailbox), and a note for each one that cannot be
    read. The attachments of an attached message, a picture, a file of a format not read or of more than
    `MAX_ATTACHMENT_BYTES` stay names in the message's "Attachments:" line (``files``: (name, bytes), as
    `local_rag.corpus.web.attached_files` gives them)."""
    attached = [(name, data) for name, data in files if _wanted_attachment(name, len(data))]
    sections: list[Section] = []
    notes: list[str] = []
    if not attached:
        return sections, notes
    token = _attached.set(True)
    try:
        with tempfile.TemporaryDirectory(prefix="local-rag-attachment-") as folder:
            for number, (name, data) in enumerate(attached):
                copy = Path(folder) / f"{number}{Path(name).suffix.lower()}"
                copy.write_bytes(data)
                try:
                    inner = read_document(copy)
                except (UnreadableFile, OSError) as exc:
                    notes.append(f"attachment {name} not read: {exc}")
                    continue
                notes += [f"attachment {name}: {note}" for note in inner.notes]  # read despite damage
                for section in inner.sections:
                    where = f", p. {section.page}" if section.page else ""
                    heading = (f"{subject}: " if subject else "") + f"Attachment {name}{where}" + (
                        f": {section.heading}" if section.heading else "")
                    sections.append(Section(section.text, heading=heading, headings=section.headings))
    finally:
        _attached.reset(token)
    return sections, notes


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
        raise UnreadableFile(LOCKED)
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
    document = markdown_document(text, path.stem, title)
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


def _org(path: Path) -> Document:
    """An Org-mode file (Emacs, org-roam, Orgzly): its outline's headings, ``#+TITLE:`` its title
    (`local_rag.corpus.org`)."""
    text, encoding = decode_text(path.read_bytes())
    title, text = org_markdown(text)
    document = markdown_document(text, path.stem, title)
    document.encoding = encoding
    return document


def _notebook(path: Path) -> Document:
    """A Jupyter notebook: its Markdown cells as Markdown (headings, the first ``#`` its title), its code cells as
    fenced code in the kernel's language, each followed by what it printed and the text of its result (session 59:
    "Output:", at most 20 lines: the accuracy a model reached is there); images, HTML, errors and tracebacks, warnings
    and an object's bare repr ("<Figure at 0x7f...>") left out."""
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
        shown = _cell_output(cell.get("outputs")) if cell.get("cell_type") == "code" else ""
        if shown:
            parts.append(f"Output:\n```\n{shown}\n```")
    return markdown_document("\n\n".join(parts), path.stem)


_REPR = re.compile(r"^<[\w.]+(?: object)? at 0x[0-9a-fA-F]+>$")  # an object's repr: no text of its own
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
OUTPUT_LINES, OUTPUT_CHARS = 20, 1500  # the most of a cell's output read: a result, not a dump of a data frame


def _cell_output(outputs: object) -> str:
    """The text a code cell printed (stdout) and its results' plain text, cut at `OUTPUT_LINES` lines; "" for
    none. A progress bar's redrawn line ("\r") counts once, as the terminal showed it last."""
    texts = []
    for output in outputs if isinstance(outputs, list) else []:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        if kind == "stream" and (output.get("name") or output.get("stream")) == "stdout":  # nbformat 3: "stream"
            value = output.get("text", "")
        elif kind in ("execute_result", "display_data", "pyout"):
            data = output["data"] if isinstance(output.get("data"), dict) else output  # nbformat 3: no "data"
            value = data.get("text/plain", data.get("text", ""))
        else:
            continue  # an error's traceback, stderr's warnings
        text = "".join(value) if isinstance(value, list) else str(value)
        text = _ANSI.sub("", text).replace("\r\n", "\n")
        text = "\n".join(line.rsplit("\r", 1)[-1].rstrip() for line in text.split("\n")).strip()
        if text and not _REPR.match(text):
            texts.append(text)
    lines = "\n".join(texts).splitlines()
    shown = "\n".join(lines[:OUTPUT_LINES])[:OUTPUT_CHARS]
    return shown + ("\n…" if len(lines) > OUTPUT_LINES or len(shown) == OUTPUT_CHARS else "")


def _plain_text(path: Path) -> Document:
    """A text file; a WhatsApp chat export (`local_rag.corpus.whatsapp`) read as the chat it is, a Kindle's
    ``My Clippings.txt`` as its books' highlights (`local_rag.corpus.kindle`)."""
    text, encoding = decode_text(path.read_bytes())
    read = read_whatsapp if is_whatsapp(text) else read_clippings if is_clippings(text) else None
    if read is not None:
        document = read(text, path.stem)
        document.encoding = encoding
        return document
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


def _table(path: Path) -> Document:
    """A ``.csv`` or ``.tsv``: one line per row, its values named by their columns (`local_rag.corpus.tables`)."""
    text, encoding = decode_text(path.read_bytes())
    lines = table_lines(text, path.suffix.lower())
    title = path.stem if meaningful_name(path.stem) else first_line_title("\n".join(lines), path.stem)
    return Document(title, [Section("\n".join(lines))], encoding=encoding)


def _doc(path: Path) -> Document:
    """A Word 97-2003 ``.doc`` (`local_rag.corpus.office97`), or what web applications save under that name: RTF or
    HTML."""
    with path.open("rb") as fh:
        head = fh.read(512)
    if head.lstrip().startswith(b"{\\rtf"):
        return _rtf(path)
    if head[:8] != OLE_MAGIC:
        if b"<html" in head.lower() or b"<!doctype html" in head.lower():
            return read_html(path)
        raise UnreadableFile("not a Word document (no Word 97-2003 compound file, RTF or HTML)")
    with office97_errors(".docx"):
        title, text = office97.word_text(path)
    return markdown_document(text, path.stem, "" if placeholder_title(title) else title)


def _rtf(path: Path) -> Document:
    """A Rich Text Format file (`local_rag.corpus.rtf`): its outline levels as headings."""
    try:
        title, text = rtf_text(path.read_bytes())
    except ValueError as exc:
        raise UnreadableFile(str(exc)) from exc
    return markdown_document(text, path.stem, "" if placeholder_title(title) else title)


_READERS: dict[str, Callable[[Path], Document]] = {
    **dict.fromkeys(IMAGE_SUFFIXES, read_image),
    ".txt": _plain_text,
    ".md": _markdown,
    ".markdown": _markdown,
    ".mdx": _markdown,
    ".qmd": _markdown,
    ".rmd": _markdown,
    ".rst": _rst,
    ".adoc": _asciidoc,
    ".org": _org,
    ".tex": read_latex,
    ".bib": read_bibtex,
    GIT_KIND: read_git_log,  # added by `local_rag.corpus.git_log.history_paths` only (``--git-log``)
    ".ipynb": _notebook,
    ".epub": read_epub,
    ".odt": read_odt,
    ".odp": read_odp,
    **dict.fromkeys((".eml", ".emlx"), _with_attachments(read_email, email_files)),
    ".msg": _with_attachments(read_outlook, lambda path, limit: (
        office97.message_files(path, limit) if is_compound(path) else email_files(path, limit))),
    ".mbox": lambda path: read_mbox(path, lambda message, subject: attachment_sections(
        attached_files(message, MAX_ATTACHMENT_BYTES), subject)),
    **dict.fromkeys((".pst", ".ost"), lambda path: read_pst(path, attachment_sections, _wanted_attachment)),
    ".ics": read_calendar,
    ".enex": lambda path: read_enex(path, attachment_sections, _wanted_attachment),
    ".vcf": read_contacts,
    ".mht": read_web_archive,
    ".mhtml": read_web_archive,
    ".vtt": _captions,
    ".srt": _captions,
    ".html": read_html,
    ".htm": read_html,
    ".pdf": read_pdf,
    **dict.fromkeys(_WORD, read_docx),
    ".doc": _doc,
    ".rtf": _rtf,
    **dict.fromkeys(_SLIDES, read_pptx),
    ".ppt": read_ppt,
    ".pps": read_ppt,
    ".csv": _table,
    ".tsv": _table,
    **dict.fromkeys(_WORKBOOKS, read_workbook),
    ".xls": read_xls,
    ".ods": read_ods,
    **chats.READERS,
    GOOGLE_CHAT_KIND: read_google_chat,
    MATTERMOST_KIND: read_mattermost,
    **dict.fromkeys(CODE_KINDS, read_code),  # read in a folder with ``--code`` (`local_rag.corpus.readers`)
}

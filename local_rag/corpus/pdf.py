"""PDF files (pypdf, the ``docs`` extra): one section per page, its headings found in the text; pages with no text
layer, or only a stamp over a scan, read by OCR (`local_rag.corpus.ocr`, the ``ocr`` extra); a filled-in form's values
after its page's text; pictures (``--images``) read by OCR.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.corpus.ocr import STAMP_CHARS, image_texts, ocr_missing, page_cache, page_texts, scans_under_stamps
from local_rag.corpus.pdf_marked import MARKUP, MarkedWords
from local_rag.corpus.sections import (
    Document,
    Section,
    UnreadableFile,
    comment_line,
    dehyphenate,
    first_line_title,
    placeholder_title,
    split_headings,
)

# a form field's name that a program gave it ("topmostSubform[0].Page1[0].f1_01[0]"): its value is shown alone
_MACHINE_NAME = re.compile(r"\[\d+\]|^[\w]+\.[\w.]+$|^(?:text|field|check ?box)\s*\d+$", re.I)


# below this many characters of text per page, a PDF with pages has no usable text layer (a scan)
MIN_CHARS_PER_PAGE = 20


# numbered headings of PDF text ("3 Results", "2.1. Setup"): short, capitalised, no full stop at the end
_PDF_HEADING = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3}\.?)\s+([A-Z][^\n]{1,70})$")


def _pdf_heading(line: str) -> str | None:
    match = _PDF_HEADING.match(line)
    if not match or line.endswith((".", ",", ";", ":")) or len(match.group(2).split()) > 10:
        return None
    return line


def read_pdf(path: Path) -> Document:
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
    with MarkedWords(path) as marked:
        for number, page in enumerate(reader.pages):  # a form's answers, text typed on, comments: not in the text layer
            if added := "\n".join(part for part in (_form_values(page), _comments(page, number, marked)) if part):
                pages[number] = f"{pages[number].rstrip()}\n{added}".lstrip("\n")
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


def read_image(path: Path) -> Document:
    """A picture's text, read by OCR: one section, or one a page for a multi-page TIFF (cited as pages)."""
    missing = ocr_missing()
    if missing:
        raise UnreadableFile(f"a picture: {missing}")
    texts = image_texts(path, cache=page_cache(path))
    read = [n for n, t in texts.items() if len(t.strip()) >= MIN_CHARS_PER_PAGE]
    if not read:
        raise UnreadableFile("a picture with no text OCR could read (a photo, a drawing)")
    paged = len(texts) > 1
    sections = [Section(dehyphenate(texts[n]).strip(), page=n if paged else 0) for n in read]
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
    if not scanned:  # short pages with a picture, none of them a scan: no file digest for an OCR cache
        return [], []
    read = []
    texts, lost = page_texts(path, scanned, cache=page_cache(path))
    for number, text in texts.items():
        if len(text.strip()) > len(pages[number - 1].strip()):
            pages[number - 1] = dehyphenate(text)
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


# annotations a person writes on a PDF (Acrobat, Preview, Okular, Foxit, Zotero's export): a sticky note, text typed
# onto the page, a comment on a highlight or other markup; links, form widgets and pop-up windows hold none of their own
_COMMENTED = {"/Text", "/FreeText", "/Highlight", "/Underline", "/Squiggly", "/StrikeOut", "/Ink", "/Square", "/Circle",
              "/Line", "/Polygon", "/PolyLine", "/Caret", "/Stamp", "/FileAttachment", "/Sound"}


def _comments(page: Any, number: int, marked: MarkedWords) -> str:
    """What was written on a PDF page in annotations, a line each, after its text: text typed onto the page (a
    typewriter or text box: "Approved, 14 Nov") as it reads, a sticky note's or a markup's comment as "Comment (Ana
    Silva): check the totals" (its author where the annotation names one; a reply too), a highlight's with the words
    it was made on where pypdfium2 can read them (`local_rag.corpus.pdf_marked`). pypdf's text is the page's content,
    which holds none of them. "" for a page without any, or whose annotations cannot be read."""
    lines = []
    try:
        for annotation in page.get("/Annots") or []:
            note = annotation.get_object()
            kind = note.get("/Subtype")
            text = " ".join(str(note.get("/Contents") or "").split())
            if kind not in _COMMENTED or not text:
                continue
            if kind == "/FreeText":
                lines.append(text)
                continue
            quads = note.get("/QuadPoints") if kind in MARKUP else None
            on = marked.words(number, [float(v) for v in quads]) if quads else ""
            lines.append(comment_line(note.get("/T"), text, on=on))
    except Exception:  # noqa: BLE001 - a damaged annotation costs the comments, not the page
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
            pages.append(dehyphenate(page.extract_text() or ""))
        except FileNotDecryptedError:
            raise
        except Exception as exc:  # noqa: BLE001 - any parser error of one page of a user's file: the rest is read
            pages.append("")
            lost.append(f"page {number} not read: {exc or type(exc).__name__}")
    return pages, lost

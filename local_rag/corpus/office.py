"""Office documents: Word (``.docx`` and its macro-enabled and template kinds; python-docx), PowerPoint (``.pptx``...;
python-pptx), Excel (``.xlsx``, ``.xls``: `local_rag.corpus.tables`), OpenDocument (``.odt``, ``.odp``, ``.ods``) and
PowerPoint 97-2003 (``.ppt``: `local_rag.corpus.office97`); the ``docs`` extra.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.corpus import office97
from local_rag.corpus.sections import (
    LOCKED,
    Document,
    Section,
    UnreadableFile,
    comment_line,
    dehyphenate,
    first_line_title,
    markdown_document,
    meaningful_name,
    placeholder_title,
)
from local_rag.corpus.slide_comments import comment_authors, slide_comments
from local_rag.corpus.tables import LockedWorkbook, legacy_workbook_sheets, row_lines, workbook_sheets


def read_xls(path: Path) -> Document:
    """An Excel 97-2003 workbook, whatever its suffix (an ``.xls`` renamed ``.xlsx`` too)."""
    return read_workbook(path, legacy=True)


def read_workbook(path: Path, legacy: bool = False) -> Document:
    """An Excel workbook (``.xlsx``, or ``.xls`` of Excel 97-2003: ``legacy``): one section per visible sheet, headed
    by the sheet's name (`local_rag.corpus.tables`)."""
    try:
        sheets = legacy_workbook_sheets(path) if legacy else workbook_sheets(path)
    except LockedWorkbook as exc:
        raise UnreadableFile(LOCKED) from exc
    sections = [Section("\n".join(lines), heading=name) for name, lines in sheets if lines]
    title = path.stem if meaningful_name(path.stem) else first_line_title(sections[0].text if sections else "", path.stem)
    return Document(title, sections, pages=max(1, len(sheets)))


_ODF_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"


_ODF_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"


_ODF_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"


_ODF_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_ODF_DC = "{http://purl.org/dc/elements/1.1/}"


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


def _odf_lines(element: Any) -> tuple[list[str], list[str], list[str]]:
    """The Markdown lines of an OpenDocument element (headings with their levels, paragraphs, list items, table rows,
    frames' text boxes, in order), its notes (footnotes, endnotes: ``[^1] ...``, their marks left in the text) and its
    comments (``office:annotation``: "Comment (Ana Silva): ...", taken out of the paragraph they were made in, where
    their author, date and text ran into its words)."""
    lines: list[str] = []
    notes: list[str] = []
    comments: list[str] = []

    def words(node: Any) -> str:
        parts = [node.text or ""]
        for child in node:
            if child.tag == f"{_ODF_TEXT}note":  # a footnote's body goes to the notes, its mark stays
                citation = child.find(f"{_ODF_TEXT}note-citation")
                mark = "".join(citation.itertext()) if citation is not None else str(len(notes) + 1)
                body = child.find(f"{_ODF_TEXT}note-body")
                notes.append(f"[^{mark}] " + " ".join(" ".join(words(p).split()) for p in (body if body is not None else [])))
                parts.append(f"[^{mark}]")
            elif child.tag == f"{_ODF_OFFICE}annotation":
                comments.extend(_odf_comment(child, words))
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
    return lines, notes, comments


def _odf_comment(annotation: Any, words: Any, on: str = "", at: str = "") -> list[str]:
    """An ``office:annotation`` as a line "Comment (AUTHOR): TEXT" ([] when it holds no text); ``on`` and ``at`` as
    `comment_line` takes them (a spreadsheet cell's value and place)."""
    author = " ".join("".join(c.itertext()) for c in annotation if c.tag == f"{_ODF_DC}creator")
    text = " ".join(words(p) for p in annotation if p.tag in (f"{_ODF_TEXT}p", f"{_ODF_TEXT}list"))
    return [comment_line(author, text, on=on, at=at)] if text.strip() else []


def read_odt(path: Path) -> Document:
    """An OpenDocument text (LibreOffice Writer, the format some public administrations require): its headings
    (``text:h``, the first its title unless the metadata has one), paragraphs, list items and table rows in order, as
    Markdown; notes (footnotes, endnotes) close it under "Notes", review comments under "Comments"."""
    root, title = _odf(path, "text")
    body = root.find(f".//{_ODF_OFFICE}text")
    lines, notes, comments = _odf_lines(body) if body is not None else ([], [], [])
    if notes:
        lines += ["", "## Notes", "", *notes]
    if comments:
        lines += ["", "## Comments", "", *comments]
    return markdown_document("\n".join(lines).strip(), path.stem, title)


def read_odp(path: Path) -> Document:
    """An OpenDocument presentation (LibreOffice Impress): one section a slide, as a PPTX: its frames' text in order,
    the speaker notes after it; a slide's first line is its heading."""
    root, title = _odf(path, "presentation")
    sections = []
    for number, page in enumerate(root.iter(f"{_ODF_DRAW}page"), start=1):
        lines, notes, comments = _odf_lines(page)  # the speaker notes (presentation:notes) are inside the page
        text = "\n".join(line for line in [*lines, *notes, *comments] if line)
        heading = text.split("\n", 1)[0] if text else ""
        sections.append(Section(text, heading=heading, page=number))
        title = title or heading
    return Document(title or path.stem, sections, pages=len(sections))


def read_ods(path: Path) -> Document:
    """An OpenDocument spreadsheet (LibreOffice Calc): one section per sheet under its name, rows as a ``.csv``'s
    (`local_rag.corpus.tables.row_lines`)."""
    root, title = _odf(path, "spreadsheet")
    sections = []
    for sheet in root.iter(f"{_ODF_TABLE}table"):
        rows, comments = _ods_rows(sheet)
        if lines := row_lines(rows) + comments:
            sections.append(Section("\n".join(lines), heading=str(sheet.get(f"{_ODF_TABLE}name") or "")))
    return Document(title or path.stem, sections, pages=max(1, len(sections)))


def _ods_rows(sheet: Any) -> tuple[list[list[str]], list[str]]:
    """A sheet's rows of cell texts, and a line for each comment on a cell ("Comment (Ana Silva) on B3 “400”: ...";
    a comment's words ran into its cell's value before). Repeats are expanded within bounds: Calc writes a sheet's
    empty tail as one row repeated a million times and a row's empty end as one cell repeated a thousand times."""
    rows: list[list[str]] = []
    comments: list[str] = []

    def words(paragraph: Any) -> str:
        return " ".join("".join(paragraph.itertext()).split())

    for row in sheet.iter(f"{_ODF_TABLE}table-row"):
        cells: list[str] = []
        for cell in row:
            if cell.tag not in (f"{_ODF_TABLE}table-cell", f"{_ODF_TABLE}covered-table-cell"):
                continue
            notes = [child for child in cell if child.tag == f"{_ODF_OFFICE}annotation"]
            inside = {id(p) for note in notes for p in note.iter(f"{_ODF_TEXT}p")}
            text = " ".join(words(p) for p in cell.iter(f"{_ODF_TEXT}p") if id(p) not in inside).strip()
            for note in notes:
                comments += _odf_comment(note, words, on=text, at=f"{column_letters(len(cells))}{len(rows) + 1}")
            cells += [text] * min(int(cell.get(f"{_ODF_TABLE}number-columns-repeated") or 1), MAX_REPEAT)
        while cells and not cells[-1]:
            cells.pop()
        rows += [cells] * min(int(row.get(f"{_ODF_TABLE}number-rows-repeated") or 1), MAX_REPEAT)
    while rows and not rows[-1]:
        rows.pop()
    return rows, comments


def column_letters(index: int) -> str:
    """A spreadsheet's name for column ``index`` (0: "A", 25: "Z", 26: "AA").

    Example:
        >>> column_letters(0), column_letters(27), column_letters(16383)
        ('A', 'AB', 'XFD')
    """
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


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


def read_docx(path: Path) -> Document:
    docx = require("docx", "reading DOCX files")
    from docx.enum.style import WD_STYLE_TYPE
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(_office_package(path))
    lines: list[str] = []
    title = str(document.core_properties.title or "").strip()
    # paragraph style names by id, once: python-docx's `Paragraph.style` looks the style up among all of them for each
    # paragraph (a 376-page specification with 400 styles: 38 of its 41 s went there; 3 s now)
    default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
    default_name = (default.name if default is not None else "") or ""
    names = {s.style_id: s.name or "" for s in document.styles if s.type == WD_STYLE_TYPE.PARAGRAPH}
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            text = _docx_paragraph_text(block._p)  # noqa: SLF001 - with tracked insertions and content controls
            boxes = _docx_text_boxes(block._p)  # noqa: SLF001 - python-docx reads no text box
            if not text and not boxes:
                continue
            if text:
                style = names.get(block._p.style, default_name)  # noqa: SLF001 - the paragraph's pStyle id
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
    comments = _docx_comments(document.part, document.element.body)
    if comments:
        lines += ["", "## Comments", "", *comments]
    text = "\n".join(lines).strip()
    return markdown_document(text, path.stem, title)


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


def _docx_comments(part: object, body: Any) -> list[str]:
    """A document's review comments (Word's Review > New Comment; python-docx's paragraphs hold none of them), a line
    each in the document's order: "Comment (Ana Silva) on “the north pump”: replaced on 4 Nov", the words it was
    made on quoted (cut at 80 characters) where the document marks them; a reply as a comment of its own."""
    from docx.oxml.parser import parse_xml  # python-docx's own lxml parser (entities not resolved)

    marked: dict[str, list[str]] = {}  # comment id -> the text of its range in the body
    open_ids: set[str] = set()
    for element in body.iter(f"{_W}commentRangeStart", f"{_W}commentRangeEnd", f"{_W}t"):
        if element.tag == f"{_W}t":
            for number in open_ids:
                marked[number].append(element.text or "")
            continue
        number = str(element.get(f"{_W}id"))
        if element.tag == f"{_W}commentRangeStart":
            open_ids.add(number)
            marked.setdefault(number, [])
        else:
            open_ids.discard(number)
    out: list[str] = []
    for rel in part.rels.values():  # type: ignore[attr-defined]
        if rel.is_external or not rel.reltype.endswith("/comments"):  # not commentsExtended, commentsIds
            continue
        for comment in parse_xml(rel.target_part.blob).iter(f"{_W}comment"):
            text = " ".join(_docx_paragraph_texts(comment))
            if text.strip():
                on = "".join(marked.get(str(comment.get(f"{_W}id")), []))
                out.append(comment_line(comment.get(f"{_W}author"), text, on))
    return out


@contextmanager
def office97_errors(save_as: str) -> Iterator[None]:
    """`office97`'s errors as the reasons a build lists: a password, or a format older than 97 (``save_as``: the
    format to save it again as)."""
    try:
        yield
    except office97.EncryptedFile as exc:
        raise UnreadableFile(LOCKED) from exc
    except office97.OldFormat as exc:
        raise UnreadableFile(f"{exc}: open it and save it again as {save_as}") from exc


def read_ppt(path: Path) -> Document:
    """A PowerPoint 97-2003 ``.ppt`` or ``.pps``, slide by slide as a PPTX: its text, then the speaker notes, the
    slide's title as the heading (`local_rag.corpus.office97`)."""
    with office97_errors(".pptx"):
        title, slides = office97.slides(path)
    sections = [Section(dehyphenate("\n".join([*slide.texts, *slide.notes])), heading=slide.title, page=number)
                for number, slide in enumerate(slides, start=1)]
    first = next((slide.title for slide in slides if slide.title), "")
    return Document(first if placeholder_title(title) else title, sections, pages=max(1, len(sections)))


def read_pptx(path: Path) -> Document:
    pptx = require("pptx", "reading PPTX files")
    presentation = pptx.Presentation(_office_package(path))
    sections = []
    title = str(presentation.core_properties.title or "").strip()
    authors = comment_authors(presentation.part)
    for number, slide in enumerate(presentation.slides, start=1):
        heading = ""
        if slide.shapes.title is not None and slide.shapes.title.has_text_frame:
            heading = " ".join(slide.shapes.title.text_frame.text.split())
        parts = _slide_texts(slide.shapes)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            parts.append(slide.notes_slide.notes_text_frame.text.strip())
        parts += slide_comments(slide.part, authors)
        sections.append(Section(dehyphenate("\n".join(p for p in parts if p)), heading=heading, page=number))
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

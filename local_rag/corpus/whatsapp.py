"""WhatsApp's "Export chat" (a ``.txt`` file: ``WhatsApp Chat with Ana.txt`` from Android, ``_chat.txt`` in the zip
an iPhone makes): a line a message, "03/11/2025, 14:02 - Ana Silva: ..." (Android) or "[03/11/2025, 14:02:11] Ana
Silva: ..." (iPhone), the date and time as the phone's language writes them, a long message on the lines after.

Before, such a file was read as plain text: one run of lines, an iPhone export titled by its first line (the
encryption notice). Now it is a chat (`is_whatsapp`): a section a day, a message a paragraph "Ana Silva, 14:02: ..."
(`local_rag.corpus.chats.message_line` and `by_day`, as a Telegram chat is written), the encryption notice, joins and "<Media omitted>"
left out, a file sent named; titled by the file's name, or by who speaks in it.
"""

from __future__ import annotations

import re
from datetime import date

from local_rag.corpus.chats import by_day, message_line
from local_rag.corpus.sections import Document, day_name, meaningful_name

__all__ = ["is_whatsapp", "read_whatsapp"]

_DATE_TIME = (r"(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{1,4}),?\s+(?P<time>\d{1,2}[:.]\d{2}(?:[:.]\d{2})?)"
              r"(?:[\s\u202f]?(?P<half>[AaPp]\.?\s?[Mm]\.?))?")
# an iPhone's "[03/11/2025, 14:02:11] Ana: ..." or an Android phone's "03/11/2025, 14:02 - Ana: ..."
_LINE = re.compile(rf"^\u200e?(?:\[{_DATE_TIME}\]\s|{_DATE_TIME.replace('?P<', '?P<a_')}\s-\s)(?P<rest>.*)$")
_SENDER = re.compile(r"^\u200e?(?P<who>[^:]{1,60}?):\s(?P<text>.*)$", re.DOTALL)
_LEFT_OUT = re.compile(r"end-to-end encrypt|^<Media omitted>$|^(?:image|video|audio|sticker|GIF|document) omitted$|"
                       r"^This message was deleted\.?$|^You deleted this message\.?$|^null$", re.IGNORECASE)
_LOG_LEVELS = {"TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "WARNING", "ERROR", "CRITICAL", "FATAL"}
_ATTACHED = re.compile(r"<attached: ([^>]+)>|^(\S[^\n]*?\.\w{2,4}) \(file attached\)", re.MULTILINE)


def is_whatsapp(text: str) -> bool:
    """The text is a WhatsApp export: most of its first ten lines open with a message's date and time.

    Example:
        >>> is_whatsapp("03/11/2025, 14:02 - Ana: Pump 4 is back.\\n03/11/2025, 14:05 - Ben: Good.")
        True
        >>> is_whatsapp("Minutes of 3/11/2025\\nPresent: Ana, Ben")
        False
        >>> is_whatsapp("[2025-11-03 14:02:11] INFO: started\\n[2025-11-03 14:02:12] ERROR: no disk")
        False
    """
    lines = [line for line in text.lstrip("\ufeff").splitlines()[:10] if line.strip()]
    said = [_SENDER.match(m.group("rest")) for m in map(_LINE.match, lines) if m is not None]
    senders = [s.group("who") for s in said if s is not None]
    return (len(lines) >= 2 and len(said) * 2 > len(lines) and len(senders) * 2 >= len(said)
            and not any(who.strip().upper() in _LOG_LEVELS for who in senders))  # a log: "[...] ERROR: ..."


def read_whatsapp(text: str, name: str) -> Document:
    """A WhatsApp export's messages, a section a day (headed by the day, "3 Nov 2025", where the export's dates
    tell day from month; else as written), a message a paragraph; titled ``name`` (the file's name) when it says
    something, else by who speaks ("WhatsApp chat: Ana Silva, Ben Okafor")."""
    messages: list[tuple[str, str, str]] = []  # (date as written, time "14:02", text with its sender)
    for line in text.lstrip("\ufeff").splitlines():
        found = _LINE.match(line)
        if found is None:
            if messages:  # a message's next line
                day, at, body = messages[-1]
                messages[-1] = (day, at, f"{body}\n{line}")
            continue
        part = "" if found.group("date") else "a_"
        messages.append((found.group(part + "date"), _clock(found.group(part + "time"), found.group(part + "half")),
                         found.group("rest")))
    order = _order([day for day, _, _ in messages])
    lines: list[tuple[str, str]] = []
    people: dict[str, None] = {}
    for day, at, body in messages:
        said = _SENDER.match(body)
        if said is None:
            continue  # "Ana added Ben", "You changed this group's icon": the phone's notes, not messages
        who, raw = said.group("who").strip(), said.group("text")
        if raw.startswith("\u200e") and "<attached:" not in raw:
            continue  # an iPhone marks the phone's own notes ("Ana created group") with a left-to-right mark
        words = raw.replace("\u200e", "").strip()
        if _LEFT_OUT.search(words):
            continue
        words = _ATTACHED.sub(lambda m: f"[shared: {m.group(1) or m.group(2)}]", words)
        lines.append((_heading(day, order), message_line(who, at, words)))
        people[who] = None
    names = list(people)
    title = name if meaningful_name(name) and name.strip("_").lower() != "chat" else (
        "WhatsApp chat: " + ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else ""))
    document = by_day(title, lines, "chat")  # a section a day, a message a paragraph; the build counts messages
    document.kind = "whatsapp"
    return document


def _clock(time: str, half: str | None) -> str:
    """"14:02" from "14:02", "14.02.11" or "2:02 PM".

    Example:
        >>> _clock("2:02", "PM"), _clock("12:30", "a. m."), _clock("14.02.11", None)
        ('14:02', '00:30', '14:02')
    """
    hours, minutes = (int(x) for x in re.split(r"[:.]", time)[:2])
    if half:
        pm = half.lower().startswith("p")
        hours = hours % 12 + (12 if pm else 0)
    return f"{hours:02d}:{minutes:02d}"


def _order(days: list[str]) -> str:
    """How the export writes a date: "ymd" (2025-11-03), "dmy" (a number over 12 first, or dots: German, Russian),
    "mdy" (a number over 12 second: the US), or "" where its dates cannot tell (all days up to the 12th)."""
    parts = [re.split(r"[./-]", day) for day in days[:5000]]
    if not parts:
        return ""
    if len(parts[0][0]) == 4:
        return "ymd"
    if "." in days[0] or any(int(p[0]) > 12 for p in parts):
        return "dmy"
    return "mdy" if any(int(p[1]) > 12 for p in parts) else ""


def _heading(day: str, order: str) -> str:
    """A day's heading: "3 Nov 2025" where the order is known, else as the export writes it.

    Example:
        >>> _heading("03.11.25", "dmy"), _heading("11/3/25", "mdy"), _heading("03/11/2025", "")
        ('3 Nov 2025', '3 Nov 2025', '03/11/2025')
    """
    if not order:
        return day
    numbers = dict(zip(order, (int(x) for x in re.split(r"[./-]", day)), strict=True))
    year = numbers["y"] + (2000 if numbers["y"] < 100 else 0)
    try:
        shown = date(year, numbers["m"], numbers["d"])
    except ValueError:
        return day
    return day_name(shown)

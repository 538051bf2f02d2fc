"""Google Chat in Google Takeout (``Takeout/Google Chat/Groups/<space or DM>/messages.json``, beside the space's
``group_info.json``): a space or a direct message a document titled by the space's name ("Pump team") or by its
members ("Chat with Ana Silva, Ben Okafor"), a section a day, a message a line "Ana Silva, 14:02: the text" (a reply
that quotes another message names whom it answers; attached files named; deleted messages left out).

Takeout writes a message's time as words in the account's language and clock, "Tuesday, 4 November 2025 at
14:02:11 UTC" or "Tuesday, November 4, 2025 at 2:02:11\\u202fPM UTC": English month names are read (both orders, a
12- or 24-hour clock); another language's day stays as written in the line, and the message keeps its place.

Example:
    >>> read_google_chat(Path("Takeout/Google Chat/Groups/Space AAAA/messages.json")).title  # doctest: +SKIP
    'Pump team'
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from local_rag.corpus.chats import by_day, message_line
from local_rag.corpus.sections import Document, UnreadableFile, day_name, json_object, read_json

__all__ = ["GOOGLE_CHAT_KIND", "GROUP_INFO", "google_chat_part", "google_chat_time", "is_google_chat",
           "read_google_chat"]

GOOGLE_CHAT_KIND = ".googlechat"  # how a space's messages.json is read (`local_rag.corpus.documents.document_suffix`)

GROUP_INFO = "group_info.json"  # the space's name and members, beside its messages.json: read with them
_WHEN = re.compile(r"^(?:[^\W\d]+,\s+)?(?P<day>.+?)\s+at\s+(?P<time>\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AaPp]\.?[Mm]\.?)?)"
                   r"(?:\s+\S+)?$")
_DAYS = ("%B %d, %Y", "%d %B %Y", "%b %d, %Y", "%d %b %Y")
_TIMES = ("%I:%M:%S %p", "%I:%M %p", "%H:%M:%S", "%H:%M")


def is_google_chat(path: Path) -> bool:
    """``path`` is a space's or a direct message's ``messages.json`` in a Google Chat export."""
    return path.name == "messages.json" and (path.parent / GROUP_INFO).is_file()


def google_chat_part(path: Path) -> bool:
    """``path`` is a space's ``group_info.json`` (read with its messages) or the export's ``Users/User N/user_info.json``
    (who exported it): not a document itself, nor an unread file to name."""
    if path.name == GROUP_INFO:
        return (path.parent / "messages.json").is_file()
    return path.name == "user_info.json" and path.parent.parent.name == "Users" and \
        path.parent.parent.parent.name == "Google Chat"


def google_chat_time(value: object) -> datetime | None:
    """When a message was sent, from Takeout's words; None when they are not English dates.

    Example:
        >>> google_chat_time("Tuesday, November 4, 2025 at 2:02:11\\u202fPM UTC")
        datetime.datetime(2025, 11, 4, 14, 2, 11)
        >>> google_chat_time("Tuesday, 4 November 2025 at 14:02:11 UTC"), google_chat_time("martes, 4 de noviembre")
        (datetime.datetime(2025, 11, 4, 14, 2, 11), None)
    """
    text = " ".join(str(value or "").replace("\u202f", " ").replace("\xa0", " ").split())
    match = _WHEN.match(text)
    if not match:
        return None
    clock = match.group("time").upper().replace(".", "")
    for day_format in _DAYS:
        for time_format in _TIMES:
            try:
                return datetime.strptime(f"{match.group('day')} {clock}", f"{day_format} {time_format}")
            except ValueError:
                continue
    return None


def read_google_chat(path: Path) -> Document:
    """A space's or a direct message's messages (see the module).

    Raises:
        UnreadableFile: not a Google Chat export's messages, or none with text.
    """
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise UnreadableFile("not a Google Chat export's messages (no messages)")
    try:
        info = json_object(read_json(path.parent / GROUP_INFO))
    except UnreadableFile:
        info = {}
    members = [str(json_object(m).get("name") or "") for m in info.get("members") or []]
    title = str(info.get("name") or "") or (f"Chat with {', '.join(m for m in members if m)}" if any(members)
                                              else f"Google Chat {path.parent.name}")

    def line(message: dict[str, Any]) -> tuple[str, str]:
        if message.get("deleted_date") or str(message.get("message_state") or "").upper() == "DELETED":
            return "", ""
        sent = google_chat_time(message.get("created_date"))
        text = str(message.get("text") or "").strip()
        files = [str(json_object(f).get("original_name") or json_object(f).get("export_name") or "")
                 for f in message.get("attached_files") or []]
        if any(files):
            text = f"{text} [shared: {'; '.join(f for f in files if f)}]".strip()
        quoted = json_object(message.get("quoted_message_metadata"))
        answered = str(json_object(quoted.get("creator")).get("name") or "")
        author = str(json_object(message.get("creator")).get("name") or "")
        when: datetime | str | None = sent if sent is not None else (str(message.get("created_date") or "") or None)
        return (day_name(sent) if sent is not None else ""), (message_line(author, when, text, answered) if text else "")

    return by_day(title, (line(m) for m in data["messages"] if isinstance(m, dict)), "space")

"""The days a question's relative dates name, written into it before it is searched: "what did Ben say yesterday?"
becomes "what did Ben say yesterday (Sun 29 Nov 2026)?", and "what is on next Monday?" "... next Monday (Mon 7 Dec
2026)?". The documents name days as "29 Nov 2026" (a Slack day's title, a mail's heading, a calendar's event), so the
search finds them by their words; the model, which does not know what day it is, reads the date too.

Only for an index of a person's documents (a folder's files, `documents_index`): MTRAG's and BEIR's records are not
dated so, and their figures stay as they were. English words only; a date already written is left alone.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from local_rag.corpus.sections import day_name

if TYPE_CHECKING:
    from local_rag.records import Conversation
    from local_rag.settings import Settings

__all__ = ["dated", "dated_turn", "documents_index"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_PHRASE = re.compile(
    r"\b(?:(?P<day>today|tonight|yesterday|tomorrow|the day before yesterday|the day after tomorrow)"
    r"|(?:(?P<which>last|next|this|on) |(?<!good )(?<!black )(?<!cyber )(?<!holy )(?<!maundy )(?<!casual ))"
    r"(?P<weekday>" + "|".join(_WEEKDAYS) + r")(?!\.\w)"  # not Monday.com
    r"|(?P<span>(?:last|next|this) (?:week|month)))\b", re.IGNORECASE)
# a question about the past: "on Friday" or a bare "Friday" is then the last one, else (a calendar's "what is on
# Friday?", "is the meeting Friday?") the coming one
_PAST = re.compile(r"\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|said|told|wrote|sent|happened|met|asked|"
                   r"posted|mentioned|decided|agreed|discussed|shared|called|went|came|got|made|took|saw|ago)\b",
                   re.IGNORECASE)
_OFFSETS = {"today": 0, "tonight": 0, "yesterday": -1, "tomorrow": 1, "the day before yesterday": -2,
            "the day after tomorrow": 2}


def dated(text: str, today: date) -> str:
    """``text`` with the day (or days) each relative date names written after it, in parentheses.

    Example:
        >>> dated("What did Ben say yesterday?", date(2026, 11, 30))
        'What did Ben say yesterday (Sun 29 Nov 2026)?'
        >>> dated("Is the inspection on Friday or next Monday?", date(2026, 11, 30))
        'Is the inspection on Friday (Fri 4 Dec 2026) or next Monday (Mon 7 Dec 2026)?'
        >>> dated("What happened last week?", date(2026, 11, 30))
        'What happened last week (Mon 23 Nov 2026 to Sun 29 Nov 2026)?'
        >>> dated("What is the capital of France?", date(2026, 11, 30))
        'What is the capital of France?'
        >>> dated("What is on Friday?", date(2026, 11, 30)), dated("Who called Friday?", date(2026, 11, 30))
        ('What is on Friday (Fri 4 Dec 2026)?', 'Who called Friday (Fri 27 Nov 2026)?')
    """
    past = bool(_PAST.search(text))

    def named(match: re.Match[str]) -> str:
        days = _days(match, today, past)
        if not days:
            return match.group(0)
        shown = _name(days[0]) if len(days) == 1 else f"{_name(days[0])} to {_name(days[-1])}"
        return f"{match.group(0)} ({shown})"

    if re.search(r"\(\w{3} \d{1,2} \w{3} \d{4}", text):
        return text  # dated already (a chat's turn sent again)
    return _PHRASE.sub(named, text)


def _days(match: re.Match[str], today: date, past: bool = True) -> list[date]:
    """The first and last day a relative date names; ``past``: the question asks about the past (`_PAST`), which
    decides what "on Friday" and a bare "Friday" name."""
    if match.group("day"):
        return [today + timedelta(days=_OFFSETS[match.group("day").lower()])]
    if match.group("weekday"):
        wanted = _WEEKDAYS.index(match.group("weekday").lower())
        which = (match.group("which") or "on").lower()
        if which == "on" and not past:  # the coming one (today, if it is Friday)
            return [today + timedelta(days=(wanted - today.weekday()) % 7)]
        if which in ("on", "last"):  # the last one: "on Friday" (today, if it is Friday), "last Friday" (before today)
            back = (today.weekday() - wanted) % 7
            return [today - timedelta(days=back or (7 if which == "last" else 0))]
        monday = today - timedelta(days=today.weekday())  # "this Friday": this week's; "next Friday": next week's
        return [monday + timedelta(days=wanted + (7 if which == "next" else 0))]
    span = match.group("span").lower()
    if span.endswith("week"):
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks={"last": -1, "this": 0, "next": 1}[span.split()[0]])
        return [monday, monday + timedelta(days=6)]
    first = today.replace(day=1)
    if span.startswith("last"):
        first = (first - timedelta(days=1)).replace(day=1)
    elif span.startswith("next"):
        first = (first + timedelta(days=32)).replace(day=1)
    last = (first + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    return [first, last]


def _name(day: date) -> str:
    """The day as the documents head theirs (`day_name`: "29 Nov 2026"), its weekday first."""
    return f"{day:%a} {day_name(day)}"


def documents_index(index_dir: Path) -> bool:
    """The index holds a folder's documents (its ``files.json``: `index sync` follows them), not records of a JSONL
    corpus."""
    from local_rag.index.folder import FILES_FILE

    return (index_dir / FILES_FILE).is_file()


def dated_turn(conversation: Conversation, settings: Settings, today: date | None = None) -> Conversation:
    """``conversation`` with its last user turn `dated` (``today``: the machine's day), where ``settings`` ask for it
    (``pipeline.dates``) and its index holds a folder's documents; the same object where nothing changes."""
    if not settings.pipeline.dates or not documents_index(settings.index_dir):
        return conversation
    last = next((i for i in range(len(conversation.turns) - 1, -1, -1) if conversation.turns[i].speaker == "user"), None)
    if last is None:
        return conversation
    turn = conversation.turns[last]
    text = dated(turn.text, today or date.today())
    if text == turn.text:
        return conversation
    from dataclasses import replace

    turns = [*conversation.turns[:last], replace(turn, text=text), *conversation.turns[last + 1:]]
    return replace(conversation, turns=turns)

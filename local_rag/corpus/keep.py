"""Google Keep's notes as Google Takeout exports them (``Takeout/Keep/``): a ``.json`` file a note (its title, text or
checklist, labels, links, dates, and whether it is archived or in the trash) beside an ``.html`` file of the same
note. The JSON is read (its labels and checklist's ticks are in it), the HTML twin left out so the note is found once,
and notes in Keep's trash left out, as Keep's search leaves them out.

Example:
    >>> is_keep_note(b'{"color":"DEFAULT","isTrashed":false,"isPinned":false,"textContent":"Seals","title":"P4"}')
    True
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from local_rag.corpus.sections import Document, Section, UnreadableFile, day_name, read_json

__all__ = ["is_keep_note", "keep_trashed", "keep_twin", "read_keep"]


def is_keep_note(head: bytes) -> bool:
    """The first bytes of a ``.json`` file are a Google Keep note's."""
    return b'"isTrashed"' in head and (b'"textContent"' in head or b'"listContent"' in head)


def keep_trashed(path: Path) -> bool:
    """``path`` is a Keep note in Keep's trash: left out of a build, as Keep leaves it out of a search."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return is_keep_note(head) and b'"isTrashed":true' in head.replace(b" ", b"")


def keep_twin(path: Path) -> bool:
    """``path`` is the ``.html`` twin of a Keep note whose ``.json`` is read."""
    if path.suffix.lower() != ".html":
        return False
    twin = path.with_suffix(".json")
    try:
        with twin.open("rb") as fh:
            return is_keep_note(fh.read(4096))
    except OSError:
        return False


def read_keep(path: Path) -> Document:
    """A Keep note: its title (else its first line), its labels, its text or checklist (``[x]`` ticked), the links
    it holds, and the day it was last edited; "archived" said.

    Raises:
        UnreadableFile: a note in Keep's trash (left out, as Keep leaves it out of a search), or one with no text.
    """
    note = read_json(path)
    if not isinstance(note, dict):
        raise UnreadableFile("not a Google Keep note")
    if note.get("isTrashed"):  # given alone (a folder leaves it out: `keep_trashed`)
        raise UnreadableFile("in Google Keep's trash, not read")
    lines = []
    labels = [str(label.get("name")) for label in note.get("labels") or [] if isinstance(label, dict)]
    edited = _day(note.get("userEditedTimestampUsec"))
    about = [f"Labels: {', '.join(labels)}"] if labels else []
    about += [f"Edited: {edited}"] if edited else []
    about += ["Archived"] if note.get("isArchived") else []
    text = str(note.get("textContent") or "").strip()
    if text:
        lines.append(text)
    for item in note.get("listContent") or []:
        if isinstance(item, dict) and str(item.get("text") or "").strip():
            lines.append(("[x] " if item.get("isChecked") else "[ ] ") + str(item["text"]).strip())
    for link in note.get("annotations") or []:
        if isinstance(link, dict) and link.get("url"):
            lines.append(f"Link: {str(link.get('title') or '').strip()} ({link['url']})".replace(":  (", ": ("))
    if not lines:
        raise UnreadableFile("a Google Keep note with no text")
    title = str(note.get("title") or "").strip() or lines[0].split("\n", 1)[0][:80]
    return Document(title, [Section("\n".join([*about, *([""] if about else []), *lines]))])


def _day(microseconds: object) -> str:
    try:
        moment = datetime.fromtimestamp(int(str(microseconds)) / 1e6, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return ""
    return day_name(moment)

"""A Mattermost server's bulk export (``mmctl export create``, unzipped: ``import.jsonl``), the team chat of many
self-hosted and air-gapped sites: one document, "Mattermost export", each channel's days headed by the channel and
the day ("~ops (Pumps), 3 Nov 2025"; a direct or group message "Ana Silva and Ben Okafor"), a post a line "Ana
Silva, 14:02: the text" (UTC, as the export's times), its replies after it naming whom they answer, attached files
named. Known by its first line, ``{"type": "version", ...}``, whatever the file is called; the teams', channels' and
users' lines name what the posts refer to by handle.

Example:
    >>> read_mattermost(Path("export/import.jsonl")).sections[0].heading  # doctest: +SKIP
    '~ops (Pumps), 3 Nov 2025'
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from local_rag.corpus.chats import by_day, message_line
from local_rag.corpus.sections import Document, Section, UnreadableFile, day_name, json_object

__all__ = ["MATTERMOST_KIND", "is_mattermost", "read_mattermost"]

MATTERMOST_KIND = ".mattermost"  # how such a .jsonl is read (`local_rag.corpus.documents.document_suffix`)
MAX_BYTES = 2 << 30  # a larger export is refused by name (its lines are read into memory)
_HEAD = 512


def is_mattermost(path: Path) -> bool:
    """``path`` (a ``.jsonl``) opens with a Mattermost bulk export's version line."""
    try:
        with path.open("rb") as fh:
            first = fh.read(_HEAD).split(b"\n", 1)[0].removeprefix(b"\xef\xbb\xbf")
        head = json.loads(first) if first.strip().startswith(b"{") and first.rstrip().endswith(b"}") else None
    except (OSError, ValueError):
        return False
    return (isinstance(head, dict) and head.get("type") == "version" and isinstance(head.get("version"), int)
            and set(head) <= {"type", "version", "info"})


def read_mattermost(path: Path) -> Document:
    """The export's channels and direct messages (see the module).

    Raises:
        UnreadableFile: too large, or no post with text.
    """
    if path.stat().st_size > MAX_BYTES:
        raise UnreadableFile(f"a Mattermost export of more than {MAX_BYTES >> 30} GB: not read")
    teams: dict[str, str] = {}
    channels: dict[tuple[str, str], str] = {}
    users: dict[str, str] = {}
    posts: dict[str, list[dict[str, Any]]] = defaultdict(list)  # channel's heading -> its posts
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line cut short: the rest is read
            if not isinstance(record, dict):
                continue
            kind = str(record.get("type") or "")
            body = json_object(record.get(kind))
            if kind == "team":
                teams[str(body.get("name") or "")] = str(body.get("display_name") or body.get("name") or "")
            elif kind == "channel":
                channels[(str(body.get("team") or ""), str(body.get("name") or ""))] = str(
                    body.get("display_name") or body.get("name") or "")
            elif kind == "user":
                full = " ".join(str(body.get(k) or "") for k in ("first_name", "last_name")).strip()
                users[str(body.get("username") or "")] = full or str(body.get("username") or "")
            elif kind == "post":
                posts[f"\0{body.get('team') or ''}\0{body.get('channel') or ''}"].append(body)
            elif kind == "direct_post":
                members = sorted(str(m) for m in body.get("channel_members") or [])
                posts["\1" + "\0".join(members)].append(body)
    sections: list[Section] = []
    count = 0
    for key, channel_posts in posts.items():
        heading = _heading(key, teams, channels, users)
        lines = []
        for post in sorted(channel_posts, key=lambda p: _number(p.get("create_at"))):
            author = users.get(str(post.get("user") or ""), str(post.get("user") or ""))
            lines.append(_line(post, author, ""))
            for reply in sorted((json_object(r) for r in post.get("replies") or []),
                                key=lambda r: _number(r.get("create_at"))):
                lines.append(_line(reply, users.get(str(reply.get("user") or ""), str(reply.get("user") or "")),
                                   author))
        try:
            read = by_day(heading, lines, "channel", heading)
        except UnreadableFile:
            continue  # a channel of empty posts
        sections += read.sections
        count += read.pages
    if not sections:
        raise UnreadableFile("no post with text in the Mattermost export")
    return Document("Mattermost export", sections, pages=count)


def _heading(key: str, teams: dict[str, str], channels: dict[tuple[str, str], str], users: dict[str, str]) -> str:
    if key.startswith("\1"):
        members = [users.get(m, m) for m in key[1:].split("\0") if m]
        return " and ".join(members) if len(members) <= 2 else ", ".join(members[:-1]) + " and " + members[-1]
    _, team, channel = key.split("\0", 2)
    name = channels.get((team, channel), channel)
    return f"~{name} ({teams.get(team, team)})" if team else f"~{name}"


def _number(value: object) -> int:
    """A post's ``create_at`` (milliseconds since 1970) as a whole number; 0 when it is missing or not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0
    try:
        return int(value)
    except ValueError:
        return 0


def _line(post: dict[str, Any], author: str, answered: str) -> tuple[str, str]:
    millis = _number(post.get("create_at"))
    sent = datetime.fromtimestamp(millis / 1000, UTC).replace(tzinfo=None) if millis > 0 else None
    text = str(post.get("message") or "").strip()
    files = [Path(str(json_object(a).get("path") or "")).name for a in post.get("attachments") or []]
    if any(files):
        text = f"{text} [shared: {'; '.join(f for f in files if f)}]".strip()
    return (day_name(sent) if sent is not None else ""), (message_line(author, sent, text, answered) if text else "")

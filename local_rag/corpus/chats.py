"""Team chats saved for keeping: a Slack workspace export (a folder a channel, a JSON file a day: Slack's own export
and slackdump's), a Discord channel saved by DiscordChatExporter (a JSON file a channel) and a chat or a whole account
exported by Telegram Desktop (``result.json``). Their files are ``.json``, like any program's data, so they are known
by place (a Slack export's ``users.json`` and ``channels.json``) or by their first bytes (`chat_export_kind`).

Each message is a line "Ana Silva, 14:02: the text", a reply "Ben Okafor, 14:05, replying to Ana Silva: ..." (in
Slack, a thread's replies follow the message they answer); names of people and channels written for ``<@U0123>``
and ``<#C0123>``; links kept with their label; attached files named. A Slack day is a document (its title the channel
and the day, "#ops, 3 Nov 2025"), a Discord channel or a Telegram chat a document with a section a day.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from local_rag.corpus.assistants import assistant_export, read_chatgpt, read_claude
from local_rag.corpus.keep import is_keep_note, read_keep
from local_rag.corpus.sections import Document, Section, UnreadableFile, day_name, json_object, read_json

__all__ = ["CHAT_KINDS", "READERS", "by_day", "chat_export_kind", "chat_export_part", "message_line", "read_discord",
           "read_slack_day", "read_telegram", "slack_export_root", "slack_markup"]

#: how the files of a chat export are read (`local_rag.corpus.documents.document_suffix`): no suffix of their own
# and Google Keep's notes (`local_rag.corpus.keep`), ChatGPT's and Claude's conversations (`local_rag.corpus.assistants`)
# (Google Chat's and Mattermost's readers are in modules of their own)
CHAT_KINDS = (".slack", ".discord", ".telegram", ".keep", ".chatgpt", ".claude", ".googlechat", ".mattermost")

_SLACK_DAY = re.compile(r"\d{4}-\d{2}-\d{2}\.json")
# the files of a Slack export's top folder: who is who, which channels there are (`chat_export_part`)
_SLACK_LISTS = ("users.json", "channels.json", "groups.json", "dms.json", "mpims.json")
_SLACK_FILES = {*_SLACK_LISTS, "integration_logs.json", "canvases.json", "org_users.json", "huddle_transcripts.json",
                "file_conversations.json", "lists.json", "workflows.json"}
_DISCORD = re.compile(rb'^\{\s*"guild"\s*:\s*\{.*"channel"\s*:\s*\{', re.DOTALL)
_TELEGRAM_CHAT = re.compile(rb'"type"\s*:\s*"(?:personal_chat|bot_chat|saved_messages|private_group|private_supergroup|'
                            rb'public_supergroup|private_channel|public_channel)"\s*,\s*"id"\s*:\s*-?\d+\s*,\s*'
                            rb'"messages"\s*:\s*\[')
_TELEGRAM_ACCOUNT = re.compile(rb'^\{\s*"about"\s*:\s*"Here is the data you requested')
_HEAD_BYTES = 4096


def chat_export_kind(path: Path) -> str:
    """How a ``.json`` file of a chat export is read: ``.slack`` for a day of a Slack channel (``CHANNEL/2025-11-03.json``
    in a folder with ``users.json`` and ``channels.json``), ``.discord`` for a DiscordChatExporter channel, ``.telegram``
    for a Telegram Desktop export, ``.keep`` for a Google Keep note (`local_rag.corpus.keep`), ``.chatgpt``/``.claude``
    for an assistant's conversations (`local_rag.corpus.assistants`) (by their first bytes); else "" (a program's data,
    not read).

    Example:
        >>> chat_export_kind(Path("package.json"))
        ''
    """
    if path.suffix.lower() != ".json":
        return ""
    if _SLACK_DAY.fullmatch(path.name) and slack_export_root(path.parent.parent):
        return ".slack"
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD_BYTES).removeprefix(b"\xef\xbb\xbf")
    except OSError:
        return ""
    if _DISCORD.match(head):
        return ".discord"
    if _TELEGRAM_CHAT.search(head) or _TELEGRAM_ACCOUNT.match(head):
        return ".telegram"
    return ".keep" if is_keep_note(head) else assistant_export(head)


def chat_export_part(path: Path) -> bool:
    """``path`` is one of a Slack export's lists (users, channels, ...): read with the days, not a document itself."""
    return path.name in _SLACK_FILES and slack_export_root(path.parent)


def slack_export_root(folder: Path) -> bool:
    """``folder`` is the top of a Slack export: it holds ``users.json`` and a list of conversations."""
    try:
        return _is_slack_root(folder, folder.stat().st_mtime_ns)
    except OSError:
        return False


@lru_cache(maxsize=64)
def _is_slack_root(folder: Path, mtime_ns: int) -> bool:  # a folder's mtime changes when a file is added or removed
    return (folder / "users.json").is_file() and any((folder / name).is_file() for name in _SLACK_LISTS[1:])


def message_line(author: str, sent: datetime | str | None, text: str, replying_to: str = "") -> str:
    """One message as a line of a chat's text (``sent``: when, or the time of day as the export wrote it).

    Example:
        >>> message_line("Ana Silva", datetime(2025, 11, 3, 14, 2), "Pump 4 is back.")
        'Ana Silva, 14:02: Pump 4 is back.'
        >>> message_line("Ben", "14:05", "Good.", replying_to="Ana Silva")
        'Ben, 14:05, replying to Ana Silva: Good.'
    """
    who = " ".join(author.split()) or "someone"
    when = f", {sent}" if isinstance(sent, str) else f", {sent:%H:%M}" if sent is not None else ""
    reply = f", replying to {replying_to}" if replying_to else ""
    return f"{who}{when}{reply}: {text.strip()}"


# --- Slack ---------------------------------------------------------------------------------------------------------

def read_slack_day(path: Path) -> Document:
    """A day of a Slack channel (``CHANNEL/YYYY-MM-DD.json`` of an export): its messages in order, each thread's
    replies after the message they answer (a reply to a message of an earlier day says whose thread it is), times in
    UTC as Slack's export splits its days; titled by the channel and the day ("#ops, 3 Nov 2025").

    Raises:
        UnreadableFile: not a list of messages, or no message with text.
    """
    messages = read_json(path)
    if not isinstance(messages, list):
        raise UnreadableFile("not a day of a Slack channel (a list of messages)")
    root = path.parent.parent
    names = _slack_names(root / "users.json", _mtime(root / "users.json"))
    channels = _slack_channels(root, tuple(_mtime(root / name) for name in _SLACK_LISTS))  # edited lists: read again
    known = [m for m in messages if isinstance(m, dict) and isinstance(m.get("ts"), str)]
    by_ts = {m["ts"]: m for m in known}
    replies: dict[str, list[dict[str, Any]]] = {}
    for message in known:
        parent = message.get("thread_ts")
        if isinstance(parent, str) and parent != message["ts"] and parent in by_ts:
            replies.setdefault(parent, []).append(message)
    threads: list[list[str]] = []  # a message and the replies that follow it: a paragraph, where pieces are cut

    def add(message: dict[str, Any], replying_to: str = "", reply: bool = False) -> None:
        if not reply:
            threads.append([])
        author, text = _slack_author(message, names), _slack_text(message, names, channels)
        if message.get("subtype") in _JOINS:
            text = text.removeprefix(f"@{author} ")  # "<@U02> has joined the channel", by U02
        if text:
            threads[-1].append(message_line(author, _slack_time(message["ts"]), text, replying_to))

    for message in sorted(known, key=_ts_order):
        parent = message.get("thread_ts")
        if isinstance(parent, str) and parent != message["ts"]:
            if parent in by_ts:
                continue  # written after its thread's first message
            add(message, _earlier_thread(path.parent, parent, names, channels))
            continue
        add(message)
        for answer in sorted(replies.get(message["ts"], []), key=_ts_order):
            add(answer, _slack_author(message, names), reply=True)
    count = sum(map(len, threads))
    if not count:
        raise UnreadableFile("no message with text on this day of the channel")
    channel = path.parent.name
    title = f"{channels.get(channel, '#' + channel)}, {day_name(datetime.strptime(path.stem, '%Y-%m-%d'))}"
    text = "\n\n".join("\n".join(thread) for thread in threads if thread)
    return Document(title, [Section(text)], pages=count)  # the build counts messages


def _earlier_thread(channel: Path, ts: str, names: dict[str, str], channels: dict[str, str]) -> str:
    """Whose thread of which day a reply answers, with its first words ("Ana Silva's thread of 3 Nov 2025: "Which
    pump failed?""), from the day file of the channel that holds it ("a thread" when there is none): "Replaced it."
    means nothing without them."""
    sent = _slack_time(ts)
    if sent is None:
        return "a thread"
    day = channel / f"{sent:%Y-%m-%d}.json"
    first = next((m for m in _slack_day(day, _mtime(day)) if m.get("ts") == ts), None)
    if first is None:
        return f"a thread of {day_name(sent)}"
    words = " ".join(_slack_text(first, names, channels).split())
    words = words if len(words) <= _QUOTED else words[:_QUOTED].rsplit(" ", 1)[0] + " ..."
    return f"{_slack_author(first, names)}'s thread of {day_name(sent)}" + (f' ("{words}")' if words else "")


_QUOTED = 100  # characters of a thread's first message quoted by a reply on a later day


@lru_cache(maxsize=32)
def _slack_day(path: Path, mtime_ns: int) -> list[dict[str, Any]]:
    try:
        messages = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return []
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


_JOINS = ("channel_join", "channel_leave", "group_join", "group_leave")


def _ts_order(message: dict[str, Any]) -> float:
    try:
        return float(message["ts"])
    except ValueError:
        return 0.0


def _slack_time(ts: str) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(ts), UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


@lru_cache(maxsize=8)
def _slack_names(users: Path, mtime_ns: int) -> dict[str, str]:
    """User id -> the name Slack shows (real name, else display name, else user name), from ``users.json``."""
    try:
        people = json.loads(users.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    names = {}
    for person in people if isinstance(people, list) else []:
        if isinstance(person, dict) and isinstance(person.get("id"), str):
            profile = json_object(person.get("profile"))
            name = next((str(v) for v in (profile.get("real_name"), person.get("real_name"), profile.get("display_name"),
                                           person.get("name")) if v), person["id"])
            names[person["id"]] = name
    return names


@lru_cache(maxsize=8)
def _slack_channels(root: Path, stamps: tuple[int, ...]) -> dict[str, str]:
    """What each conversation of the export is called, by its id and by its folder's name: ``#name`` for a channel
    (public or private), "Direct messages, Ana Silva and Ben Okafor" for a DM (its folder is named by its id), "Group
    messages, ..." for a group DM."""
    names = _slack_names(root / "users.json", _mtime(root / "users.json"))
    called: dict[str, str] = {}
    for listed, kind in (("channels.json", "#"), ("groups.json", "#"), ("mpims.json", "Group messages, "),
                         ("dms.json", "Direct messages, ")):
        try:
            entries = json.loads((root / listed).read_bytes())
        except (OSError, ValueError, RecursionError):
            continue
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
                continue
            members = [names.get(str(m), str(m)) for m in entry.get("members") or [] if isinstance(m, str)]
            name = str(entry.get("name") or entry["id"])
            shown = f"#{name}" if kind == "#" else kind + _and(members) if members else kind + name
            called[entry["id"]] = called[name] = shown
    return called


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _slack_author(message: dict[str, Any], names: dict[str, str]) -> str:
    profile = json_object(message.get("user_profile"))
    bot = json_object(message.get("bot_profile"))
    user = str(message.get("user") or "")
    return str(names.get(user) or profile.get("real_name") or profile.get("display_name") or message.get("username")
               or bot.get("name") or user or "someone")


_SLACK_ENTITY = re.compile(r"<([@#!])?([^<>|]*)(?:\|([^<>]*))?>")


def _slack_text(message: dict[str, Any], names: dict[str, str], channels: dict[str, str]) -> str:
    """A message's text as it reads in Slack (mentions and channels by name, links with their label), then the
    files it shares and, for a message of a bot with no text of its own, its attachments' text."""
    if message.get("subtype") == "tombstone":
        return ""  # "This message was deleted." under a thread that goes on
    text = slack_markup(str(message.get("text") or ""), names, channels)
    if not text.strip():
        text = "\n".join(str(a.get("fallback") or a.get("text") or "") for a in message.get("attachments") or []
                         if isinstance(a, dict))
        text = slack_markup(text, names, channels)
    files = [f for f in message.get("files") or [] if isinstance(f, dict)]
    shared = [_file_name(f) for f in files if _file_name(f)]
    if shared:
        text = f"{text.strip()} [shared: {'; '.join(shared)}]".strip()
    return text.strip()


def _file_name(file: dict[str, Any]) -> str:
    name, title = str(file.get("name") or ""), str(file.get("title") or "")
    return f"{title} ({name})" if title and name and title != name else name or title


def slack_markup(text: str, names: dict[str, str], channels: dict[str, str]) -> str:
    """Slack's message markup as it reads: ``<@U01>`` the person's name, ``<#C01|ops>`` ``#ops``, ``<!here>``
    ``@here``, ``<https://x|the runbook>`` "the runbook (https://x)", ``&amp;`` "&".

    Example:
        >>> slack_markup("<@U01> see <https://wiki/x|the runbook> in <#C02|ops> &amp; <!here>", {"U01": "Ana"}, {})
        '@Ana see the runbook (https://wiki/x) in #ops & @here'
    """
    def entity(match: re.Match[str]) -> str:
        sign, target, label = match.group(1), match.group(2), match.group(3)
        if sign == "@":
            return "@" + (names.get(target) or label or target)
        if sign == "#":
            return channels.get(target) or "#" + (label or target)
        if sign == "!":
            return label if label else "@" + target.split("^")[0]
        if target.startswith("mailto:"):
            return label or target[7:]
        return f"{label} ({target})" if label and label != target else target

    return html.unescape(_SLACK_ENTITY.sub(entity, text))


# --- Discord -------------------------------------------------------------------------------------------------------

def read_discord(path: Path) -> Document:
    """A Discord channel saved by DiscordChatExporter (JSON): titled by server and channel ("Pumps / #station-4"), a
    section a day; a reply names whom it answers; attachments named, embeds' titles and text kept.

    Raises:
        UnreadableFile: not such an export, or no message with text.
    """
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise UnreadableFile("not a DiscordChatExporter channel (no messages)")
    guild = json_object(data.get("guild"))
    channel = json_object(data.get("channel"))
    name = str(channel.get("name") or path.stem)
    title = " / ".join(x for x in (str(guild.get("name") or ""), str(channel.get("category") or ""), "#" + name) if x)
    messages = [m for m in data["messages"] if isinstance(m, dict)]
    authors = {str(m.get("id")): _discord_author(m) for m in messages}

    def line(message: dict[str, Any]) -> tuple[str, str]:
        sent = _iso_time(message.get("timestamp"))
        parts = [str(message.get("content") or "")]
        for embed in message.get("embeds") or []:
            if isinstance(embed, dict):
                parts += [str(embed.get(key) or "") for key in ("title", "description")]
        files = [str(a.get("fileName") or "") for a in message.get("attachments") or [] if isinstance(a, dict)]
        text = "\n".join(p.strip() for p in parts if p.strip())
        if any(files):
            text = f"{text} [shared: {'; '.join(f for f in files if f)}]".strip()
        reference = json_object(message.get("reference"))
        answered = authors.get(str(reference.get("messageId")), "") if message.get("type") == "Reply" else ""
        return _day_of(sent), message_line(_discord_author(message), sent, text, answered) if text else ""

    return by_day(title, (line(m) for m in messages), "channel")


def _discord_author(message: dict[str, Any]) -> str:
    author = json_object(message.get("author"))
    return str(author.get("nickname") or author.get("name") or "someone")


def _day_of(sent: datetime | None) -> str:
    return day_name(sent) if sent is not None else ""


def _iso_time(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


# --- Telegram ------------------------------------------------------------------------------------------------------

def read_telegram(path: Path) -> Document:
    """A Telegram Desktop export (``result.json``): one chat, titled by its name, or a whole account's chats (the
    title "Telegram chats", each chat's days headed by its name), a section a day; a reply names whom it answers, a
    forwarded message whom it comes from; service messages (joins, pins, calls) and media without a caption left out,
    a file or a photo named.

    Raises:
        UnreadableFile: not such an export, or no message with text.
    """
    data = read_json(path)
    if not isinstance(data, dict):
        raise UnreadableFile("not a Telegram export")
    listed = json_object(data.get("chats")).get("list")
    chats = listed if isinstance(listed, list) else [data] if isinstance(data.get("messages"), list) else []
    chats = [c for c in chats if isinstance(c, dict) and isinstance(c.get("messages"), list)]
    if not chats:
        raise UnreadableFile("not a Telegram export (no chat with messages)")
    sections: list[Section] = []
    count = 0
    for chat in chats:
        name = str(chat.get("name") or ("Saved messages" if chat.get("type") == "saved_messages" else "Telegram chat"))
        messages = [m for m in chat["messages"] if isinstance(m, dict) and m.get("type") == "message"]
        authors = {m.get("id"): str(m.get("from") or "") for m in messages}
        lines = (_telegram_line(m, authors, name) for m in messages)
        heading = name if len(chats) > 1 else ""
        try:
            read = by_day(name, lines, "chat", heading)
        except UnreadableFile:
            continue  # a chat of service messages or media only
        sections += read.sections
        count += read.pages
    if not sections:
        raise UnreadableFile("no message with text in the chat" + ("s" if len(chats) > 1 else ""))
    title = str(chats[0].get("name") or "Telegram chat") if len(chats) == 1 else "Telegram chats"
    return Document(title, sections, pages=count)


def _telegram_line(message: dict[str, Any], authors: dict[Any, str], chat: str) -> tuple[str, str]:
    """The day a Telegram message was sent, and its line ("" for a photo without a caption)."""
    sent = _iso_time(message.get("date"))
    text = _telegram_text(message.get("text"))
    media = str(message.get("file_name") or "") or ("a photo" if message.get("photo") else "")
    if media and text:
        text = f"{text} [shared: {media}]"
    if message.get("forwarded_from") and text:
        text = f"(forwarded from {message['forwarded_from']}) {text}"
    answered = authors.get(message.get("reply_to_message_id"), "") if "reply_to_message_id" in message else ""
    return _day_of(sent), message_line(str(message.get("from") or chat), sent, text, answered) if text else ""


def _telegram_text(value: object) -> str:
    """A message's text: a string, or a list of strings and entities (links, bold, mentions) with their text.

    Example:
        >>> _telegram_text(["Pump 4 is ", {"type": "bold", "text": "back"}, "."])
        'Pump 4 is back.'
    """
    if isinstance(value, list):
        return "".join(str(part.get("text") or "") if isinstance(part, dict) else str(part) for part in value)
    return str(value or "")


# --- shared --------------------------------------------------------------------------------------------------------

def by_day(title: str, lines: Iterable[tuple[str, str]], what: str, heading: str = "") -> Document:
    """A document of a chat's (day, line) pairs, a section for each day (its heading the day, after ``heading`` if
    given; a line of no known day stays in the section before it), a message a paragraph.

    Raises:
        UnreadableFile: no line ("no message with text in the ``what``").
    """
    sections: list[Section] = []
    current, count = "", 0
    for day, line in lines:
        if not line:
            continue
        count += 1
        if not sections or day and day != current:
            current = day or current
            sections.append(Section("", heading=", ".join(x for x in (heading, current) if x)))
        sections[-1].text += ("\n\n" if sections[-1].text else "") + line  # a message a paragraph
    if not sections:
        raise UnreadableFile(f"no message with text in the {what}")
    return Document(title, sections, pages=count)  # the build counts messages


READERS: dict[str, Callable[[Path], Document]] = {".slack": read_slack_day, ".discord": read_discord,
                                                 ".telegram": read_telegram, ".keep": read_keep,
                                                 ".chatgpt": read_chatgpt, ".claude": read_claude}

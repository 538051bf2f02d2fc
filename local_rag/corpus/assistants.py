"""Conversations with AI assistants, as their data exports hold them: ChatGPT's (Settings > Data controls > Export
data: ``conversations.json``, each conversation a tree of messages, the branch shown being the one that ends at its
``current_node``) and Claude's (Settings > Privacy > Export data: ``conversations.json``, each conversation a list of
``chat_messages``). A person's questions and the answers they kept are worth searching like any notes.

The file is one document ("ChatGPT conversations"), a conversation a section headed by its title and the day it began
("Pump sizing (3 Nov 2025)"), a message a paragraph "You: ..." / "ChatGPT: ..."; system and tool messages, hidden
context and pictures left out, code kept.

Example:
    >>> assistant_export(b'[{"title": "Pumps", "create_time": 1762178400.5, "update_time": 1.0, "mapping": {')
    '.chatgpt'
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from local_rag.corpus.sections import Document, Section, UnreadableFile, day_name, json_object, read_json

__all__ = ["assistant_export", "assistant_export_part", "read_chatgpt", "read_claude"]

_CHATGPT = re.compile(rb'^\[\s*\{\s*"title"\s*:.{0,2000}?"mapping"\s*:\s*\{', re.DOTALL)
_CLAUDE = re.compile(rb'^\[\s*\{\s*"uuid"\s*:.{0,3000}?"chat_messages"\s*:\s*\[', re.DOTALL)


def assistant_export(head: bytes) -> str:
    """``.chatgpt`` or ``.claude`` where the first bytes of a ``.json`` file are those of such an export, else ""."""
    if _CHATGPT.match(head):
        return ".chatgpt"
    return ".claude" if _CLAUDE.match(head) else ""


# the other files of the exports: ChatGPT's HTML viewer (the same conversations again) and its lists, Claude's lists
_PARTS = {"chat.html", "user.json", "message_feedback.json", "shared_conversations.json", "model_comparisons.json",
          "users.json", "projects.json"}


def assistant_export_part(path: Path) -> bool:
    """``path`` is one of the other files of a ChatGPT or Claude export (beside its ``conversations.json``): left out,
    the conversations being read from the JSON (ChatGPT's ``chat.html`` holds them all again)."""
    if path.name not in _PARTS:
        return False
    try:
        with (path.parent / "conversations.json").open("rb") as fh:
            return bool(assistant_export(fh.read(4096)))
    except OSError:
        return False


def _load(path: Path) -> list[Any]:
    data = read_json(path)
    if not isinstance(data, list):
        raise UnreadableFile("not a list of conversations")
    return [c for c in data if isinstance(c, dict)]


def read_chatgpt(path: Path) -> Document:
    """ChatGPT's ``conversations.json``: a conversation a section, the branch of it that was shown (from its
    ``current_node`` back to its first message), a message a paragraph.

    Raises:
        UnreadableFile: not a list of conversations, or none with a message of text.
    """
    sections = []
    for conversation in _load(path):
        mapping = conversation.get("mapping")
        if not isinstance(mapping, dict):
            continue
        lines = [line for line in (_chatgpt_line(node) for node in _shown_branch(mapping, conversation)) if line]
        if lines:
            sections.append(Section("\n\n".join(lines), heading=_heading(conversation.get("title"),
                                                                            _time(conversation.get("create_time")))))
    return _document("ChatGPT conversations", sections)


def _shown_branch(mapping: dict[str, Any], conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes from the first message to ``current_node`` (a regenerated answer's other branches left out); where
    there is no current node, the last node of the tree in order."""
    node_id = conversation.get("current_node")
    if node_id not in mapping:
        node_id = next(reversed(mapping), None)
    branch: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        branch.append(node)
        node_id = node.get("parent")
    return branch[::-1]


def _chatgpt_line(node: dict[str, Any]) -> str:
    message = node.get("message")
    if not isinstance(message, dict):
        return ""
    author = json_object(message.get("author"))
    role = str(author.get("role") or "")
    metadata = json_object(message.get("metadata"))
    if role not in ("user", "assistant") or metadata.get("is_visually_hidden_from_conversation"):
        return ""
    content = json_object(message.get("content"))
    kind = content.get("content_type")
    if kind in ("text", "multimodal_text"):
        text = "\n".join(p for p in content.get("parts") or [] if isinstance(p, str))
    elif kind == "code":
        text = f"```\n{content.get('text') or ''}\n```"
    else:
        return ""  # hidden context, browsing results, thoughts
    text = text.strip()
    return f"{'You' if role == 'user' else 'ChatGPT'}: {text}" if text else ""


def read_claude(path: Path) -> Document:
    """Claude's ``conversations.json``: a conversation a section, a message a paragraph.

    Raises:
        UnreadableFile: not a list of conversations, or none with a message of text.
    """
    sections = []
    for conversation in _load(path):
        lines = []
        for message in conversation.get("chat_messages") or []:
            if not isinstance(message, dict):
                continue
            text = str(message.get("text") or "").strip() or "\n".join(
                str(part.get("text") or "") for part in message.get("content") or []
                if isinstance(part, dict) and part.get("type") == "text").strip()
            if text:
                lines.append(f"{'You' if message.get('sender') == 'human' else 'Claude'}: {text}")
        if lines:
            sections.append(Section("\n\n".join(lines), heading=_heading(conversation.get("name"),
                                                                            _time(conversation.get("created_at")))))
    return _document("Claude conversations", sections)


def _time(value: object) -> datetime | None:
    """A Unix time (ChatGPT) or an ISO time (Claude)."""
    try:
        if isinstance(value, (int, float)):
            return datetime.fromtimestamp(value, UTC)
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except (ValueError, OverflowError, OSError):
        return None


def _heading(title: object, began: datetime | None) -> str:
    name = " ".join(str(title or "").split()) or "(untitled conversation)"
    return f"{name} ({day_name(began)})" if began is not None else name


def _document(title: str, sections: list[Section]) -> Document:
    if not sections:
        raise UnreadableFile("no conversation with a message of text")
    return Document(title, sections, pages=len(sections))  # the build counts conversations

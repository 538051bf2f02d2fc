"""Conversations with AI assistants from their data exports (`local_rag.corpus.assistants`): ChatGPT's and Claude's
``conversations.json``, written here field for field as the exports write them."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, document_suffix, read_document
from local_rag.corpus.readers import CorpusReport, read_corpus

NOV_3 = 1762178400.123  # 3 Nov 2025 14:00 UTC


def _node(node_id: str, parent: str | None, children: list[str], role: str | None, text: str | None = None,
          kind: str = "text", **metadata: object) -> dict[str, object]:
    message = None if role is None else {
        "id": node_id, "author": {"role": role, "name": None, "metadata": {}}, "create_time": NOV_3,
        "update_time": None, "content": {"content_type": kind, **({"parts": [text]} if kind != "code" else {"text": text})},
        "status": "finished_successfully", "end_turn": True, "weight": 1.0, "metadata": metadata, "recipient": "all"}
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def chatgpt_export(folder: Path) -> Path:
    """A ChatGPT data export as it is unzipped: conversations.json (a tree of messages each, one answer regenerated),
    chat.html (the same conversations in a viewer), user.json, message_feedback.json."""
    folder.mkdir()
    mapping = {
        "root": _node("root", None, ["sys"], None),
        "sys": _node("sys", "root", ["q1"], "system", "", is_visually_hidden_from_conversation=True),
        "q1": _node("q1", "sys", ["a1", "a1b"], "user", "Which pump fits station 4 at 40 m head?"),
        "a1": _node("a1", "q1", [], "assistant", "A first answer, regenerated: not shown."),
        "a1b": _node("a1b", "q1", ["q2"], "assistant", "A DN 150 centrifugal pump of about 30 kW."),
        "q2": _node("q2", "a1b", ["c2"], "user", "Show the head calculation."),
        "c2": _node("c2", "q2", [], "assistant", "head = 40 + losses", kind="code"),
    }
    conversations = [{"title": "Pump sizing", "create_time": NOV_3, "update_time": NOV_3 + 600, "mapping": mapping,
                      "moderation_results": [], "current_node": "c2", "plugin_ids": None,
                      "conversation_id": "6747a0c2-0000", "id": "6747a0c2-0000"},
                     {"title": "Empty", "create_time": NOV_3, "update_time": NOV_3, "current_node": "r",
                      "mapping": {"r": _node("r", None, [], None)}}]
    (folder / "conversations.json").write_text(json.dumps(conversations))
    (folder / "chat.html").write_text("<html><body><script>var jsonData = " + json.dumps(conversations)
                                      + "</script><div>Pump sizing</div></body></html>")
    (folder / "user.json").write_text(json.dumps({"id": "user-1", "email": "ana@example.org"}))
    (folder / "message_feedback.json").write_text("[]")
    return folder


def test_a_chatgpt_export_is_read_a_conversation_a_section(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """Session 57: a ChatGPT export was its chat.html read as one web page (every conversation again, in a script)
    and its JSON "skipped". Now conversations.json is read: a conversation a section headed by its title and day, the
    branch that was shown (a regenerated answer's other branch left out), system messages left out, code kept; the
    export's other files are left out without a note."""
    folder = chatgpt_export(tmp_path / "chatgpt")
    assert document_suffix(folder / "conversations.json") == ".chatgpt"
    report = CorpusReport()
    with caplog.at_level(logging.WARNING):
        passages = list(read_corpus(folder, report=report))
    assert [(p.doc_id, p.title, p.section) for p in passages] == [
        ("conversations.json", "ChatGPT conversations", "Pump sizing (3 Nov 2025)")]
    assert passages[0].text == ("You: Which pump fits station 4 at 40 m head?\n\n"
                                "ChatGPT: A DN 150 centrifugal pump of about 30 kW.\n\n"
                                "You: Show the head calculation.\n\nChatGPT: ```\nhead = 40 + losses\n```")
    assert report.skipped == [] and "skipped" not in caplog.text


def test_a_claude_export_is_read_and_an_empty_one_named(tmp_path: Path):
    """Claude's conversations.json: a conversation a section, "You:" and "Claude:" paragraphs (the text, else its
    content's text parts); a list of no conversation with text is unreadable with the reason."""
    conversations = [{"uuid": "c1", "name": "Valve timing", "created_at": "2025-11-03T14:02:11.000000Z",
                      "updated_at": "2025-11-03T14:10:00.000000Z", "account": {"uuid": "a1"}, "chat_messages": [
                          {"uuid": "m1", "text": "Why does valve 4 lag?", "content": [], "sender": "human",
                           "created_at": "2025-11-03T14:02:11Z", "attachments": [], "files": []},
                          {"uuid": "m2", "text": "", "sender": "assistant", "created_at": "2025-11-03T14:02:20Z",
                           "content": [{"type": "text", "text": "Firmware 2.3 delays the close signal by 80 ms."}]}]}]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(conversations, indent=2))
    assert document_suffix(path) == ".claude"
    document = read_document(path)
    assert (document.title, document.pages) == ("Claude conversations", 1)
    assert [(s.heading, s.text) for s in document.sections] == [
        ("Valve timing (3 Nov 2025)", "You: Why does valve 4 lag?\n\nClaude: Firmware 2.3 delays the close signal by "
                                      "80 ms.")]
    path.write_text(json.dumps([{"uuid": "c2", "name": "x", "created_at": "2025-11-03T14:02:11Z",
                                 "chat_messages": []}]))
    with pytest.raises(UnreadableFile, match="no conversation with a message of text"):
        read_document(path)

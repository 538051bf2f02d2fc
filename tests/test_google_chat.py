"""Google Chat in Google Takeout (`local_rag.corpus.google_chat`): a space and a direct message, as Takeout writes
them (``Google Chat/Groups/<space>/messages.json`` beside ``group_info.json``; times in words, a 12-hour clock with a
narrow no-break space before PM, or a 24-hour one), read through `read_corpus` and indexed by the CLI."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from pathlib import Path

import pytest

from local_rag.corpus.google_chat import google_chat_time
from local_rag.corpus.readers import CorpusReport, read_corpus

SPACE = {"messages": [
    {"creator": {"name": "Ana Silva", "email": "ana@example.org", "user_type": "Human"},
     "created_date": "Monday, November 3, 2025 at 2:02:11\u202fPM UTC", "text": "Which pump failed at station 4?",
     "topic_id": "t1", "message_id": "m1"},
    {"creator": {"name": "Ben Okafor", "email": "ben@example.org", "user_type": "Human"},
     "created_date": "Monday, November 3, 2025 at 2:05:40\u202fPM UTC", "text": "Pump 4B, the seal again.",
     "quoted_message_metadata": {"creator": {"name": "Ana Silva"}, "text": "Which pump failed at station 4?"},
     "topic_id": "t1", "message_id": "m2"},
    {"creator": {"name": "Ben Okafor"}, "created_date": "Monday, November 3, 2025 at 2:06:00\u202fPM UTC",
     "text": "", "deleted_date": "Monday, November 3, 2025 at 2:07:00\u202fPM UTC", "message_id": "m3"},
    {"creator": {"name": "Ana Silva"}, "created_date": "Tuesday, November 4, 2025 at 9:15:00\u202fAM UTC",
     "text": "Report attached.", "attached_files": [{"original_name": "seal-report.pdf",
                                                    "export_name": "File-seal-report.pdf"}], "message_id": "m4"},
]}
DM = {"messages": [
    {"creator": {"name": "Chen Wei"}, "created_date": "Wednesday, 5 November 2025 at 08:30:00 UTC",
     "text": "Can you cover the Friday audit?"},
    {"creator": {"name": "Ana Silva"}, "created_date": "miércoles, 5 de noviembre de 2025, 8:31:00 UTC",
     "text": "Yes."},
]}


def takeout(root: Path) -> Path:
    groups = root / "Takeout" / "Google Chat" / "Groups"
    for folder, messages, info in (("Space AAAAxyz", SPACE, {"name": "Pump team", "members": [{"name": "Ana Silva"},
                                                                                              {"name": "Ben Okafor"}]}),
                                   ("DM 1a2b3c", DM, {"members": [{"name": "Chen Wei"}, {"name": "Ana Silva"}]})):
        (groups / folder).mkdir(parents=True)
        (groups / folder / "messages.json").write_text(json.dumps(messages, ensure_ascii=False, indent=2))
        (groups / folder / "group_info.json").write_text(json.dumps(info))
    users = root / "Takeout" / "Google Chat" / "Users" / "User 1234"
    users.mkdir(parents=True)
    (users / "user_info.json").write_text(json.dumps({"user": {"name": "Ana Silva"}}))
    return root / "Takeout"


def test_a_space_and_a_direct_message_are_read_a_day_a_section(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    root = takeout(tmp_path)
    report = CorpusReport()
    with caplog.at_level(logging.WARNING):
        passages = list(read_corpus(root, report=report))
    by_title: dict[str, list[str]] = {}
    for p in passages:
        by_title.setdefault(p.title, []).append(p.text)
    assert set(by_title) == {"Pump team", "Chat with Chen Wei, Ana Silva"}
    space = "\n\n".join(by_title["Pump team"])
    assert "Ana Silva, 14:02: Which pump failed at station 4?" in space
    assert "Ben Okafor, 14:05, replying to Ana Silva: Pump 4B, the seal again." in space
    assert "Ana Silva, 09:15: Report attached. [shared: seal-report.pdf]" in space
    assert "2:07" not in space and space.count("Ben Okafor") == 1  # the deleted message is left out
    sections = {p.section for p in passages if p.title == "Pump team"}
    assert {"3 Nov 2025", "4 Nov 2025"} <= sections
    dm = "\n\n".join(by_title["Chat with Chen Wei, Ana Silva"])
    assert "Chen Wei, 08:30: Can you cover the Friday audit?" in dm
    assert "Ana Silva, miércoles, 5 de noviembre de 2025, 8:31:00 UTC: Yes." in dm  # not English: as written
    assert not report.unreadable and not report.skipped  # group_info.json and user_info.json: parts of the export
    assert "group_info" not in caplog.text and "user_info" not in caplog.text


def test_takeouts_times_in_words():
    assert google_chat_time("Monday, November 3, 2025 at 2:02:11\u202fPM UTC") == datetime(2025, 11, 3, 14, 2, 11)
    assert google_chat_time("Monday, 3 November 2025 at 00:05:00 UTC") == datetime(2025, 11, 3, 0, 5)
    assert google_chat_time("Monday, Nov 3, 2025 at 12:05 AM GMT+1") == datetime(2025, 11, 3, 0, 5)
    assert google_chat_time("") is None and google_chat_time(None) is None and google_chat_time("3/11/2025") is None


def test_index_build_of_a_takeout_finds_a_message(tmp_path: Path):
    from .test_cli import run

    root = takeout(tmp_path)
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    built = run("index", "build", str(root), "--index", "chat", "--sparse-only", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    found = run("search", "which seal failed", "--index", "chat", "--json", cwd=tmp_path, env=env)
    hits = json.loads(found.stdout)["hits"]
    assert hits[0]["title"] == "Pump team" and "Pump 4B, the seal again." in hits[0]["text"]
    assert hits[0]["doc_id"] == "Google Chat/Groups/Space AAAAxyz/messages.json"

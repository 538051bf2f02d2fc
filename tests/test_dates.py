"""Relative dates of a question written out as the days they name (`local_rag.dates`), so that a search of dated
documents (a Slack day, a mail, a calendar's event) finds the day asked about; never for MTRAG's records."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from local_rag.dates import dated, dated_turn
from local_rag.records import Conversation, Turn
from local_rag.settings import load_settings


def test_relative_dates_name_their_days():
    """A Wednesday: yesterday and tomorrow, the day before yesterday, weekdays last, this and next, "on Friday" (the
    last Friday in a question about the past, session 59: the coming one otherwise, and a bare "Friday" alike), weeks
    and months; a question with no relative date, and one already dated, are left as they are."""
    wednesday = date(2026, 12, 2)
    assert dated("What did Ana decide the day before yesterday?", wednesday) == \
        "What did Ana decide the day before yesterday (Mon 30 Nov 2026)?"
    assert dated("Tomorrow or this Friday?", wednesday) == "Tomorrow (Thu 3 Dec 2026) or this Friday (Fri 4 Dec 2026)?"
    assert dated("last Wednesday, next Wednesday", wednesday) == \
        "last Wednesday (Wed 25 Nov 2026), next Wednesday (Wed 9 Dec 2026)"
    assert dated("What was said on Friday?", wednesday) == "What was said on Friday (Fri 27 Nov 2026)?"
    assert dated("What is on Friday?", wednesday) == "What is on Friday (Fri 4 Dec 2026)?"
    assert dated("Is the audit Monday or Wednesday?", wednesday) == \
        "Is the audit Monday (Mon 7 Dec 2026) or Wednesday (Wed 2 Dec 2026)?"
    assert dated("Who did Ana call Monday?", wednesday) == "Who did Ana call Monday (Mon 30 Nov 2026)?"
    for same in ("Which pumps fail on Good Friday?", "Is our board on Monday.com?", "Meetings never on Fridays"):
        assert dated(same, wednesday) == same
    assert dated("Meetings next month", wednesday) == "Meetings next month (Fri 1 Jan 2027 to Sun 31 Jan 2027)"
    assert dated("Who called last month?", date(2026, 3, 31)) == \
        "Who called last month (Sun 1 Feb 2026 to Sat 28 Feb 2026)?"
    for same in ("How do I rebuild the index?", "What did Ana say yesterday (Tue 1 Dec 2026)?"):
        assert dated(same, wednesday) == same


def _slack_day(root: Path, day: date, text: str) -> None:
    moment = datetime.combine(day, time(9, 30), UTC)
    message = {"type": "message", "user": "U01", "text": text, "ts": f"{moment.timestamp():.6f}"}
    (root / "ops" / f"{day:%Y-%m-%d}.json").write_text(json.dumps([message]))


def test_a_search_for_yesterday_finds_yesterdays_day_of_a_chat(tmp_path: Path):
    """Session 57: "what happened with the seals yesterday?" over a Slack export found the days that mention seals in
    any order (BM25 knows no "yesterday"). Now the question is searched as "... yesterday (Sun 29 Nov 2026)?", whose
    words the day's title holds ("#ops, 29 Nov 2026"): yesterday's day comes first. An index of JSONL records (MTRAG's
    kind) is searched with the question as it was asked."""
    from .test_cli import run

    root = tmp_path / "slack"
    (root / "ops").mkdir(parents=True)
    (root / "users.json").write_text(json.dumps([{"id": "U01", "name": "ana", "real_name": "Ana Silva"}]))
    (root / "channels.json").write_text(json.dumps([{"id": "C01", "name": "ops"}]))
    today = date.today()
    _slack_day(root, today - timedelta(days=4), "The seals for pump 4 are ordered, the seals ship next week.")
    _slack_day(root, today - timedelta(days=1), "The seals arrived.")
    _slack_day(root, today - timedelta(days=9), "Seals? Which seals do we need for pump 4, the seals of DN 150?")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    built = run("index", "build", str(root), "--sparse-only", "--index", "team", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    found = run("search", "What happened with the seals yesterday?", "--index", "team", "--json", cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    yesterday = today - timedelta(days=1)
    assert result["queries"][0]["text"].endswith(f"yesterday ({yesterday:%a} {yesterday.day} {yesterday:%b %Y})?")
    assert result["hits"][0]["doc_id"] == f"ops/{yesterday:%Y-%m-%d}.json"

    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"_id": "r1", "title": "Seals", "text": "The seals arrived yesterday."}) + "\n")
    assert run("index", "build", str(records), "--sparse-only", "--index", "records", cwd=tmp_path, env=env).returncode == 0
    plain = run("search", "What happened with the seals yesterday?", "--index", "records", "--json", cwd=tmp_path, env=env)
    assert json.loads(plain.stdout)["queries"][0]["text"] == "What happened with the seals yesterday?"


def test_the_pipeline_dates_the_last_user_turn_only_for_documents(tmp_path: Path):
    """`dated_turn`: the last user turn of a conversation is dated where the index holds a folder's documents and
    ``pipeline.dates`` is on; earlier turns, an index of records and the setting off leave it as it was."""
    index = tmp_path / "indexes" / "notes"
    index.mkdir(parents=True)
    settings = load_settings(overrides={"index": "notes", "indexes_dir": str(tmp_path / "indexes")})
    conversation = Conversation([Turn("user", "What was said yesterday?"), Turn("agent", "Which channel?"),
                                 Turn("user", "#ops, yesterday")])
    assert dated_turn(conversation, settings, date(2026, 12, 2)) is conversation  # no files.json: records
    (index / "files.json").write_text("{}")
    changed = dated_turn(conversation, settings, date(2026, 12, 2))
    assert [t.text for t in changed.turns] == ["What was said yesterday?", "Which channel?",
                                               "#ops, yesterday (Tue 1 Dec 2026)"]
    settings.pipeline.dates = False
    assert dated_turn(conversation, settings, date(2026, 12, 2)) is conversation

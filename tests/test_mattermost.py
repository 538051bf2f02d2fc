"""A Mattermost bulk export (`local_rag.corpus.mattermost`): the JSONL `mmctl export create` writes (version, team,
channel, user, post with replies and attachments, direct channel and post lines), read in a folder and given alone,
and indexed by the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from local_rag.corpus.readers import CorpusReport, read_corpus

NOV_3_1402 = 1762178520000  # 3 Nov 2025 14:02:00 UTC, in milliseconds
LINES = [
    {"type": "version", "version": 1, "info": {"generator": "mattermost-server", "version": "10.11.0",
                                               "created": "2025-11-30T10:00:00Z"}},
    {"type": "team", "team": {"name": "pumps", "display_name": "Pumps", "type": "O"}},
    {"type": "channel", "channel": {"team": "pumps", "name": "ops", "display_name": "Operations", "type": "O"}},
    {"type": "user", "user": {"username": "ana", "first_name": "Ana", "last_name": "Silva", "email": "a@x.org"}},
    {"type": "user", "user": {"username": "ben", "email": "b@x.org"}},
    {"type": "post", "post": {"team": "pumps", "channel": "ops", "user": "ana", "create_at": NOV_3_1402,
                              "message": "Which pump failed at station 4?",
                              "replies": [{"user": "ben", "message": "Pump 4B, the seal again.",
                                           "create_at": NOV_3_1402 + 180_000}]}},
    {"type": "post", "post": {"team": "pumps", "channel": "ops", "user": "ana", "create_at": NOV_3_1402 + 86_400_000,
                              "message": "Report attached.", "attachments": [{"path": "data/2025/seal-report.pdf"}]}},
    {"type": "post", "post": {"team": "pumps", "channel": "ops", "user": "ben", "create_at": NOV_3_1402 + 60_000,
                              "message": ""}},
    {"type": "direct_channel", "direct_channel": {"members": ["ana", "ben"]}},
    {"type": "direct_post", "direct_post": {"channel_members": ["ben", "ana"], "user": "ben",
                                            "create_at": NOV_3_1402 + 7_200_000, "message": "Can you cover Friday?"}},
]


def export(folder: Path, name: str = "import.jsonl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES) + '{"type": "post", "post": {"cut sho')
    return path


def test_channels_and_direct_messages_a_section_a_day(tmp_path: Path):
    path = export(tmp_path / "mattermost")
    report = CorpusReport()
    passages = list(read_corpus(tmp_path / "mattermost", report=report))
    assert {p.title for p in passages} == {"Mattermost export"} and not report.unreadable
    by_section = {p.section: p.text for p in passages}
    assert set(by_section) == {"~Operations (Pumps), 3 Nov 2025", "~Operations (Pumps), 4 Nov 2025",
                               "Ana Silva and ben, 3 Nov 2025"}
    assert by_section["~Operations (Pumps), 3 Nov 2025"].split("\n\n")[-2:] == [
        "Ana Silva, 14:02: Which pump failed at station 4?", "ben, 14:05, replying to Ana Silva: Pump 4B, the seal again."]
    assert "Ana Silva, 14:02: Report attached. [shared: seal-report.pdf]" in by_section["~Operations (Pumps), 4 Nov 2025"]
    assert "ben, 16:02: Can you cover Friday?" in by_section["Ana Silva and ben, 3 Nov 2025"]
    alone = list(read_corpus(path, report=CorpusReport()))  # given alone, not taken for JSONL passages
    assert [p.text for p in alone] == [p.text for p in passages]


def test_a_jsonl_of_passages_is_still_a_corpus(tmp_path: Path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"_id": "p1", "title": "T", "text": "a passage"}) + "\n")
    assert [p.id for p in read_corpus(corpus)] == ["p1"]


def test_index_build_of_an_export_finds_a_post(tmp_path: Path):
    from .test_cli import run

    export(tmp_path / "mm")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    built = run("index", "build", str(tmp_path / "mm"), "--index", "mm", "--sparse-only", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    found = run("search", "which seal failed", "--index", "mm", "--json", cwd=tmp_path, env=env)
    hit = json.loads(found.stdout)["hits"][0]
    assert hit["section"] == "~Operations (Pumps), 3 Nov 2025" and "Pump 4B, the seal again." in hit["text"]

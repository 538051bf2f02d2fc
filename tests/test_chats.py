"""Team chats saved for keeping (`local_rag.corpus.chats`): a Slack workspace export (a folder a channel, a JSON file a
day), a Discord channel saved by DiscordChatExporter and a Telegram Desktop export, each written here field for
field as its program writes it (no such export ships in any package)."""

from __future__ import annotations

import json
import logging
import zipfile
from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, document_suffix, read_document
from local_rag.corpus.readers import CorpusReport, read_corpus
from local_rag.errors import BadInputError

NOV_3 = 1762178400  # 3 Nov 2025 14:00 UTC


def _profile(real: str, display: str) -> dict[str, object]:
    return {"avatar_hash": "g0b1c2", "image_72": "https://avatars.example/72.png", "first_name": real.split()[0],
            "real_name": real, "display_name": display, "team": "T0PUMPS", "name": display.lower(), "is_restricted":
            False, "is_ultra_restricted": False}


def _message(user: str, seconds: int, text: str, **more: object) -> dict[str, object]:
    """A message as Slack's export writes it: its text also as blocks (rich text), the author's profile with it."""
    ts = f"{NOV_3 + seconds}.{seconds:06d}"
    people = {"U01ANA": ("Ana Silva", "ana"), "U02BEN": ("Ben Okafor", "Ben")}
    record: dict[str, object] = {
        "client_msg_id": f"5b0e-{seconds}", "type": "message", "text": text, **({"user": user} if user else {}), "ts": ts,
        "blocks": [{"type": "rich_text", "block_id": "x1", "elements": [
            {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]}],
        "team": "T0PUMPS", "user_team": "T0PUMPS", "source_team": "T0PUMPS"}
    if user in people:
        record["user_profile"] = _profile(*people[user])
    record.update(more)
    return record


def slack_export(root: Path) -> Path:
    """A Slack workspace export as Slack writes it (unzipped): users, channels and DMs listed at the top, a folder
    a conversation (a DM's named by its id), a file a day (UTC), a thread's replies in the day they were written."""
    root.mkdir(parents=True)
    users = [{"id": "U01ANA", "team_id": "T0PUMPS", "name": "ana", "deleted": False, "real_name": "Ana Silva",
              "tz": "Europe/Lisbon", "profile": _profile("Ana Silva", "ana"), "is_admin": True, "is_bot": False},
             {"id": "U02BEN", "team_id": "T0PUMPS", "name": "ben", "deleted": False,
              "profile": _profile("Ben Okafor", "Ben"), "is_admin": False, "is_bot": False}]
    channels = [{"id": "C01OPS", "name": "ops", "created": 1700000000, "creator": "U01ANA", "is_archived": False,
                 "is_general": False, "members": ["U01ANA", "U02BEN"], "pins": [],
                 "topic": {"value": "Pump stations", "creator": "U01ANA", "last_set": 1700000000},
                 "purpose": {"value": "Day-to-day running", "creator": "U01ANA", "last_set": 1700000000}}]
    (root / "users.json").write_text(json.dumps(users, indent=4))
    (root / "channels.json").write_text(json.dumps(channels, indent=4))
    (root / "dms.json").write_text(json.dumps([{"id": "D03XYZ", "created": 1700000000,
                                                "members": ["U01ANA", "U02BEN"]}], indent=4))
    (root / "integration_logs.json").write_text(json.dumps([], indent=4))
    (root / "canvases.json").write_text(json.dumps([], indent=4))
    question = _message("U01ANA", 120, "Which pump failed at station 4? <@U02BEN> can you check &amp; report in "
                        "<#C01OPS|ops>?", thread_ts=f"{NOV_3 + 120}.000120", reply_count=2,
                        reply_users=["U02BEN", "U01ANA"], latest_reply=f"{NOV_3 + 86400}.086400")
    day_1 = [
        _message("U02BEN", 0, "<@U02BEN> has joined the channel", subtype="channel_join"),
        question,
        _message("", 900, "", subtype="bot_message", username="Pump monitor", bot_id="B01",
                 attachments=[{"fallback": "Station 4 pressure back to 6.1 bar", "color": "good"}]),
        _message("U02BEN", 300, "The north pump. Steps in <https://wiki.example.org/pumps/4|the runbook>.",
                 thread_ts=f"{NOV_3 + 120}.000120", parent_user_id="U01ANA",
                 files=[{"id": "F01", "name": "pump4-report.pdf", "title": "Pump 4 report", "mimetype":
                         "application/pdf", "filetype": "pdf", "size": 48211}]),
    ]
    (root / "ops").mkdir()
    (root / "ops" / "2025-11-03.json").write_text(json.dumps(day_1, indent=4, ensure_ascii=False))
    day_2 = [_message("U01ANA", 86400, "Müller replaced it this morning.", thread_ts=f"{NOV_3 + 120}.000120",
                      parent_user_id="U01ANA")]
    (root / "ops" / "2025-11-04.json").write_text(json.dumps(day_2, indent=4, ensure_ascii=False))
    (root / "D03XYZ").mkdir()
    (root / "D03XYZ" / "2025-11-05.json").write_text(json.dumps([_message("U02BEN", 2 * 86400, "The spare is in bay 2")],
                                                                indent=4))
    return root


def test_a_slack_export_is_read_a_document_a_channel_day(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    """Session 57: a Slack workspace export, where a team's decisions are, was "no .txt, .md, ... files found" (its
    files are .json). Now each day of a channel is a document titled by channel and day; a message is a line of its
    author's name, time (UTC, as the export's days) and text; a thread's replies follow the message they answer,
    naming it; mentions, channels and links read as in Slack; files shared and a bot's alert text kept; the
    export's lists are read with the days, not named as skipped."""
    root = slack_export(tmp_path / "Pumps Slack export Nov 1 2025 - Nov 30 2025")
    (root / "settings.json").write_text('{"name": "not a chat"}')
    report = CorpusReport()
    with caplog.at_level(logging.WARNING):
        passages = {p.doc_id: p for p in read_corpus(root, report=report)}
    assert sorted(passages) == ["D03XYZ/2025-11-05.json", "ops/2025-11-03.json", "ops/2025-11-04.json"]
    day = passages["ops/2025-11-03.json"]
    assert day.title == "#ops, 3 Nov 2025"
    assert [thread.splitlines() for thread in day.text.split("\n\n")] == [  # a thread a paragraph
        ["Ben Okafor, 14:00: has joined the channel"],
        ["Ana Silva, 14:02: Which pump failed at station 4? @Ben Okafor can you check & report in #ops?",
         "Ben Okafor, 14:05, replying to Ana Silva: The north pump. Steps in the runbook "
         "(https://wiki.example.org/pumps/4). [shared: Pump 4 report (pump4-report.pdf)]"],
        ["Pump monitor, 14:15: Station 4 pressure back to 6.1 bar"],
    ]
    later = passages["ops/2025-11-04.json"]
    assert later.text == ('Ana Silva, 14:00, replying to Ana Silva\'s thread of 3 Nov 2025 ("Which pump failed at '
                          'station 4? @Ben Okafor can you check & report in #ops?"): Müller replaced it this morning.')
    assert passages["D03XYZ/2025-11-05.json"].title == "Direct messages, Ana Silva and Ben Okafor, 5 Nov 2025"
    assert [s.split(":")[0] for s in report.skipped] == [str(root / "settings.json")]  # the lists are no "skipped"
    assert "the exports of Slack, Discord, Telegram, Google Chat, Mattermost, Google Keep, ChatGPT and Claude" in caplog.text


def test_a_broken_day_of_a_slack_export_is_named_and_the_rest_read(tmp_path: Path):
    """A day file cut short (a copy interrupted) is listed unreadable with the reason; the other days are read."""
    root = slack_export(tmp_path / "slack")
    (root / "ops" / "2025-11-06.json").write_text('[{"type": "message", "text": "cut sh')
    report = CorpusReport()
    ids = {p.doc_id for p in read_corpus(root, report=report)}
    assert "ops/2025-11-04.json" in ids and "ops/2025-11-06.json" not in ids
    assert report.unreadable["ops/2025-11-06.json"].startswith("not valid JSON")


def test_a_zipped_slack_export_says_to_unpack_it(tmp_path: Path):
    """Slack hands its export as a zip; given as is, it was read as JSONL passages. Now one line says what to do."""
    root = slack_export(tmp_path / "slack")
    with zipfile.ZipFile(tmp_path / "Pumps Slack export.zip", "w") as archive:
        for path in root.rglob("*.json"):
            archive.write(path, path.relative_to(root).as_posix())
    with pytest.raises(BadInputError, match="a Slack export, not JSONL passages: unpack it and build from its folder"):
        list(read_corpus(tmp_path / "Pumps Slack export.zip"))


def discord_channel(path: Path) -> Path:
    """A channel as DiscordChatExporter writes it (``--format Json``)."""
    def author(name: str, nickname: str) -> dict[str, object]:
        return {"id": str(abs(hash(name)) % 10**18), "name": name, "discriminator": "0000", "nickname": nickname,
                "color": None, "isBot": False, "roles": [], "avatarUrl": "https://cdn.example/avatar.png"}

    def message(number: int, when: str, kind: str, content: str, who: dict[str, object], **more: object) -> dict:
        return {"id": f"11{number:016d}", "type": kind, "timestamp": when, "timestampEdited": None,
                "callEndedTimestamp": None, "isPinned": False, "content": content, "author": who, "attachments": [],
                "embeds": [], "stickers": [], "reactions": [], "mentions": [], "inlineEmojis": [], **more}

    ana, ben = author("ana.silva", "Ana"), author("ben_o", "Ben Okafor")
    data = {
        "guild": {"id": "9001", "name": "Pump Makers", "iconUrl": "https://cdn.example/icon.png"},
        "channel": {"id": "9002", "type": "GuildTextChat", "categoryId": "9003", "category": "Support",
                    "name": "station-4", "topic": "Station 4 questions"},
        "dateRange": {"after": None, "before": None}, "exportedAt": "2025-11-30T10:00:00.000+00:00",
        "messages": [
            message(1, "2025-11-03T14:02:11.120+01:00", "GuildMemberJoin", "Joined the server.", ben),
            message(2, "2025-11-03T14:03:00.000+01:00", "Default", "Does the firmware 2.4 fix the valve lag?", ana),
            message(3, "2025-11-04T09:10:00.000+01:00", "Reply", "Yes, 2.4 cuts it to 40 ms.", ben,
                    reference={"messageId": "110000000000000002", "channelId": "9002", "guildId": "9001"},
                    attachments=[{"id": "7", "url": "https://cdn.example/notes.pdf", "fileName": "release-notes.pdf",
                                  "fileSizeBytes": 20411}]),
            message(4, "2025-11-04T09:11:00.000+01:00", "Default", "", ana,
                    embeds=[{"title": "Firmware 2.4", "url": "https://example.org/fw", "description":
                             "Valve timing and pressure alarms", "fields": []}]),
        ],
        "messageCount": 4,
    }
    path.write_text(json.dumps(data, indent=2))
    return path


def test_a_discord_channel_export_is_read_a_section_a_day(tmp_path: Path):
    """A DiscordChatExporter channel (a community's support questions and answers) is read: titled by server,
    category and channel, a section a day, a reply naming whom it answers, attachments named, embeds' text kept."""
    path = discord_channel(tmp_path / "Pump Makers - Support - station-4 [9002].json")
    assert document_suffix(path) == ".discord"
    document = read_document(path)
    assert document.title == "Pump Makers / Support / #station-4"
    assert [s.heading for s in document.sections] == ["3 Nov 2025", "4 Nov 2025"]
    assert document.sections[1].text.split("\n\n") == [  # a message a paragraph
        "Ben Okafor, 09:10, replying to Ana: Yes, 2.4 cuts it to 40 ms. [shared: release-notes.pdf]",
        "Ana, 09:11: Firmware 2.4\nValve timing and pressure alarms"]
    assert document.pages == 4
    given_alone = list(read_corpus(path))  # a .json given alone was read as JSON passages: "not a JSON array ..."
    assert [p.title for p in given_alone] == ["Pump Makers / Support / #station-4"] * 2


def telegram_chat(name: str, kind: str, chat_id: int) -> dict[str, object]:
    """A chat as Telegram Desktop's "Export chat history" (JSON) writes it."""
    def message(number: int, when: str, sender: str, text: object, **more: object) -> dict[str, object]:
        entities = text if isinstance(text, list) else [{"type": "plain", "text": text}]
        return {"id": number, "type": "message", "date": when, "date_unixtime": "1762178531", "from": sender,
                "from_id": f"user{abs(hash(sender)) % 10**9}", "text": text, "text_entities": entities, **more}

    return {"name": name, "type": kind, "id": chat_id, "messages": [
        {"id": 1, "type": "service", "date": "2025-11-03T14:00:00", "date_unixtime": "1762178400", "actor": "Ana",
         "actor_id": "user1", "action": "invite_members", "members": ["Ben"], "text": "", "text_entities": []},
        message(2, "2025-11-03T14:02:11", "Ana Silva", ["The valve spec is ", {"type": "bold", "text": "DN 150"},
                                                        ", see ", {"type": "link", "text": "https://example.org/v"}]),
        message(3, "2025-11-03T14:05:00", "Ben", "Got it", reply_to_message_id=2),
        message(4, "2025-11-05T08:00:00", "Ben", "", photo="photos/photo_4@05-11-2025_08-00-00.jpg", width=1280,
                height=960),
        message(5, "2025-11-05T08:01:00", "Ben", "Old valve, for the record", forwarded_from="Plant log",
                file="files/valve.pdf", file_name="valve.pdf", media_type="document"),
    ]}


def test_a_telegram_chat_and_a_whole_account_export_are_read(tmp_path: Path):
    """Telegram Desktop's ``result.json``: one chat (titled by its name) or an account's chats (a section a chat and
    day); service messages and a photo without a caption left out; a reply names whom it answers, a forwarded
    message where it comes from, a file is named."""
    chat = tmp_path / "ChatExport_2025-11-30" / "result.json"
    chat.parent.mkdir()
    chat.write_text(json.dumps(telegram_chat("Valve team", "private_supergroup", 1001), indent=1, ensure_ascii=False))
    assert document_suffix(chat) == ".telegram"
    document = read_document(chat)
    assert document.title == "Valve team"
    assert [(s.heading, s.text) for s in document.sections] == [
        ("3 Nov 2025", "Ana Silva, 14:02: The valve spec is DN 150, see https://example.org/v\n\n"
                       "Ben, 14:05, replying to Ana Silva: Got it"),
        ("5 Nov 2025", "Ben, 08:01: (forwarded from Plant log) Old valve, for the record [shared: valve.pdf]")]
    account = tmp_path / "DataExport_2025-11-30" / "result.json"
    account.parent.mkdir()
    account.write_text(json.dumps({
        "about": "Here is the data you requested. Remember: Telegram is ad free, it doesn't sell your data.",
        "personal_information": {"user_id": 1, "first_name": "Me"},
        "chats": {"about": "This page lists all chats from this export.", "list": [
            telegram_chat("Valve team", "private_supergroup", 1001), telegram_chat("Ana Silva", "personal_chat", 7)]},
    }, indent=1))
    assert document_suffix(account) == ".telegram"
    both = read_document(account)
    assert both.title == "Telegram chats"
    assert [s.heading for s in both.sections] == ["Valve team, 3 Nov 2025", "Valve team, 5 Nov 2025",
                                                  "Ana Silva, 3 Nov 2025", "Ana Silva, 5 Nov 2025"]


def test_json_files_of_other_programs_stay_unread(tmp_path: Path):
    """Only chat exports are read: a program's settings or a JSON of passages named like a Slack day outside an
    export are skipped as before (a project's manifest, package.json or tsconfig.json, is configuration, which `--code`
    reads), and a chat export with no message is unreadable."""
    (tmp_path / "settings.json").write_text('{"editor.fontSize": 14}')
    (tmp_path / "tsconfig.build.json").write_text('{"compilerOptions": {}}')
    assert document_suffix(tmp_path / "tsconfig.build.json") == "tsconfig.json"
    (tmp_path / "tsconfig.build.json").unlink()
    (tmp_path / "2025-11-03.json").write_text("[]")
    assert {document_suffix(p) for p in tmp_path.iterdir()} == {".json"}
    empty = tmp_path / "result.json"
    empty.write_text(json.dumps({"name": "Quiet", "type": "personal_chat", "id": 3, "messages": []}))
    with pytest.raises(UnreadableFile, match="no chat with messages|no message with text"):
        read_document(empty)


def test_index_build_reads_a_slack_export_and_search_finds_the_thread(tmp_path: Path):
    """The command as a user runs it over an unzipped Slack export: the days are indexed, the build counts
    messages, and a search for a reply's words finds its day by channel and date."""
    from .test_cli import run

    root = slack_export(tmp_path / "slack")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    result = run("index", "build", str(root), "--sparse-only", "--index", "team", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "skipped" not in result.stderr and "read: slack 6 message(s) at " in result.stdout
    found = run("search", "who replaced the pump", "--index", "team", "--json", cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    assert '"#ops, 4 Nov 2025"' in found.stdout
    # a channel named as Slack names it: "#ops" (the title's comma and '#' hid it: "matches no document")
    listed = run("index", "documents", "team", "--only", "#ops", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "ops/2025-11-03.json" in listed.stdout and "D03XYZ" not in listed.stdout
    direct = run("search", "spare", "--index", "team", "--only", "direct messages", "--json", cwd=tmp_path, env=env)
    assert direct.returncode == 0, direct.stderr
    assert "bay 2" in direct.stdout and "#ops" not in direct.stdout


def test_a_busy_day_is_cut_between_threads(tmp_path: Path):
    """A day of 40 messages (6,000 characters) was one passage of a day (its lines had no blank line between them,
    where pieces are cut); now each thread is a paragraph and the day is cut between threads, a piece beginning
    with a message."""
    root = slack_export(tmp_path / "slack")
    busy = [_message("U01ANA" if i % 2 else "U02BEN", 3 * 86400 + 60 * i,
                     f"Reading {i} of the pressure log at station 4 is within the band, no action needed "
                     f"before the inspection; the valves were checked and logged at round {i}.") for i in range(40)]
    (root / "ops" / "2025-11-06.json").write_text(json.dumps(busy, indent=4))
    pieces = [p for p in read_corpus(root, report=CorpusReport()) if p.doc_id == "ops/2025-11-06.json"]
    assert len(pieces) > 2
    assert all(p.text.startswith(("Ana Silva, ", "Ben Okafor, ")) for p in pieces)

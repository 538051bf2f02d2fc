"""Reading team chats, calendars and contacts (``scripts/bench_chats.py``): a Slack export of C channels, D days and
M messages a day (made here, seeded: a third of the messages replies in threads, some answered on a later day) read by
`read_corpus` (`local_rag.corpus.chats`), messages a second; what knowing a chat export's ``.json`` files by their
first bytes costs a folder of other programs' JSON files (a code project's ``package.json``, settings, data), which
are looked at and left unread; and a calendar of N events and an address book of N contacts, as Google exports them,
read by `local_rag.corpus.calendars` (icalendar).

    python scripts/bench_chats.py --channels 40 --days 120 --per-day 25 --events 5000 --contacts 5000 \\
        --json docs/benchmarks/s57-chats.json
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from local_rag.corpus.documents import read_document
from local_rag.corpus.readers import CorpusReport, document_paths, folder_files, read_corpus
from local_rag.sysinfo import machine

_WORDS = ("pump station valve pressure inspection invoice supplier deploy release build server alert rollback "
          "ticket customer meeting Friday Monday report schedule delivery order approved replaced checked weekly "
          "night shift filter meter service visit quote price warranty").split()
_START = datetime(2025, 1, 6, tzinfo=UTC)


def make_slack_export(root: Path, channels: int, days: int, per_day: int, seed: int = 57) -> int:
    """A Slack export under ``root``; returns how many messages it holds."""
    rng = random.Random(seed)
    people = [{"id": f"U{i:04d}", "name": f"person{i}", "profile": {"real_name": f"Person {i}"}} for i in range(60)]
    (root / "users.json").write_text(json.dumps(people))
    (root / "channels.json").write_text(json.dumps(
        [{"id": f"C{c:04d}", "name": f"team-{c}", "members": [p["id"] for p in people[:12]]} for c in range(channels)]))
    made = 0
    for c in range(channels):
        folder = root / f"team-{c}"
        folder.mkdir()
        threads: list[str] = []
        for d in range(days):
            day = _START + timedelta(days=d)
            messages = []
            for m in range(per_day):
                ts = f"{(day + timedelta(seconds=30 * m + 1)).timestamp():.6f}"
                text = " ".join(rng.choices(_WORDS, k=rng.randint(5, 40))).capitalize() + f" <@U{rng.randrange(60):04d}>"
                message = {"type": "message", "user": f"U{rng.randrange(60):04d}", "text": text, "ts": ts}
                if threads and rng.random() < 1 / 3:
                    message["thread_ts"] = rng.choice(threads[-20:])  # some of them on an earlier day
                else:
                    threads.append(ts)
                messages.append(message)
            (folder / f"{day:%Y-%m-%d}.json").write_text(json.dumps(messages, indent=4))
            made += len(messages)
    return made


def make_calendar(path: Path, events: int) -> None:
    """A Google Calendar export of ``events`` meetings (UTC times, the calendar's zone named, an organizer, an
    attendee, a location and a two-line description each)."""
    rows = []
    for i in range(events):
        day = _START + timedelta(days=i // 3)
        rows.append(f"BEGIN:VEVENT\r\nDTSTART:{day:%Y%m%d}T0{7 + i % 3}0000Z\r\nDTEND:{day:%Y%m%d}T100000Z\r\n"
                    f"UID:{i}@google.com\r\nSUMMARY:Meeting {i} on pumps\r\nLOCATION:Room {i % 9}\r\n"
                    "ORGANIZER;CN=Ana Silva:mailto:ana@example.org\r\n"
                    "ATTENDEE;PARTSTAT=ACCEPTED;CN=Ben Okafor:mailto:ben@example.org\r\n"
                    f"DESCRIPTION:Agenda item {i}\\, the valves and the budget.\\nSecond line.\r\nEND:VEVENT\r\n")
    path.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Google Inc//Google Calendar 70.9054//EN\r\n"
                    "X-WR-CALNAME:work\r\nX-WR-TIMEZONE:Europe/Lisbon\r\n" + "".join(rows) + "END:VCALENDAR\r\n",
                    newline="")


def make_contacts(path: Path, contacts: int) -> None:
    """A Google Contacts export (vCard 3.0) of ``contacts`` people with an e-mail, a phone and a firm."""
    path.write_text("".join(
        f"BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Person {i}\r\nN:{i};Person;;;\r\n"
        f"EMAIL;TYPE=INTERNET;TYPE=WORK:p{i}@example.org\r\nTEL;TYPE=CELL:+351 91{i:07d}\r\nORG:Firm {i % 50}\r\n"
        "END:VCARD\r\n" for i in range(contacts)), newline="")


def _timed(path: Path, repeats: int) -> dict[str, object]:
    read_document(path)  # once before the clock: imports and the page cache
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        document = read_document(path)
        seconds.append(time.perf_counter() - started)
    median = sorted(seconds)[len(seconds) // 2]
    return {"bytes": path.stat().st_size, "sections": len(document.sections), "seconds_median": round(median, 2),
            "per_s": round(len(document.sections) / median)}


def run(args: argparse.Namespace) -> dict[str, object]:
    figures: dict[str, object] = {"machine": machine(), "channels": args.channels, "days": args.days,
                                  "per_day": args.per_day, "repeats": args.repeats}
    with tempfile.TemporaryDirectory(prefix="local-rag-bench-chats-") as folder:
        root = Path(folder) / "slack"
        root.mkdir()
        messages = make_slack_export(root, args.channels, args.days, args.per_day)
        figures["messages"] = messages
        figures["export_bytes"] = sum(p.stat().st_size for p in root.rglob("*.json"))
        seconds = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            passages = list(read_corpus(root, report=CorpusReport()))
            seconds.append(time.perf_counter() - started)
        median = sorted(seconds)[len(seconds) // 2]
        figures["slack_read"] = {"seconds_median": round(median, 2), "messages_per_s": round(messages / median),
                                 "documents": len({p.doc_id for p in passages}),
                                 "text_chars": sum(len(p.text) for p in passages)}
        other = Path(folder) / "project"
        for i in range(args.other_json):
            (other / f"pkg{i // 100}").mkdir(parents=True, exist_ok=True)
            (other / f"pkg{i // 100}" / f"settings{i % 100}.json").write_text(
                json.dumps({"name": f"pkg{i}", "version": "1.0.0", "dependencies": {"x": "^1"}}, indent=2))
        found = folder_files(other).files
        seconds = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            kept = document_paths(found)
            seconds.append(time.perf_counter() - started)
        figures["other_json"] = {"files": len(found), "read": len(kept),
                                 "seconds_median": round(sorted(seconds)[len(seconds) // 2], 3)}
        if args.events:
            make_calendar(Path(folder) / "calendar.ics", args.events)
            figures["calendar"] = _timed(Path(folder) / "calendar.ics", args.repeats)
        if args.contacts:
            make_contacts(Path(folder) / "contacts.vcf", args.contacts)
            figures["contacts"] = _timed(Path(folder) / "contacts.vcf", args.repeats)
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return figures

"""Reading team chats, calendars and contacts: messages a second of a Slack export made here, what looking at other
programs' JSON files costs a folder, events and contacts a second (``local_rag/bench/chats.py``).

    python scripts/bench_chats.py --channels 40 --days 120 --per-day 25 --events 5000 --contacts 5000 \\
        --json docs/benchmarks/s57-chats.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.chats import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=40)
    parser.add_argument("--days", type=int, default=120)
    parser.add_argument("--per-day", type=int, default=25)
    parser.add_argument("--other-json", type=int, default=10000, help="JSON files of other programs in a folder")
    parser.add_argument("--events", type=int, default=5000, help="events of a calendar (0: none)")
    parser.add_argument("--contacts", type=int, default=5000, help="contacts of an address book (0: none)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here")
    run(parser.parse_args())


if __name__ == "__main__":
    main()

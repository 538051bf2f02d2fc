"""Reading mail (``scripts/bench_mail.py``): a mailbox of N messages (made here, seeded: threads of replies quoting
the message they answer, as Gmail writes them) read by `local_rag.corpus.mbox`, with the headers parsed once (what
ships) and with the standard library's default policy (which parses a header again at each reading), and the text
kept with and without the cut of quotes of messages the mailbox holds.

    python scripts/bench_mail.py --messages 20000 --json docs/benchmarks/s56-mail.json
"""

from __future__ import annotations

import argparse
import json
import mailbox
import random
import tempfile
import time
from email import policy
from email.message import EmailMessage
from pathlib import Path

from local_rag.corpus import mbox, web
from local_rag.corpus.documents import read_document
from local_rag.sysinfo import machine

_WORDS = ("pump station valve boiler pressure inspection invoice supplier contract lease rent budget meeting Friday "
          "Monday engineer report schedule delivery order approved replaced checked weekly night shift room tank "
          "filter meter reading service visit quote price return warranty").split()


def make_mailbox(path: Path, messages: int, seed: int = 56) -> None:
    """``messages`` messages in threads of 1-6, each reply quoting the one before it under "On ..., NAME wrote:"."""
    rng = random.Random(seed)
    box = mailbox.mbox(path)
    made = 0
    while made < messages:
        subject = " ".join(rng.choices(_WORDS, k=4)).capitalize()
        previous = ""
        for turn in range(min(rng.randint(1, 6), messages - made)):
            body = "\n\n".join(" ".join(rng.choices(_WORDS, k=40)).capitalize() + "." for _ in range(rng.randint(1, 4)))
            if previous:
                body += "\n\nOn Mon, 3 Nov 2025 at 09:12, Person <p@example.org> wrote:\n" + "\n".join(
                    f"> {line}".rstrip() for line in previous.split("\n"))
            message = EmailMessage()
            message["From"], message["To"] = f"person{rng.randint(1, 40)}@example.org", "me@example.com"
            message["Subject"] = ("Re: " if turn else "") + subject
            message["Date"] = "Mon, 3 Nov 2025 09:12:00 +0000"
            message["X-Gmail-Labels"] = "Inbox,Opened"
            message.set_content(body)
            box.add(message)
            previous, made = body, made + 1
    box.close()


def run(args: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="local-rag-bench-mail-") as folder:
        path = Path(folder) / "All mail.mbox"
        make_mailbox(path, args.messages)
        size = path.stat().st_size
        figures: dict[str, object] = {"messages": args.messages, "mbox_bytes": size, "machine": machine(),
                                      "repeats": args.repeats}
        read_document(path)  # once before the clock: imports and the page cache
        shipped, cut = web._ONCE, mbox.drop_known_quotes
        variants = (("headers_parsed_once", shipped, cut), ("stdlib_default_policy", policy.default, cut),
                    ("no_quote_cut", shipped, lambda sections, messages: None))
        for name, chosen, cutter in variants:
            web._ONCE, mbox.drop_known_quotes = chosen, cutter  # type: ignore[assignment]
            seconds = []
            try:
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    document = read_document(path)
                    seconds.append(time.perf_counter() - started)
            finally:
                web._ONCE, mbox.drop_known_quotes = shipped, cut
            median = sorted(seconds)[len(seconds) // 2]
            figures[name] = {"seconds_median": round(median, 2), "messages_per_s": round(args.messages / median),
                             "text_chars": sum(len(s.text) for s in document.sections)}
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return figures

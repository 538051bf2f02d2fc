"""Reading a mailbox: messages a second with e-mail headers parsed once (what ships) and with the standard library's
default policy, on a mailbox of N messages made here (``local_rag/bench/mail.py``).

    python scripts/bench_mail.py --messages 20000 --repeats 3 --json docs/benchmarks/s56-mail.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.mail import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here")
    run(parser.parse_args())


if __name__ == "__main__":
    main()

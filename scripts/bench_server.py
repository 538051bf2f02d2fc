"""Load test of `local-rag serve`: N concurrent OpenAI clients x M requests against the real server
(`local_rag.bench.serving`).

    flock /tmp/cpu-heavy.lock .venv/bin/python scripts/bench_server.py --profile cpu-test --clients 20 --requests 5

Writes ``<out>.json`` (every attempt, the summary, the machine) and ``<out>.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from local_rag.bench.serving import run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="cpu-test")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--requests", type=int, default=5, help="requests per client")
    ap.add_argument("--queue", type=int, default=8, help="server.queue")
    ap.add_argument("--attempts", type=int, default=1, help="tries per request (429 -> wait Retry-After -> again)")
    ap.add_argument("--max-tokens", type=int, help="generate.max_tokens for the server (default: the profile's)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--out", type=Path, default=Path("docs/benchmarks/server"))
    sys.exit(run(ap.parse_args(), "python scripts/bench_server.py " + " ".join(sys.argv[1:])))


if __name__ == "__main__":
    main()

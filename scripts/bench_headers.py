"""Contextual chunk headers measured (`local_rag.bench.headers`, which says what it measures and how).

    python scripts/bench_headers.py --out runs/i28/headers.json [--docs 150] [--profile cpu-test]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.headers import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--docs", type=int, default=150)
    parser.add_argument("--profile", default="cpu-test")
    args = parser.parse_args()
    run(args)


if __name__ == "__main__":
    main()

"""Contextual chunk headers measured (what and how: the docstring of ``local_rag/bench/headers.py``).

    python scripts/bench_headers.py --out docs/benchmarks/i28-headers.json [--docs 150] [--sparse-only]
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
    parser.add_argument("--sparse-only", action="store_true", help="BM25 only (no embedding model)")
    args = parser.parse_args()
    run(args)


if __name__ == "__main__":
    main()

"""`index sync` with 1% of the files changed against a full rebuild of the same folder (`local_rag.bench.sync`).

    python scripts/bench_sync.py --out runs/i28/sync.json [--files 300] [--changed 0.01] [--profile cpu-test]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.sync import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--profile", default="cpu-test")
    args = parser.parse_args()
    run(args)


if __name__ == "__main__":
    main()

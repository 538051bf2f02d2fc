"""What the load-time integrity check of an index costs (`local_rag.bench.load_check`).

    python scripts/bench_load_check.py --index mtrag-govt      # an existing index
    python scripts/bench_load_check.py --synthetic 50000    # a synthetic index of N passages, in a temporary folder

Prints one JSON object: median load wall and CPU time without and with the check, the check's CPU time and its
share of the load's CPU time (the figure in docs/reliability.md).
"""

from __future__ import annotations

import argparse

from local_rag.bench.load_check import run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", help="an existing index name")
    ap.add_argument("--synthetic", type=int, help="build a synthetic index of this many passages")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    run(args)


if __name__ == "__main__":
    main()

"""Task A figures on the MTRAG pool corpora: BM25, dense and hybrid, with last-turn and rewrite queries
(`local_rag.bench.retrieval`).

Needs the pool indexes (`bash scripts/build_pool_indexes.sh`). Writes docs/benchmarks/retrieval.json, .md and .png.

    .venv/bin/python scripts/bench_retrieval.py [--domains clapnq,cloud,fiqa,govt] [--profile cpu-test]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.retrieval import bench_retrieval

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", default="clapnq,cloud,fiqa,govt")
    parser.add_argument("--profile", default="cpu-test")
    parser.add_argument("--tasks-root", default=str(ROOT.parent / "shared" / "mtrag" / "retrieval_tasks"))
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks"))
    args = parser.parse_args()
    bench_retrieval(args.domains.split(","), args.profile, args.tasks_root, args.out)


if __name__ == "__main__":
    main()

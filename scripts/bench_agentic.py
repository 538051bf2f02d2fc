"""Agentic (ChatR1) vs pipeline mode, side by side, on a fixed seeded subset of MTRAG conversations
(`local_rag.bench.agentic`). Resumable: finished turns are kept in ``<runs>/records-<profile>-<seed>.jsonl``.

    flock /tmp/cpu-heavy.lock .venv/bin/python scripts/bench_agentic.py --profile cpu-qwen --domains govt,clapnq --limit 12
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.agentic import bench_agentic
from local_rag.mtrag import default_mtrag_dir

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="cpu-qwen")
    parser.add_argument("--domains", default="govt,clapnq", help="domains with a pool index indexes/mtrag-<d>")
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mtrag-dir", default=str(default_mtrag_dir()))
    parser.add_argument("--runs", default=str(ROOT / "runs" / "bench-agentic"))
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks" / "agentic"))
    args = parser.parse_args()
    print(bench_agentic(args.profile, args.domains.split(","), args.limit, args.seed, args.mtrag_dir, args.runs, args.out))


if __name__ == "__main__":
    main()

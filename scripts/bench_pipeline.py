"""Per-turn latency, citation validity and IDK behaviour of the conversational pipeline on MTRAG conversations
(`local_rag.bench.turns`). Needs the pool indexes (scripts/build_pool_indexes.sh); writes
docs/benchmarks/pipeline-<profile>.{json,md}.

    .venv/bin/python scripts/bench_pipeline.py --profile cpu-qwen --per-domain 4
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from local_rag.bench.turns import bench_pipeline
from local_rag.mtrag import DOMAINS, default_mtrag_dir

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="cpu-qwen")
    parser.add_argument("--per-domain", type=int, default=4)
    parser.add_argument("--domains", default=",".join(DOMAINS))
    parser.add_argument("--tasks", default=str(default_mtrag_dir() / "generation_tasks" / "mtrag_tasks.jsonl"))
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks"))
    args = parser.parse_args()
    summary = bench_pipeline(args.profile, args.per_domain, args.domains.split(","), args.tasks, args.out)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()

"""A search scoped to some documents (`--only`) against the same search unscoped, at collection sizes no test reaches.

    python scripts/bench_scope.py --rows 1000000 --bm25-rows 200000 --out docs/benchmarks/s53-scope.json

Figures per share of the rows kept (0.1% to all): the scope's resolution, exact dense search over its rows against
FAISS Flat over all rows, BM25 with a weight mask against BM25 unmasked; once per index, the scan of chunks.jsonl
for its documents (local_rag/bench/scope.py says how the synthetic rows are made).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from local_rag.bench.environment import describe_machine
from local_rag.bench.scope import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=1_000_000, help="chunks of the collection")
    parser.add_argument("--bm25-rows", type=int, default=200_000, help="chunks of its BM25 index (the first ones)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/local-rag-bench-scope"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    figures = run(args.rows, min(args.bm25_rows, args.rows), args.work, args.repeat)
    figures["wall_s"] = round(time.perf_counter() - started, 1)
    figures["machine"] = describe_machine()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in figures.items() if k != "machine"}, indent=2))


if __name__ == "__main__":
    main()

"""local-rag side by side with a LlamaIndex pipeline on the same models, corpus and MTRAG conversations
(`local_rag.bench.peer`, which says what each row runs and what differs between the sides).

Run it with the benchmark-only environment (LlamaIndex is not a dependency of local-rag):

    bash scripts/peer_env.sh
    flock /tmp/cpu-heavy.lock .venv-peer/bin/python scripts/bench_peer.py --profile cpu-qwen --tasks 10

Writes docs/benchmarks/peer.{json,md}.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.peer import ROWS, bench_peer

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="cpu-test", help="cpu-test (SmolLM2, smoke) or cpu-qwen (the figures)")
    parser.add_argument("--domain", default="govt")
    parser.add_argument("--corpus", type=Path, help="default: the MTRAG pool of --domain")
    parser.add_argument("--tasks", type=int, default=10, help="measured tasks (one more is the warm-up)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", default="peer,ours,ours-rewrite", help=f"comma-separated, from {', '.join(ROWS)}")
    parser.add_argument("--lean-passages", type=int, default=3, help="passages in the prompt of the ours-lean row")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks")
    args = parser.parse_args()
    rows_wanted = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = [r for r in rows_wanted if r not in ROWS]
    if unknown or not any(r.startswith("peer") for r in rows_wanted):
        parser.error(f"--rows: unknown {unknown or 'none'}, peer rows {[r for r in rows_wanted if r.startswith('peer')]} "
                     f"(valid: {', '.join(ROWS)}; at least one peer row)")
    print(bench_peer(args, rows_wanted, ROOT / "models"))


if __name__ == "__main__":
    main()

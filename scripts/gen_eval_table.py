"""Side-by-side table of the MTRAG generation runs, and their shareable files (`local_rag.evaluation.generation.table`).

After `bash scripts/gen_eval_figures.sh`, this prints the Markdown table of docs/evaluation.md (and, for Task C runs,
how often retrieval put a gold passage among the answer's contexts) and copies each run's scores and answers (the
MTRAG task and passage texts left out) to `docs/benchmarks/gen-eval/<run>/`:

    .venv/bin/python scripts/gen_eval_table.py [--runs runs/gen-reference-cpu-qwen-answer ...] [--no-copy]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.evaluation.generation.table import DEFAULT_RUNS, print_table

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="*", default=DEFAULT_RUNS)
    parser.add_argument("--dest", type=Path, default=ROOT / "docs" / "benchmarks" / "gen-eval")
    parser.add_argument("--no-copy", action="store_true")
    parser.add_argument("--tasks", type=Path, default=None, help="the MTRAG generation tasks (gold passages of the Task C line)")
    args = parser.parse_args()
    print_table(args.runs, args.dest, not args.no_copy, args.tasks)


if __name__ == "__main__":
    main()

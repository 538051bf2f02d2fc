"""Carry unfinished `local-rag eval generation` runs across machines, without MTRAG texts in the repository
(`local_rag.evaluation.generation.checkpoint`): `save` writes each run's answers, context ids and metrics to
``docs/benchmarks/gen-eval/<run>/answers.jsonl``; `restore` rebuilds the run folders from them, the MTRAG task file
and the ``mtrag-<domain>`` indexes.

    .venv/bin/python scripts/gen_eval_checkpoint.py save      # before the machine goes away
    .venv/bin/python scripts/gen_eval_checkpoint.py restore   # on the fresh checkout, after building the indexes
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.evaluation.generation.checkpoint import RAG_RUNS, restore_runs, save_runs

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["save", "restore"])
    parser.add_argument("--runs", nargs="*", default=RAG_RUNS)
    parser.add_argument("--dest", type=Path, default=ROOT / "docs" / "benchmarks" / "gen-eval",
                        help="where the answers.jsonl files go")
    parser.add_argument("--tasks", type=Path, default=None, help="the MTRAG generation tasks (restore)")
    parser.add_argument("--indexes", type=Path, default=ROOT / "indexes")
    parser.add_argument("--index-prefix", default="mtrag-")
    args = parser.parse_args()
    if args.action == "save":
        save_runs(ROOT, args.runs, args.dest)
    else:
        restore_runs(ROOT, args.runs, args.dest, args.tasks, args.indexes, args.index_prefix)


if __name__ == "__main__":
    main()

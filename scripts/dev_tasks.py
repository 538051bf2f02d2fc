"""Write the MTRAG generation tasks that are NOT in the 120-task evaluation subset, for prompt development.

Prompts are tuned on these tasks and scored on the evaluation subset (`local-rag eval generation --limit 120`), so
a prompt change is never chosen on the tasks its figures are reported on:

    python scripts/dev_tasks.py                      # -> runs/dev-tasks.jsonl (722 tasks)
    local-rag eval generation --setting reference --profile cpu-qwen --tasks runs/dev-tasks.jsonl --limit 30 \
        --no-llm-judges --no-charts --out runs/dev-answer
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    from local_rag.evaluation.generation.runner import stratified_subset
    from local_rag.mtrag import default_mtrag_dir, load_generation_tasks

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=Path, default=default_mtrag_dir() / "generation_tasks" / "mtrag_tasks.jsonl")
    parser.add_argument("--held-out", type=int, default=120, help="size of the evaluation subset to leave out")
    parser.add_argument("--out", type=Path, default=Path("runs") / "dev-tasks.jsonl")
    args = parser.parse_args()
    tasks = load_generation_tasks(args.tasks)
    held = {t["task_id"] for t in stratified_subset(tasks, args.held_out)}
    dev = [t for t in tasks if t["task_id"] not in held]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        for task in dev:
            fh.write(json.dumps(task, ensure_ascii=False) + "\n")
    print(f"{len(dev)} of {len(tasks)} tasks (the {len(held)} of the evaluation subset left out) -> {args.out}")


if __name__ == "__main__":
    main()

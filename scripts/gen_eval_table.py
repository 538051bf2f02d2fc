"""Side-by-side table of the MTRAG generation runs (issue 5 figures), and their shareable files.

After `bash scripts/gen_eval_figures.sh`, this prints the Markdown table of docs/evaluation.md (and, for Task C runs,
how often retrieval put a gold passage among the answer's contexts) and copies each
run's scores (`scores.json`, `scores.md`, charts) and answers (`answers.jsonl` from `gen_eval_checkpoint.save`: the
answers, context ids and metrics, with the MTRAG task and passage texts left out) to `docs/benchmarks/gen-eval/<run>/`:

    .venv/bin/python scripts/gen_eval_table.py [--runs runs/gen-reference-cpu-qwen-answer ...] [--no-copy]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from local_rag.cli.evaluate import default_mtrag_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_eval_checkpoint import save  # noqa: E402  (answers.jsonl: the run's answers without MTRAG texts)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RUNS = [f"runs/gen-{setting}-cpu-qwen-{prompt}" for setting in ("reference", "rag")
                for prompt in ("answer", "answer_plain")]
COLUMNS = [("RB_alg", "RB_agg_idk"), ("RL_F", "RL_F_idk"), ("RB_llm", "RB_llm_idk"), ("**HM**", "final"),
           ("ROUGE-L", "RougeL_stemFalse")]


def fmt(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "n/a"


def row(run: Path) -> str | None:
    scores_file = run / "scores.json"
    if not scores_file.exists():
        return None
    scores = json.loads(scores_file.read_text(encoding="utf-8"))
    overall, info = scores["overall"], scores["info"]
    setting = "B (gold passages)" if info.get("setting") == "reference" else "C (retrieved)"
    prompt = info.get("prompt") or run.name.rsplit("-", 1)[-1]  # runs scored before the prompt was recorded
    cells = [setting, f"`{prompt}`", str(overall["tasks"])]
    cells += [fmt(overall.get(key)) for _, key in COLUMNS]
    cells += [fmt(scores.get("idk_rate_unanswerable")), fmt(scores.get("idk_rate_answerable")),
              f"{fmt(overall.get('citation_validity'))} of {overall['citations']}" if overall.get("citations")
              else "no citations"]
    return "| " + " | ".join(cells) + " |"


def gold_found(run: Path, gold: dict[str, set[str]]) -> str | None:
    """Task C: of the scored tasks that have gold passages (answerable, partial), how many got at least one of them
    among the retrieved contexts, as ``"hits of tasks (rate)"``; None for a run that is not scored or not ``rag``."""
    scores_file, scored = run / "scores.json", run / "scored.jsonl"
    if not scores_file.exists() or not scored.exists():
        return None
    if json.loads(scores_file.read_text(encoding="utf-8"))["info"].get("setting") != "rag":
        return None
    hits = tasks = 0
    for line in scored.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        wanted = gold.get(str(record["task_id"]))
        if wanted:
            tasks += 1
            hits += any(str(c.get("document_id")) in wanted for c in record.get("contexts") or [])
    return f"{hits} of {tasks} ({hits / tasks:.3f})" if tasks else "no task with gold passages"


def load_gold(tasks_file: Path) -> dict[str, set[str]]:
    """Task id -> the document ids of its gold contexts (empty for UNANSWERABLE and CONVERSATIONAL tasks)."""
    if not tasks_file.exists():
        return {}
    gold = {}
    for line in tasks_file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            task = json.loads(line)
            gold[str(task["task_id"])] = {str(c["document_id"]) for c in task.get("contexts") or []}
    return gold


def copy(run: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for path in [run / "scores.json", run / "scores.md", *sorted(run.glob("scores_by_*.png"))]:
        if path.exists():
            shutil.copy2(path, dest / path.name)
    save(run, dest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", nargs="*", default=DEFAULT_RUNS)
    parser.add_argument("--dest", type=Path, default=ROOT / "docs" / "benchmarks" / "gen-eval")
    parser.add_argument("--no-copy", action="store_true")
    parser.add_argument("--tasks", type=Path, default=None, help="the MTRAG generation tasks (gold passages of the Task C line)")
    args = parser.parse_args()
    header = ["Task", "prompt", "tasks", *(name for name, _ in COLUMNS), "IDK on UNANSWERABLE",
              "IDK on answerable", "citation validity"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name in args.runs:
        run = Path(name)
        line = row(run)
        if line is None:
            print(f"<!-- {run}: no scores.json yet -->")
            continue
        print(line)
        if not args.no_copy:
            copy(run, args.dest / run.name)
    gold = load_gold(args.tasks or default_mtrag_dir() / "generation_tasks" / "mtrag_tasks.jsonl")
    for name in args.runs:
        found = gold_found(Path(name), gold) if gold else None
        if found:
            print(f"\n{Path(name).name}: a gold passage among the contexts in {found} tasks with gold passages")


if __name__ == "__main__":
    main()

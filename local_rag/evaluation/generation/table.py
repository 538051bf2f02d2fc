"""Side-by-side table of the MTRAG generation runs (issue 5 figures), and their shareable files
(``scripts/gen_eval_table.py``).

After `bash scripts/gen_eval_figures.sh`, this prints the Markdown table of docs/evaluation.md (and, for Task C runs,
how often retrieval put a gold passage among the answer's contexts) and copies each
run's scores (`scores.json`, `scores.md`, charts) and answers (`answers.jsonl` from `gen_eval_checkpoint.save`: the
answers, context ids and metrics, with the MTRAG task and passage texts left out) to `docs/benchmarks/gen-eval/<run>/`:

    .venv/bin/python scripts/gen_eval_table.py [--runs runs/gen-reference-cpu-qwen-answer ...] [--no-copy]
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from local_rag.evaluation.generation.checkpoint import save  # answers.jsonl: the run's answers without MTRAG texts
from local_rag.evaluation.generation.report import group_stats
from local_rag.mtrag import default_mtrag_dir, load_generation_tasks, read_jsonl

DEFAULT_RUNS = [f"runs/gen-{setting}-cpu-qwen-{prompt}" for setting in ("reference", "rag")
                for prompt in ("answer", "answer_plain")]
COLUMNS = [("RB_alg", "RB_agg_idk"), ("RL_F", "RL_F_idk"), ("RB_llm", "RB_llm_idk"), ("**HM**", "final"),
           ("ROUGE-L", "RougeL_stemFalse")]


def fmt(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "n/a"


def load_scores(run: Path) -> dict[str, Any] | None:
    scores_file = run / "scores.json"
    return json.loads(scores_file.read_text(encoding="utf-8")) if scores_file.exists() else None


def row(run: Path, scores: dict[str, Any]) -> str:
    overall, info = scores["overall"], scores["info"]
    setting = "B (gold passages)" if info.get("setting") == "reference" else "C (retrieved)"
    prompt = info.get("prompt") or run.name.rsplit("-", 1)[-1]  # runs scored before the prompt was recorded
    cells = [setting, f"`{prompt}`", str(overall["tasks"])]
    cells += [fmt(overall.get(key)) for _, key in COLUMNS]
    cells += [fmt(scores.get("idk_rate_unanswerable")), fmt(scores.get("idk_rate_answerable")),
              f"{fmt(overall.get('citation_validity'))} of {overall['citations']}" if overall.get("citations")
              else "no citations"]
    return "| " + " | ".join(cells) + " |"


def gold_found(records: list[dict[str, Any]], gold: dict[str, set[str]]) -> str:
    """Task C: of the tasks that have gold passages (answerable, partial), how many got at least one of them among
    their retrieved contexts, as ``"hits of tasks (rate)"``, and the harmonic mean (conditioned, as in the table)
    of those tasks and of the rest: what retrieval costs the answers."""
    wanted = [(gold[str(r["task_id"])], r) for r in records if gold.get(str(r["task_id"]))]
    if not wanted:
        return "no task with gold passages"
    found = [any(str(c.get("document_id")) in ids for c in r.get("contexts") or []) for ids, r in wanted]
    hits, n = sum(found), len(wanted)
    groups = [[r for (_, r), f in zip(wanted, found, strict=True) if f == want] for want in (True, False)]
    hm = [fmt(group_stats(g)["final"]) if g else "n/a" for g in groups]
    return f"{hits} of {n} ({hits / n:.3f}); harmonic mean {hm[0]} on those tasks, {hm[1]} on the others"


def load_gold(tasks_file: Path) -> dict[str, set[str]]:
    """Task id -> the document ids of its gold contexts (empty for UNANSWERABLE and CONVERSATIONAL tasks); empty
    when the task file is not there."""
    if not tasks_file.exists():
        return {}
    return {str(t["task_id"]): {str(c["document_id"]) for c in t.get("contexts") or []}
            for t in load_generation_tasks(tasks_file)}


def copy(run: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for path in [run / "scores.json", run / "scores.md", *sorted(run.glob("scores_by_*.png"))]:
        if path.exists():
            shutil.copy2(path, dest / path.name)
    save(run, dest)


def print_table(runs: list[str], dest: Path, copy_files: bool = True, tasks: Path | None = None) -> None:
    """Print the Markdown table of ``runs`` (and the gold-passage line of each Task C run); copy each run's
    shareable files to ``dest/<run>/`` when ``copy_files``."""
    header = ["Task", "prompt", "tasks", *(name for name, _ in COLUMNS), "IDK on UNANSWERABLE",
              "IDK on answerable", "citation validity"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    gold = load_gold(tasks or default_mtrag_dir() / "generation_tasks" / "mtrag_tasks.jsonl")
    found = []
    for name in runs:
        run = Path(name)
        scores = load_scores(run)
        if scores is None:
            print(f"<!-- {run}: no scores.json yet -->")
            continue
        print(row(run, scores))
        if gold and scores["info"].get("setting") == "rag":
            found.append(f"{run.name}: of the tasks with gold passages, a gold passage among the contexts in "
                         f"{gold_found(read_jsonl(run / 'scored.jsonl'), gold)}")
        if copy_files:
            copy(run, dest / run.name)
    for line in found:
        print(f"\n{line}")


"""Is the dense cosine of the retrieved passages a usable evidence gate (decline when retrieval found nothing close)?

In Task C (docs/evaluation.md) the 1.5B generator answers almost every UNANSWERABLE task from passages that only look
related. This measures, on MTRAG generation tasks, the signal a gate would use: the best dense cosine (all-MiniLM-L6-v2
in the cpu-qwen profile) among the hits the pipeline retrieves for the turn, with its LLM rewrites. For each threshold
it gives the share of UNANSWERABLE tasks that would be declined (wanted) and of ANSWERABLE/PARTIAL tasks (lost).
``pipeline.min_dense_score`` is this gate: it drops the hits below the threshold, and a turn with none left gets the
IDK answer. A hit that only bm25 found has no dense score and always passes, so the script also counts the tasks where
every retrieved hit has one (where the setting acts exactly as the turn gate measured here).

    python scripts/dev_tasks.py                      # runs/dev-tasks.jsonl: the tasks outside the 120-task subset
    .venv/bin/python scripts/evidence_gate.py        # all dev UNANSWERABLE tasks + as many ANSWERABLE/PARTIAL ones
    .venv/bin/python scripts/evidence_gate.py --tasks <mtrag_tasks.jsonl> --limit 120 --name subset   # held out

Writes docs/benchmarks/evidence-gate-<name>.{json,md,png} (task ids and figures only, no MTRAG text). The rewrites
are cached by task id in ``--llm-cache``, so a second run makes no LLM call.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

THRESHOLDS = [round(0.20 + 0.05 * i, 2) for i in range(13)]  # 0.20 .. 0.80
DECLINE = "UNANSWERABLE"
ANSWERED = ("ANSWERABLE", "PARTIAL")


def pick(tasks: list[dict[str, Any]], limit: int | None, per_class: int | None = None) -> list[dict[str, Any]]:
    """Every UNANSWERABLE task (or ``per_class`` of them) and as many ANSWERABLE/PARTIAL ones, stratified by domain;
    or, with ``limit``, the stratified subset of that size."""
    from local_rag.evaluation.generation.official import answerability
    from local_rag.evaluation.generation.runner import stratified_subset

    if limit:
        return [t for t in stratified_subset(tasks, limit) if answerability(t) in (DECLINE, *ANSWERED)]
    unanswerable = [t for t in tasks if answerability(t) == DECLINE]
    if per_class and per_class < len(unanswerable):
        unanswerable = stratified_subset(unanswerable, per_class)
    answered = [t for t in tasks if answerability(t) in ANSWERED]
    return unanswerable + stratified_subset(answered, len(unanswerable))


def signals(tasks: list[dict[str, Any]], profile: str, llm_cache: Path, judge: bool = False) -> list[dict[str, Any]]:
    """Per task: its class, domain, the best dense cosine of all retrieved hits and of the passages given; with
    ``judge``, the LLM relevance judge's scores (0/1/2) of the passages given (one call of ``generate.passages``)."""
    from tqdm import tqdm

    from local_rag.evaluation.generation.official import answerability
    from local_rag.llm import load_llm
    from local_rag.llm.judge import RelevanceJudge
    from local_rag.llm.pipeline import LLMQueries, question_of
    from local_rag.mtrag import parse_conversation, task_domain
    from local_rag.pipeline import Pipeline, dense_score
    from local_rag.settings import load_settings

    settings = load_settings(profile)
    llm = load_llm(settings.llm, settings.models_dir)
    rewrites = LLMQueries(llm, settings, cache=llm_cache)
    passages = settings.generate.passages
    judger = RelevanceJudge(llm, settings.judge.model_copy(update={"batch_size": passages}))
    pipelines: dict[str, Pipeline] = {}
    rows = []
    for task in tqdm(tasks, desc="evidence", unit="task", dynamic_ncols=True):
        domain = task_domain(task)
        if domain not in pipelines:
            pipelines[domain] = Pipeline(settings.model_copy(update={"index": f"mtrag-{domain}"}), llm=llm,
                                         rewrites=rewrites)
        conversation = parse_conversation(task.get("input"), where=f"task {task.get('task_id')}")
        conversation.id = str(task["task_id"])
        pipeline = pipelines[domain]
        queries = pipeline.queries(conversation)
        hits = pipeline.retriever.search(queries, top_k=pipeline.depth)
        dense = [dense_score(h) for h in hits]
        known = [d for d in dense if d is not None]
        given = [d for d in dense[:passages] if d is not None]
        rows.append({"task_id": task["task_id"], "answerability": answerability(task), "domain": domain,
                     "best_dense": max(known, default=None), "best_dense_given": max(given, default=None),
                     "hits": len(hits), "hits_without_dense": len(dense) - len(known)})
        if judge:
            judged = judger.judge(question_of(queries), hits[:passages])
            rows[-1]["judge_scores"] = [j.score for j in judged]
    return rows


def auc(positive: list[float], negative: list[float]) -> float | None:
    """P(a random UNANSWERABLE task scores below a random answered one): 1 = a perfect gate, 0.5 = chance."""
    if not positive or not negative:
        return None
    wins = sum((p < n) + 0.5 * (p == n) for p in positive for n in negative)
    return wins / (len(positive) * len(negative))


def share_below(values: list[float], threshold: float) -> float:
    """The share of ``values`` below ``threshold``: the tasks a gate at that threshold declines."""
    return sum(v < threshold for v in values) / max(len(values), 1)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def value(r: dict[str, Any]) -> float:
        return r["best_dense"] if r["best_dense"] is not None else 0.0  # no dense hit at all: nothing close

    unans = [value(r) for r in rows if r["answerability"] == DECLINE]
    answered = [value(r) for r in rows if r["answerability"] in ANSWERED]
    per_hit = [r for r in rows if r["hits_without_dense"] == 0]
    return {
        "tasks": {"UNANSWERABLE": len(unans), "ANSWERABLE/PARTIAL": len(answered)},
        "auc": auc(unans, answered),
        "mean_best_dense": {"UNANSWERABLE": sum(unans) / max(len(unans), 1),
                            "ANSWERABLE/PARTIAL": sum(answered) / max(len(answered), 1)},
        "turn_gate": [{"threshold": t, "declined_unanswerable": share_below(unans, t),
                       "declined_answered": share_below(answered, t)} for t in THRESHOLDS],
        "tasks_where_every_hit_has_a_dense_score": len(per_hit),
    } | (judge_summary(rows) if all("judge_scores" in r for r in rows) else {})


def judge_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The gate "decline unless the LLM judge scores a given passage at least N" for N = 1, 2."""
    def best(r: dict[str, Any]) -> int:
        return max(r["judge_scores"], default=0)

    unans = [best(r) for r in rows if r["answerability"] == DECLINE]
    answered = [best(r) for r in rows if r["answerability"] in ANSWERED]
    return {"judge_auc": auc(unans, answered),
            "judge_gate": [{"min_score": m, "declined_unanswerable": share_below(unans, m),
                            "declined_answered": share_below(answered, m)} for m in (1, 2)]}


def markdown(summary: dict[str, Any], name: str, command: str) -> str:
    n = summary["tasks"]
    means = summary["mean_best_dense"]
    lines = [f"## Evidence gate signal: best dense cosine of the retrieved hits ({name})", "",
             f"Command: `{command}`", "",
             f"- tasks: {n['UNANSWERABLE']} UNANSWERABLE, {n['ANSWERABLE/PARTIAL']} ANSWERABLE/PARTIAL",
             f"- AUC (UNANSWERABLE below answered): {summary['auc']:.3f} (0.5 = chance, 1 = a perfect gate)",
             f"- mean best cosine: UNANSWERABLE {means['UNANSWERABLE']:.3f}, ANSWERABLE/PARTIAL "
             f"{means['ANSWERABLE/PARTIAL']:.3f}",
             f"- tasks where every retrieved hit has a dense score (where `pipeline.min_dense_score` is exactly this "
             f"gate): {summary['tasks_where_every_hit_has_a_dense_score']}", "",
             "| decline below | UNANSWERABLE declined (wanted) | ANSWERABLE/PARTIAL declined (lost) |",
             "|---|---|---|"]
    lines += [f"| {g['threshold']:.2f} | {g['declined_unanswerable']:.3f} | {g['declined_answered']:.3f} |"
              for g in summary["turn_gate"]]
    if "judge_gate" in summary:
        lines += ["", f"LLM relevance judge on the passages given (AUC {summary['judge_auc']:.3f}):", "",
                  "| decline unless a passage is judged at least | UNANSWERABLE declined (wanted) | "
                  "ANSWERABLE/PARTIAL declined (lost) |", "|---|---|---|"]
        lines += [f"| {g['min_score']} | {g['declined_unanswerable']:.3f} | {g['declined_answered']:.3f} |"
                  for g in summary["judge_gate"]]
    return "\n".join(lines) + "\n"


def chart(summary: dict[str, Any], path: Path, name: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gates = summary["turn_gate"]
    x = [g["threshold"] for g in gates]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(x, [g["declined_unanswerable"] for g in gates], marker="o", label="UNANSWERABLE declined (wanted)")
    ax.plot(x, [g["declined_answered"] for g in gates], marker="s", label="ANSWERABLE/PARTIAL declined (lost)")
    ax.set_xlabel("decline when the best dense cosine (MiniLM) is below")
    ax.set_ylabel("share of tasks")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Evidence gate on {name} (AUC {summary['auc']:.2f})")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    from local_rag.mtrag import load_generation_tasks

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=Path, default=ROOT / "runs" / "dev-tasks.jsonl")
    parser.add_argument("--limit", type=int, default=None, help="a stratified subset of N tasks instead")
    parser.add_argument("--per-class", type=int, default=None, help="at most N UNANSWERABLE tasks (and as many others)")
    parser.add_argument("--judge", action="store_true", help="also the LLM relevance judge (one call a task)")
    parser.add_argument("--name", default="dev")
    parser.add_argument("--profile", default="cpu-qwen")
    parser.add_argument("--llm-cache", type=Path, default=ROOT / "runs" / "llm-cache.jsonl")
    parser.add_argument("--dest", type=Path, default=ROOT / "docs" / "benchmarks")
    args = parser.parse_args()
    if not args.tasks.exists():
        sys.exit(f"{args.tasks} is missing: run `python scripts/dev_tasks.py` first (or pass --tasks)")
    tasks = pick(load_generation_tasks(args.tasks), args.limit, args.per_class)
    rows = signals(tasks, args.profile, args.llm_cache, args.judge)
    summary = summarize(rows)
    command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]])
    base = args.dest / f"evidence-gate-{args.name}"
    base.parent.mkdir(parents=True, exist_ok=True)
    base.with_suffix(".json").write_text(json.dumps({"summary": summary, "tasks": rows}, indent=1) + "\n")
    base.with_suffix(".md").write_text(markdown(summary, args.name, command))
    chart(summary, base.with_suffix(".png"), args.name)
    print(markdown(summary, args.name, command))


if __name__ == "__main__":
    main()

"""Issue 24, session 27: the IDK gate's threshold (``generate.idk_gate``), learned on the MTRAG train split.

The scores are the pipeline's own: ``eval generation --profile cpu`` with ``generate.idk_gate: 0`` (score and record,
never decline) and ``generate.max_tokens: 16`` (the answer is not wanted) records each task's ``idk_score`` (gate.sh).
The threshold is set so that at most ``--budget`` of the train sample's answerable turns (ANSWERABLE + PARTIAL) score
above it: the gate declines a turn whose score is above.

- train figures: 5-fold cross-validation grouped by conversation (each fold's threshold from the other folds);
- test figures: the threshold applied unchanged to the test subset (52 tasks: its 10 UNANSWERABLE, 2 CONVERSATIONAL
  and 40 answerable) and to the 20 judged Task C test tasks, for which it writes the decisions that ``eval recheck
  --decisions`` reads: the gate alone, and after the decider (``--decider``: its kind stands when not ``answer``);
- MTRAG-UN development tasks: session 26's scores (``pidk.py --method steps``: whole passages, compressed against the
  last turn; not the pipeline's prompts), for the direction only.

    .venv/bin/python docs/benchmarks/decider-pidk/threshold.py
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from local_rag.evaluation.generation.official import answerability
from local_rag.mtrag import read_jsonl
from local_rag.subset import conversation_of
from local_rag.train.draft import auc as draft_auc

HERE = Path(__file__).parent
ANSWERABLE = ("ANSWERABLE", "PARTIAL")
CLASSES = (("UNANSWERABLE", ("UNANSWERABLE",)), ("answerable", ANSWERABLE), ("UNDERSPECIFIED", ("UNDERSPECIFIED",)),
           ("CONVERSATIONAL", ("CONVERSATIONAL",)))


def scores(path: Path, gold: dict[str, str]) -> list[dict]:
    """``{task_id, gold, score}`` from a run's answers.jsonl (committed) or predictions.jsonl (runs/)."""
    out = []
    for row in read_jsonl(path):
        prediction = row.get("prediction") or (row.get("predictions") or [{}])[0]
        if prediction.get("idk_score") is not None:
            out.append({"task_id": row["task_id"], "gold": gold[row["task_id"]], "score": float(prediction["idk_score"])})
    return out


def threshold(values: list[float], budget: float) -> float:
    """The lowest cut with at most ``budget`` of ``values`` above it."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.floor((1 - budget) * len(ordered)))]


def rates(rows: list[dict], cut_of) -> dict[str, str]:
    out = {}
    for name, golds in CLASSES:
        part = [r for r in rows if r["gold"] in golds]
        if part:
            n = sum(r["score"] > cut_of(r) for r in part)
            out[name] = f"{n}/{len(part)} ({n / len(part):.3f})"
    return out


def auc(rows: list[dict]) -> float | None:
    """ROC AUC of the score, UNANSWERABLE against ANSWERABLE + PARTIAL (the draft gate's `auc`)."""
    part = [r for r in rows if r["gold"] == "UNANSWERABLE" or r["gold"] in ANSWERABLE]
    return draft_auc(np.array([r["score"] for r in part]), np.array([r["gold"] == "UNANSWERABLE" for r in part], dtype=int))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", type=Path, default=HERE / "score-train-cpu" / "answers.jsonl")
    ap.add_argument("--test", type=Path, default=HERE / "score-test-cpu" / "answers.jsonl")
    ap.add_argument("--test20", type=Path, default=HERE / "score-test20-cpu" / "answers.jsonl")
    ap.add_argument("--mtragun", type=Path, default=HERE / "pidk-cpu.jsonl")
    ap.add_argument("--decider", type=Path, default=HERE.parent / "decider-ambiguity" / "predictions.jsonl")
    ap.add_argument("--mtrag", type=Path, default=Path("../shared/mtrag"))
    ap.add_argument("--budget", type=float, default=0.10)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=HERE / "gate")
    args = ap.parse_args()

    gold = {t["task_id"]: answerability(t) for t in read_jsonl(args.mtrag / "generation_tasks" / "mtrag_tasks.jsonl")}
    train, test = scores(args.train, gold), scores(args.test, gold)
    lines = [f"the gate declines a turn whose mean log P(IDK) is above a threshold set on the MTRAG train sample's "
             f"answerable turns (at most {args.budget:.0%} above it); {len(train)} train tasks, {len(test)} test tasks"]

    conversations = sorted({conversation_of(r["task_id"]) for r in train})
    fold_of = {c: i % args.folds for i, c in enumerate(np.random.default_rng(0).permutation(conversations))}
    cuts = {}
    for k in range(args.folds):
        cuts[k] = threshold([r["score"] for r in train if fold_of[conversation_of(r["task_id"])] != k and r["gold"] in ANSWERABLE], args.budget)
    cv = rates(train, lambda r: cuts[fold_of[conversation_of(r["task_id"])]])
    lines.append(f"  train, {args.folds}-fold CV by conversation: declined {cv}; P(IDK) AUC {auc(train)}")

    cut = threshold([r["score"] for r in train if r["gold"] in ANSWERABLE], args.budget)
    report = {"budget": args.budget, "threshold": cut, "train_cv": cv, "train_auc": auc(train),
              "train": rates(train, lambda r: cut), "test_subset": rates(test, lambda r: cut), "test_subset_auc": auc(test)}
    lines.append(f"  threshold from the whole train sample: {cut} (generate.idk_gate); the train sample itself: {report['train']}")
    lines.append(f"  MTRAG test subset: declined {report['test_subset']}; P(IDK) AUC {auc(test)}")
    if args.mtragun.exists():
        un = [r for r in read_jsonl(args.mtragun) if r["set"] == "un"]
        report["mtragun_s26"] = rates(un, lambda r: cut)
        lines.append(f"  MTRAG-UN dev (session 26's scores, not the pipeline's prompts): declined {report['mtragun_s26']}")
    if args.test20.exists():
        run = scores(args.test20, gold)
        report["test20"] = rates(run, lambda r: cut)
        lines.append(f"  the {len(run)} judged Task C test tasks: declined {report['test20']}; P(IDK) AUC {auc(run)}")
        decider = {r["task_id"]: r.get("kind", "answer") for r in read_jsonl(args.decider)} if args.decider.exists() else {}
        args.out.mkdir(parents=True, exist_ok=True)
        for name, first in (("decisions-gate", {}), ("decisions-decider-gate", decider)):
            with (args.out / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
                for r in run:
                    kind = first.get(r["task_id"], "answer")
                    if kind == "answer" and r["score"] > cut:
                        kind = "decline"
                    fh.write(json.dumps({"task_id": r["task_id"], "kind": kind, "idk_score": r["score"], "gold": r["gold"]}) + "\n")
        lines.append(f"  decisions for eval recheck: {args.out}/decisions-gate.jsonl, decisions-decider-gate.jsonl")
    text = "\n".join(lines)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.txt").write_text(text + "\n", encoding="utf-8")
    (args.out / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

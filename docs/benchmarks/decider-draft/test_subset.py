"""The fixed test-split subset of run.sh: every test task that is not ANSWERABLE or PARTIAL (UNANSWERABLE,
CONVERSATIONAL), and the first N that are, in sha1 order of their task id (`local_rag.subset.pick`). ``--split train``:
the same for the train split (session 27, docs/benchmarks/decider-pidk/gate.sh)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from local_rag.evaluation.splits import load_split
from local_rag.subset import pick


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mtrag", type=Path, required=True)
    ap.add_argument("--answerable", type=int, default=40)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--split", choices=["train", "test"], default="test")
    args = ap.parse_args()
    test = load_split(args.mtrag, args.split)
    rows = [json.loads(line) for line in (args.mtrag / "generation_tasks" / "mtrag_tasks.jsonl").open()]
    rows = pick(rows, conversations=test)
    answerable = [r for r in rows if str(r["answerability"]).strip("[]'\"") in ("ANSWERABLE", "PARTIAL")]
    other = [r for r in rows if r not in answerable]
    keep = other + answerable[: args.answerable]
    args.out.write_text("".join(json.dumps(r) + "\n" for r in keep))
    print(f"{len(keep)} {args.split} tasks ({len(other)} not answerable or partial) -> {args.out}")


if __name__ == "__main__":
    main()

"""Issue 26, session 36: is a fresh machine's Task C run of the default the committed one? Compares the answers and
context ids of a new `eval generation` run (its predictions.jsonl) with a committed checkpoint (answers.jsonl).

    .venv/bin/local-rag eval generation --setting rag --profile cpu --split test --limit 20 --no-llm-judges \
        --no-charts --out runs/i26/s36/gen-s36-default
    .venv/bin/python docs/benchmarks/levers/s36/same_answers.py runs/i26/s36/gen-s36-default/predictions.jsonl \
        docs/benchmarks/levers/s33/taskc/gen-s33-k20/answers.jsonl
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    new_file, committed_file = sys.argv[1:3]
    new = {r["task_id"]: r for r in map(json.loads, open(new_file, encoding="utf-8"))}
    old = {r["task_id"]: r for r in map(json.loads, open(committed_file, encoding="utf-8"))}
    common = sorted(set(new) & set(old))
    same_text = [t for t in common if new[t]["predictions"][0]["text"] == old[t]["text"]]
    same_ctx = [t for t in common if [c["document_id"] for c in new[t]["contexts"]]
                == [c["document_id"] for c in old[t]["contexts"]]]
    print(f"{len(common)} tasks in both; answers word for word the same: {len(same_text)}; "
          f"same passages in the same order: {len(same_ctx)}")
    for t in common:
        if t not in same_text:
            print(f"- {t}\n  new: {new[t]['predictions'][0]['text'][:160]}\n  old: {old[t]['text'][:160]}")


if __name__ == "__main__":
    main()

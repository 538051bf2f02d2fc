"""The 'rewrite' mode's reply under a JSON grammar against the reply prefilled up to the query (``rewrite.reply``,
issue 26, session 29): are the rewrites the same, and what does each take to decode? Follow-up turns of the MTRAG
test split, in the fixed order of `local_rag.subset.by_sha1`; the two ways alternate which goes first, and each is
timed by its own decode (the prompt's prefill is shared through the KV cache, so it is left out).

    flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/levers/s29/rewrite_reply.py --tasks 40 \
        --out docs/benchmarks/levers/s29/rewrite-reply.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from local_rag.bench import levers
from local_rag.bench.environment import describe_machine
from local_rag.bench.lever_runs import TASKS
from local_rag.llm import load_llm
from local_rag.llm.rewrite import standalone
from local_rag.mtrag import load_generation_tasks, parse_conversation
from local_rag.settings import load_settings
from local_rag.subset import by_sha1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    settings = load_settings(args.profile)
    llm = load_llm(settings.llm, settings.models_dir)
    tasks = [t for t in by_sha1(levers.split_tasks(load_generation_tasks(TASKS), "test"))
             if len(parse_conversation(t["input"]).user_turns) >= 2][: args.tasks]
    rows = []
    started = time.time()
    for i, task in enumerate(tasks):
        conversation = parse_conversation(task["input"], where=str(task["task_id"]))
        row: dict[str, object] = {"task_id": task["task_id"]}
        for reply in (("grammar", "prefix") if i % 2 == 0 else ("prefix", "grammar")):
            config = settings.rewrite.model_copy(update={"reply": reply})
            before = len(llm.calls)
            query = standalone(conversation, llm, config)[0].text
            call = llm.calls[before]
            row[reply] = {"query": query, "completion_tokens": call.completion_tokens, "decode_s": round(call.decode_s, 3),
                          "prefill_s": round(call.prefill_s, 3)}
        rows.append(row)
        print(f"[{i + 1}/{len(tasks)}] same={row['grammar']['query'] == row['prefix']['query']}", flush=True)  # type: ignore[index]
    same = [r for r in rows if r["grammar"]["query"] == r["prefix"]["query"]]  # type: ignore[index]
    summary = {
        "tasks": len(rows), "same_query": len(same),
        **{f"{m}_decode_s_mean": round(statistics.mean(r[m]["decode_s"] for r in rows), 3) for m in ("grammar", "prefix")},  # type: ignore[index]
        **{f"{m}_tokens_mean": round(statistics.mean(r[m]["completion_tokens"] for r in rows), 2) for m in ("grammar", "prefix")},  # type: ignore[index]
        "wall_s": round(time.time() - started, 1),
    }
    args.out.write_text(json.dumps({"summary": summary, "machine": describe_machine(), "model": settings.llm.model,
                                    "rows": rows}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

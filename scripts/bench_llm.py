"""Per-stage latency and tokens/s of the LLM stages on MTRAG conversations (no index needed).

    .venv/bin/python scripts/bench_llm.py --profile cpu-qwen --conversations 5 --out docs/bench-llm-qwen1.5b.json

For each of N fixed conversations (turn >= 2, first in sha1(task id) order) it runs every rewrite mode, one
listwise rerank window and one judge batch over the task's gold passages padded with other tasks' passages to
``--passages``. Writes the per-stage means of `local_rag.llm.pipeline.call_stats` (prefill tok/s counts the whole
prompt over the time to the first token, so llama.cpp's prefix cache shows as speed) and the model load time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import time
from pathlib import Path

from local_rag.llm import load_llm
from local_rag.llm.judge import RelevanceJudge
from local_rag.llm.pipeline import call_stats, conversations_by_id
from local_rag.llm.rerank import ListwiseReranker
from local_rag.llm.rewrite import REWRITE_MODES, rewrite
from local_rag.records import Hit
from local_rag.settings import load_settings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="cpu-test")
    ap.add_argument("--model", help="override llm.model")
    ap.add_argument("--conversations", type=int, default=5)
    ap.add_argument("--passages", type=int, default=10)
    ap.add_argument("--mtrag", default=os.environ.get("LOCAL_RAG_MTRAG_DIR", "../shared/mtrag"))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    overrides = {"llm": {"model": args.model}} if args.model else {}
    settings = load_settings(args.profile, overrides=overrides)
    tasks_file = Path(args.mtrag) / "generation_tasks" / "mtrag_tasks.jsonl"
    tasks = {json.loads(line)["task_id"]: json.loads(line) for line in tasks_file.read_text().splitlines() if line}
    conversations = conversations_by_id(tasks_file)
    multi_turn = [t for t in tasks if len(conversations[t].user_turns) >= 2 and tasks[t].get("contexts")]
    chosen = sorted(multi_turn, key=lambda t: hashlib.sha1(t.encode()).hexdigest())[: args.conversations]
    pool = [c for t in sorted(tasks)[:200] for c in tasks[t].get("contexts", [])[:1]]

    started = time.perf_counter()
    llm = load_llm(settings.llm, settings.models_dir)
    load_s = time.perf_counter() - started
    reranker = ListwiseReranker(llm, settings.llm_rerank.model_copy(update={"candidates": args.passages,
                                                                            "window": args.passages}))
    judge = RelevanceJudge(llm, settings.judge)
    for task_id in chosen:
        conversation = conversations[task_id]
        for mode in REWRITE_MODES.names():
            rewrite(conversation, llm, [mode], settings.rewrite)
        gold = tasks[task_id]["contexts"]
        extra = [c for c in pool if c["document_id"] not in {g["document_id"] for g in gold}]
        contexts = (gold + extra)[: args.passages]
        hits = [Hit(c["document_id"], 1.0, i + 1, title=c.get("title", ""), text=c["text"])
                for i, c in enumerate(contexts)]
        question = conversation.last_user_turn
        reranker.rerank(question, hits)
        judge.judge(question, hits[: settings.judge.batch_size])
    result = {
        "model": settings.llm.model,
        "profile": args.profile,
        "conversations": len(chosen),
        "threads": [getattr(llm, "n_threads", None), getattr(llm, "n_threads_batch", None)],
        "n_ctx": llm.n_ctx,
        "load_s": round(load_s, 2),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        "stages": call_stats(llm.calls),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

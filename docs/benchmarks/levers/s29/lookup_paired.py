"""Prompt lookup against plain decoding on the same prompts, side by side (issue 26, session 29): the 12 answer prompts
of the ablation's test turns (the `cpu` default's levers), each decoded by Qwen2.5-Coder-1.5B plainly and with each
lookup variant of `VARIANTS` back to back (the order rotating by turn), all from a cold KV cache, so that the VM's
drift over minutes falls on every side of a turn.

    flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/levers/s29/lookup_paired.py \
        --out docs/benchmarks/levers/s29/lookup-paired.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from local_rag.bench import levers
from local_rag.bench.environment import describe_machine
from local_rag.bench.lever_runs import CONFIGS, TASKS
from local_rag.llm import load_llm
from local_rag.llm.base import LLM, Completion, Message
from local_rag.mtrag import load_generation_tasks, parse_conversation, task_domain
from local_rag.pipeline import Pipeline
from local_rag.settings import deep_merge, load_settings
from local_rag.subset import by_sha1

VARIANTS = {  # llm settings of each lookup variant, beside plain decoding
    "lookup": {"prompt_lookup": 10},  # the session-29 default: 2-grams, else 1-grams
    "lookup-min2": {"prompt_lookup": 10, "prompt_lookup_min_ngram": 2},  # no draft from a single-token match
    "lookup-3-min2": {"prompt_lookup": 10, "prompt_lookup_ngram": 3, "prompt_lookup_min_ngram": 2},
}


class Capture(LLM):
    """The plain LLM, keeping the messages of each ``generate`` call."""

    def __init__(self, llm: LLM) -> None:
        super().__init__()
        self.llm, self.n_ctx, self.max_tokens = llm, llm.n_ctx, llm.max_tokens
        self.prompts: list[list[Message]] = []

    def count_tokens(self, text: str) -> int:
        return self.llm.count_tokens(text)

    def complete(self, messages: list[Message], **kw: Any) -> Completion:
        if kw.get("stage") == "generate":
            self.prompts.append(messages)
        return self.llm.complete(messages, **kw)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    base = deep_merge({"pipeline": {"warm": False}}, CONFIGS["all-nolookup"])
    settings = load_settings("cpu-qwen", overrides=base)
    plain = load_llm(settings.llm, settings.models_dir)
    variants = {"plain": plain}
    for name, llm in VARIANTS.items():
        variants[name] = load_llm(load_settings("cpu-qwen", overrides=deep_merge(base, {"llm": llm})).llm,
                                  settings.models_dir)
    tasks = levers.split_tasks(load_generation_tasks(TASKS), "test")
    chosen = list(dict.fromkeys(t["conversation_id"] for t in by_sha1(tasks)))[:2]
    tasks = levers.conversation_order([t for t in tasks if t["conversation_id"] in chosen])[:12]
    capture = Capture(plain)
    for domain in dict.fromkeys(task_domain(t) for t in tasks):
        s = settings.model_copy(deep=True)
        s.index = f"mtrag-{domain}"
        pipeline = Pipeline(s, llm=capture)
        for t in (t for t in tasks if task_domain(t) == domain):
            pipeline.answer(parse_conversation(t["input"], where=str(t["task_id"])))
    rows = []
    names = list(variants)
    for i, messages in enumerate(capture.prompts):
        row: dict[str, Any] = {"turn": i + 1}
        for name in names[i % len(names):] + names[: i % len(names)]:  # the order rotates by turn
            llm = variants[name]
            llm.forget_prompts()
            done = llm.complete(messages, stage="generate", max_tokens=settings.generate.max_tokens)
            c = done.call
            row[name] = {"completion_tokens": c.completion_tokens, "decode_s": round(c.decode_s, 3),
                         "prefill_s": round(c.prefill_s, 3), "accepted": c.accepted_tokens, "drafted": c.drafted_tokens,
                         "text": done.text}
        rows.append(row)
        print(i + 1, {k: (v["completion_tokens"], v["decode_s"]) for k, v in row.items() if isinstance(v, dict)}, flush=True)

    def rate(r: dict[str, Any]) -> float:
        return (r["completion_tokens"] - 1) / r["decode_s"] if r["decode_s"] else 0.0

    summary: dict[str, Any] = {"turns": len(rows), "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for name in names:
        ratios = [rate(r[name]) / rate(r["plain"]) for r in rows if rate(r["plain"])]
        summary[name] = {
            "tok_s": round(sum(r[name]["completion_tokens"] - 1 for r in rows) / sum(r[name]["decode_s"] for r in rows), 2),
            "decode_s": round(sum(r[name]["decode_s"] for r in rows), 2),
            "same_text_as_plain": sum(r[name]["text"] == r["plain"]["text"] for r in rows),
            "pair_ratio_median": round(statistics.median(ratios), 3), "pair_ratio_min": round(min(ratios), 3),
            "pair_ratio_max": round(max(ratios), 3),
            "accepted_share": round(sum(r[name]["accepted"] for r in rows) / max(1, sum(r[name]["drafted"] for r in rows)), 3),
        }
    args.out.write_text(json.dumps({"summary": summary, "machine": describe_machine(), "rows": rows}, indent=1,
                                   ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

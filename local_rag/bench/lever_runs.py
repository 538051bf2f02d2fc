"""The speed levers of issue 26, measured one at a time and together (docs/benchmarks.md, "Speed levers"):
``local-rag bench-levers standalone|compress|ablation|prefix|profile|table``.

``ablation`` answers the turns of whole test-split conversations in order (so the KV cache sees a real chat) under
each configuration, one JSON line per turn in <out>/<mode>-<profile>-<config>.jsonl; a second run skips the turns
already there (resumable: the full test split is ~6 h of LLM per configuration on 2 cores). Mode ``b`` gives the
generator the task's reference passages (Task B); mode ``c`` retrieves from the pool indexes indexes/mtrag-<domain>
(Task C). The figures that need no timing are computed by `local_rag.bench.levers`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any  # Any: settings overrides and the JSON figures written; llama-cpp-python objects (no stubs)

from local_rag.bench import levers
from local_rag.bench.environment import describe_machine
from local_rag.errors import BadInputError
from local_rag.mtrag import load_generation_tasks, parse_conversation, read_jsonl, task_domain
from local_rag.records import Hit
from local_rag.settings import deep_merge, load_settings

TASKS = levers.SHARED / "generation_tasks" / "mtrag_tasks.jsonl"
CONFIGS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "compress": {"evidence": {"compress": True}},
    "skip-rewrite": {"rewrite": {"skip_standalone": True}},
    "lookup": {"llm": {"prompt_lookup": 10}},
    "small-0.5b": {"llm": {"model": "qwen2.5-coder-0.5b-instruct-q4_k_m"}},
    "history-first": {"generate": {"prompt": "answer_history_first"}},
    "compress+lookup": {"evidence": {"compress": True}, "llm": {"prompt_lookup": 10}},
    "compress+history-first": {"evidence": {"compress": True}, "generate": {"prompt": "answer_history_first"}},
    "all": {"evidence": {"compress": True}, "rewrite": {"skip_standalone": True}, "llm": {"prompt_lookup": 10},
            "generate": {"prompt": "answer_history_first", "history_step": 4}},
    "all-0.5b": {"evidence": {"compress": True}, "rewrite": {"skip_standalone": True},
                 "llm": {"prompt_lookup": 10, "model": "qwen2.5-coder-0.5b-instruct-q4_k_m"},
                 "generate": {"prompt": "answer_history_first", "history_step": 4}},
    "all-nolookup": {"evidence": {"compress": True}, "rewrite": {"skip_standalone": True},
                     "generate": {"prompt": "answer_history_first", "history_step": 4}},
    "all-0.5b-nolookup": {"evidence": {"compress": True}, "rewrite": {"skip_standalone": True},
                          "llm": {"model": "qwen2.5-coder-0.5b-instruct-q4_k_m"},
                          "generate": {"prompt": "answer_history_first", "history_step": 4}},
}
# The next turn's prompt prefixes prefilled between turns (issue 26, session 29); every other configuration runs
# without it (pipeline.warm off below), as it was measured before the setting existed.
CONFIGS |= {
    "all-nolookup-warm": deep_merge(CONFIGS["all-nolookup"], {"pipeline": {"warm": True}}),
    "all-warm": deep_merge(CONFIGS["all"], {"pipeline": {"warm": True}}),
    # and the rewrite's JSON reply started in the prompt, the query decoded as free text (rewrite.reply: prefix)
    "all-nolookup-warm-prefix": deep_merge(CONFIGS["all-nolookup"], {"pipeline": {"warm": True}, "rewrite": {"reply": "prefix"}}),
    "all-warm-prefix": deep_merge(CONFIGS["all"], {"pipeline": {"warm": True}, "rewrite": {"reply": "prefix"}}),
    "all-0.5b-nolookup-warm": deep_merge(CONFIGS["all-0.5b-nolookup"], {"pipeline": {"warm": True}}),
}
# Session 30: drafts only from 2-token matches (llm.prompt_lookup_min_ngram), and cpu-fast's 0.5B with the levers of
# the new default (warm-up, prompt lookup, the rewrite's reply prefilled)
CONFIGS |= {
    "all-warm-prefix-ngram2": deep_merge(CONFIGS["all-warm-prefix"], {"llm": {"prompt_lookup_min_ngram": 2}}),
    "all-0.5b-warm-prefix": deep_merge(CONFIGS["all-0.5b"], {"pipeline": {"warm": True}, "rewrite": {"reply": "prefix"}}),
}
# Session 31: fuller answers (the prompt answer_history_first_full) on the default without prompt lookup (a CPU without
# AMX, where `llm.prompt_lookup: -1` turns it off)
CONFIGS |= {
    "all-nolookup-warm-prefix-full": deep_merge(CONFIGS["all-nolookup-warm-prefix"],
                                                {"generate": {"prompt": "answer_history_first_full"}}),
}
# Session 32: a HyDE passage (the `hyde` rewrite mode) as one more query list, on the default without prompt lookup
CONFIGS |= {
    "all-nolookup-warm-prefix-hyde": deep_merge(CONFIGS["all-nolookup-warm-prefix"], {"rewrite": {"modes": ["rewrite", "hyde"]}}),
}
# Time to first token of the cpu-fast set (all-0.5b-nolookup, 5.1 s against the 5 s target): fewer prompt tokens.
CONFIGS |= {
    "fast-evidence300": deep_merge(CONFIGS["all-0.5b-nolookup"], {"evidence": {"budget_tokens": 300}}),
    "fast-history300": deep_merge(CONFIGS["all-0.5b-nolookup"], {"generate": {"history_tokens": 300}}),
    "fast-evidence300-history300": deep_merge(CONFIGS["all-0.5b-nolookup"], {"evidence": {"budget_tokens": 300},
                                                                             "generate": {"history_tokens": 300}}),
}
# Session 40: a profile exactly as it ships (`--profile cpu --configs shipped`), the warm-up between turns included
CONFIGS |= {"shipped": {"pipeline": {"warm": True}}}
# and with a smaller evidence budget: what the time to first token of a CPU like the Zen 4 would need
CONFIGS |= {"shipped-evidence300": deep_merge(CONFIGS["shipped"], {"evidence": {"budget_tokens": 300}})}
PREFIX_CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "compress": {"evidence": {"compress": True}},
    "history-first": {"generate": {"prompt": "answer_history_first"}},
    "history-first, step 4": {"generate": {"prompt": "answer_history_first", "history_step": 4}},
    "compress + history-first, step 4": {"evidence": {"compress": True}, "generate": {"prompt": "answer_history_first", "history_step": 4}},
    "compress + history-first, step 4, history 300": {"evidence": {"compress": True}, "generate": {
        "prompt": "answer_history_first", "history_step": 4, "history_tokens": 300}},
    "compress + history-first, step 4 + skip-rewrite": {"evidence": {"compress": True}, "rewrite": {"skip_standalone": True},
                                                        "generate": {"prompt": "answer_history_first", "history_step": 4}},
}


def threads(n: int) -> dict[str, Any]:
    """Settings for ``n`` llama.cpp threads (0 = the profile's); 1 on a shared machine, where spinning threads stall."""
    return {"llm": {"n_threads": n, "n_threads_batch": n}} if n else {}


def standalone(out: Path) -> None:
    """How often the rewrite-skip rule fires on train and test follow-up turns, and how often it is wrong."""
    tasks = load_generation_tasks(TASKS)
    rewrites = levers.reference_rewrites()
    data: dict[str, Any] = {split: {str(m): levers.standalone_figures(levers.split_tasks(tasks, split), rewrites, m)
                                    for m in (2, 3, 4)} for split in ("train", "test")}
    data["note"] = ("follow-up turns with an organizers' rewrite; label: the rewrite adds a content word of an earlier "
                    "turn; keys are min_content_words (3 = the default, chosen on train)")
    levers.write_json(out / "standalone.json", data)
    for split in ("train", "test"):
        for m, row in data[split].items():
            print(split, m, row)


def token_counter(profile: str) -> Callable[[str], int]:
    """The generator's own tokenizer (the GGUF's vocabulary, no weights loaded)."""
    from local_rag.llm.native import import_llama_cpp

    llama_cpp = import_llama_cpp()

    from local_rag.modelstore.gguf_check import resolve_gguf

    settings = load_settings(profile)
    llama = llama_cpp.Llama(model_path=str(resolve_gguf(settings.llm.model, settings.models_dir)), vocab_only=True, verbose=False)
    return lambda text: len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0


def compress(profile: str, split: str, budgets: list[int], max_tasks: int, out: Path) -> None:
    """Evidence tokens and two quality proxies per budget on the tasks' reference passages (Task B)."""
    from local_rag.embed import load_embedder
    from local_rag.evidence.compress import embedding_scorer

    settings = load_settings(profile)
    tasks = levers.conversation_order(levers.split_tasks(load_generation_tasks(TASKS), split))
    if max_tasks:
        tasks = tasks[:max_tasks]
    rewrites = levers.reference_rewrites()
    count = token_counter(profile)
    score = embedding_scorer(load_embedder(settings.embedder, settings.models_dir))
    data: dict[str, Any] = {"split": split, "profile": profile, "tokenizer": settings.llm.model,
                            "scorer": settings.embedder.model, "passages": "the tasks' reference passages (Task B)",
                            "join_wrapped": settings.evidence.join_wrapped}
    for name, use_rewrite in (("lastturn", False), ("reference-rewrite", True)):
        def question(t: dict[str, Any], u: bool = use_rewrite) -> str:
            return levers.task_question(t, rewrites, u)

        data[f"question={name}"] = levers.compression_figures(tasks, budgets, score, count, question, levers.gold_hits,
                                                              join_wrapped=settings.evidence.join_wrapped)
        for row in data[f"question={name}"]:
            print(name, row, flush=True)
    data["tasks"] = len(tasks)
    levers.write_json(out / f"compress-{split}.json", data)


def ablation(profile: str, split: str, mode: str, configs: list[str], conversations: int, max_turns: int,
             domains: list[str], n_threads: int, out: Path) -> None:
    """Whole conversations answered in order under each configuration (resumable JSON lines)."""
    from local_rag.llm import load_llm
    from local_rag.pipeline import Pipeline
    from local_rag.subset import by_sha1

    tasks = levers.split_tasks(load_generation_tasks(TASKS), split)
    if domains:
        tasks = [t for t in tasks if task_domain(t) in domains]
    chosen = list(dict.fromkeys(t["conversation_id"] for t in by_sha1(tasks)))[: conversations or None]
    tasks = levers.conversation_order([t for t in tasks if t["conversation_id"] in chosen])
    if max_turns:
        tasks = tasks[:max_turns]
    for config in configs:
        overrides = deep_merge({"pipeline": {"warm": False}}, deep_merge(CONFIGS[config], threads(n_threads)))
        settings = load_settings(profile, overrides=overrides)
        llm = load_llm(settings.llm, settings.models_dir)
        path = out / f"{mode}-{profile}-{config}.jsonl"
        # the machine beside the rows: CPU flags, llama.cpp's build
        levers.write_json(path.with_suffix(".machine.json"), {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                                               "machine": describe_machine()})
        if mode == "b":
            gold = levers.GoldRetriever()
            s = settings.model_copy(deep=True)
            s.pipeline.min_dense_score = -1.0
            rows = levers.run_turns(Pipeline(s, retriever=gold, llm=llm), tasks, path, config, gold)
        else:
            rows = []
            for domain in dict.fromkeys(task_domain(t) for t in tasks):
                s = settings.model_copy(deep=True)
                s.index = f"mtrag-{domain}"
                mine = [t for t in tasks if task_domain(t) == domain]
                rows += levers.run_turns(Pipeline(s, llm=llm), mine, path, config)
        print(config, levers.summarize(rows), flush=True)
        del llm


def prefix(profile: str, split: str, configs: list[str], mode: str, max_turns: int, out: Path) -> None:
    """Every turn's prompts, rendered and tokenized by the real model, nothing generated: prompt tokens, KV reuse."""
    from local_rag.embed import load_embedder
    from local_rag.evidence.compress import Compressor, embedding_scorer
    from local_rag.llm import load_llm
    from local_rag.pipeline import Pipeline

    tasks = levers.conversation_order(levers.split_tasks(load_generation_tasks(TASKS), split))
    base = load_settings(profile)
    if mode == "c":  # the domains whose pool index is built
        tasks = [t for t in tasks if (base.indexes_dir / f"mtrag-{task_domain(t)}" / "manifest.json").exists()]
    if max_turns:
        tasks = tasks[:max_turns]
    rewrites = levers.reference_rewrites()
    real = load_llm(base.llm, base.models_dir)
    current: dict[str, Any] = {}
    shared, _ = levers.cached_scorer(embedding_scorer(load_embedder(base.embedder, base.models_dir)))  # one pass for all configs

    def reply(stage: str) -> str:
        task = current["task"]
        if stage == "generate":
            return next((t["text"] for t in task.get("targets", []) if t.get("text")), "I don't know.")
        return json.dumps({"query": rewrites.get(task["task_id"], "")})

    data: dict[str, Any] = {"split": split, "profile": profile, "model": base.llm.model, "turns": len(tasks),
                            "domains": sorted({task_domain(t) for t in tasks}),
                            "history": "the tasks' own conversations (reference agent turns)",
                            "passages": "the tasks' reference passages (Task B)" if mode == "b" else
                            "retrieved from indexes/mtrag-<domain> with the last turn and the organizers' rewrite (Task C)",
                            "configs": {}}
    for name in configs or PREFIX_CONFIGS:
        settings = load_settings(profile, overrides=PREFIX_CONFIGS[name])
        dry = levers.DryRun(real, reply, slots=settings.llm.prefix_cache)
        gold = levers.GoldRetriever()
        pipelines: dict[str, Pipeline] = {}
        calls = []  # every turn's calls (a turn takes its own out of the model's log)
        for task in tasks:
            domain = task_domain(task) if mode == "c" else "gold"
            if domain not in pipelines:
                s = settings.model_copy(deep=True)
                s.pipeline.min_dense_score = -1.0
                s.index = f"mtrag-{domain}"
                pipelines[domain] = Pipeline(s, retriever=gold if mode == "b" else None, llm=dry)
                pipelines[domain].compressor = compressor = Compressor(s.evidence)
                compressor._score = shared
            current["task"] = task
            gold.hits = levers.gold_hits(task) or [Hit("none", 0.0, text="(no passage)")]
            calls += pipelines[domain].answer(parse_conversation(task["input"], where=task["task_id"])).llm_calls
        row = {"all": levers.call_figures(calls),
               **{stage: levers.call_figures([c for c in calls if c.stage == stage]) for stage in ("rewrite", "generate")}}
        row["new_prompt_tokens_per_turn"] = round(row["all"]["new_prompt_tokens"] / len(tasks), 1)
        data["configs"][name] = row
        print(name, json.dumps(row), flush=True)
    levers.write_json(out / f"prefix-{mode}-{split}-{profile}.json", data)


def decode_profile(profile: str, tokens: int, repeats: int, n_threads: int, out: Path) -> None:
    """Where a decoded token's time goes: llama_decode itself, llama-cpp-python's eval and sampling, our loop."""
    from local_rag.llm import load_llm

    settings = load_settings(profile, overrides=deep_merge({"llm": {"prefix_cache": 0}}, threads(n_threads)))
    llm: Any = load_llm(settings.llm, settings.models_dir)  # Any: reaches into the llama.cpp backend's Llama object
    llama = llm._llama
    spent: dict[str, list[float]] = {"llama_decode": [], "eval": [], "sample": []}

    def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*a: Any, **k: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[name].append(time.perf_counter() - started)
        return wrapper

    llama._ctx.decode = timed("llama_decode", llama._ctx.decode)
    llama.eval = timed("eval", llama.eval)
    llama.sample = timed("sample", llama.sample)
    task = levers.split_tasks(load_generation_tasks(TASKS), "test")[0]
    passages = "\n".join(f"[{i}] {h.title}: {h.text}" for i, h in enumerate(levers.gold_hits(task), 1))
    messages = [{"role": "user", "content": f"{passages}\n\nWrite a long summary of these passages."}]
    rows = []
    for _ in range(repeats):
        llm.forget_prompts()
        for k in spent:
            spent[k].clear()
        c = llm.complete(messages, stage="profile", max_tokens=tokens).call
        prompt_decodes = -(-c.prompt_tokens // llama.n_batch)  # the prompt's eval: one llama_decode per n_batch
        decode_calls = len(spent["llama_decode"]) - prompt_decodes
        steps = {"llama_decode": spent["llama_decode"][prompt_decodes:], "eval": spent["eval"][1:], "sample": spent["sample"]}
        rows.append({"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
                     "prefill_s": round(c.prefill_s, 3), "decode_s": round(c.decode_s, 3),
                     "decode_tok_s": round(c.decode_tokens_per_s, 2),
                     "per_token_ms": round(1000 * c.decode_s / max(1, c.completion_tokens - 1), 2),
                     **{f"{k}_ms_per_token": round(1000 * sum(v) / max(1, len(v)), 3) for k, v in steps.items()},
                     "llama_decode_calls": decode_calls})
        print(rows[-1], flush=True)
    levers.write_json(out / f"profile-{profile}-{llm.n_threads}t.json", {
        "model": settings.llm.model, "threads": llm.n_threads, "rows": rows,
        "note": "decode phase only: eval includes llama_decode (and copies the logits); per_token_ms is our loop's"})


def table(out: Path) -> None:
    """The ablation table (table.md, summary.json) from the runs in ``out``."""
    lines = ["| run | turns | turn p50 / p95 s | status p50 s | TTFT p50 s | LLM calls / turn | generate prompt tokens (mean) | "
             "new prompt tokens / turn | KV hit rate | decode tok/s | drafted / accepted | ROUGE-L (answerable) | IDK share | "
             "warm between turns p50 / p95 s (tokens) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    summaries = {}
    runs = sorted(out.glob("*.jsonl"))
    if not runs:
        raise BadInputError(f"no ablation runs (*.jsonl) in {out}: run `local-rag bench-levers ablation --out {out}` first")
    for path in runs:
        s = levers.summarize(read_jsonl(path))
        summaries[path.stem] = s
        a = s["all"]
        lines.append(f"| {path.stem} | {s['turns']} | {s['turn_p50_s']} / {s['turn_p95_s']} | {s['status_p50_s']} | {s['ttft_p50_s']} | "
                     f"{s['llm_calls_per_turn']} | {s['generate_prompt_tokens_mean']} | {round(a['new_prompt_tokens'] / s['turns'])} | "
                     f"{a['kv_hit_rate']} | {s['generate']['decode_tok_s']} | {a['drafted_tokens']} / {a['accepted_tokens']} | "
                     f"{s['rouge_l_mean']} | {s['idk_share']} | "
                     + (f"{s['warm_p50_s']} / {s['warm_p95_s']} ({s['warm_tokens_mean']}) |" if "warm_p50_s" in s else "- |"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    levers.write_json(out / "summary.json", summaries)
    print("\n".join(lines))
    print(json.dumps({k: v["all"] for k, v in summaries.items()}, indent=1)[:2000])

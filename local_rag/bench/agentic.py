"""Agentic (ChatR1) vs pipeline mode, side by side, on a fixed seeded subset of MTRAG conversations
(``scripts/bench_agentic.py``).

The same tasks (generation tasks of the domains whose pool index exists, with a reference answer, an organizers'
rewrite and qrels; the first in seeded sha1 order, `local_rag.subset.pick`) are answered by both modes with one shared LLM and retriever per domain.
Per mode: Task A nDCG@5 / Recall@5 of the passages retrieved (pipeline: the fused ranking; agentic: the union of the
passages its searches returned, in the order read), answer F1 against the reference, the intent reward (best F1 of
any query against the organizers' rewrite; the pipeline's queries are its last turn and its LLM rewrite), searches
per turn, per-search latency and latency per turn. Per-task records are appended to ``<runs>/records.jsonl`` as they
finish (a rerun continues); the summary goes to docs/benchmarks/agentic.{json,md}.

    flock /tmp/cpu-heavy.lock .venv/bin/python scripts/bench_agentic.py --profile cpu-qwen --limit 12
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from local_rag.agent.data import AgentTask, load_agent_tasks
from local_rag.agent.rewards import answer_reward, intent_reward
from local_rag.errors import BadInputError
from local_rag.evaluation.metrics import score_run
from local_rag.pipeline import Pipeline
from local_rag.settings import load_settings
from local_rag.stats import percentile
from local_rag.sysinfo import machine, peak_rss_mb

MODES = ("pipeline", "agentic")


def run_task(pipeline: Pipeline, task: AgentTask, mode: str) -> dict[str, Any]:
    started = time.perf_counter()
    result = pipeline.answer(task.conversation)
    wall = time.perf_counter() - started
    ranked = list(dict.fromkeys(h.passage_id for h in result.retrieved))
    run = {task.task_id: {pid: float(len(ranked) - i) for i, pid in enumerate(ranked)}}
    scores = score_run(run, {task.task_id: task.gold_ids}, ks=(5,))[task.task_id]
    queries = [q.text for q in result.queries]
    searches = [v for k, v in result.timings.items() if k.startswith("search.")]
    return {
        "task_id": task.task_id, "domain": task.domain, "mode": mode, "answerability": task.answerability,
        "answer": result.answer.text, "kind": result.answer.kind, "queries": queries, "retrieved": ranked[:20],
        "ndcg_5": scores["ndcg_cut_5"], "recall_5": scores["recall_5"],
        "answer_f1": answer_reward(result.answer.text, task.reference),
        "intent": intent_reward(queries, task.gold_rewrite),
        "searches": len(searches) if mode == "agentic" else 1, "search_s": searches,
        "latency_s": wall, "llm_calls": len(result.llm_calls),
        "forced": any(s.get("forced") for s in result.trace if s.get("type") == "answer"),
        "invalid_steps": sum(s.get("type") == "invalid" for s in result.trace), "trace": result.trace,
    }


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for mode in MODES:
        rs = [r for r in records if r["mode"] == mode]
        if not rs:
            continue
        lat = [r["latency_s"] for r in rs]
        search_s = [s for r in rs for s in r["search_s"]]
        out[mode] = {
            "turns": len(rs),
            "ndcg_5": statistics.fmean(r["ndcg_5"] for r in rs),
            "recall_5": statistics.fmean(r["recall_5"] for r in rs),
            "answer_f1": statistics.fmean(r["answer_f1"] for r in rs),
            "intent": statistics.fmean(r["intent"] for r in rs),
            "reward": statistics.fmean(r["answer_f1"] + 0.2 * r["intent"] for r in rs),
            "idk_rate": statistics.fmean(r["kind"] in ("idk", "decline") for r in rs),
            "searches_per_turn": statistics.fmean(r["searches"] for r in rs),
            "search_latency_ms_mean": 1000 * statistics.fmean(search_s) if search_s else None,
            "forced_answer_rate": statistics.fmean(r["forced"] for r in rs),
            "invalid_steps_per_turn": statistics.fmean(r["invalid_steps"] for r in rs),
            "llm_calls_per_turn": statistics.fmean(r["llm_calls"] for r in rs),
            "latency_s_mean": statistics.fmean(lat), "latency_s_p50": percentile(lat, 0.5),
            "latency_s_p95": percentile(lat, 0.95),
        }
    return out


def markdown(summary: dict[str, Any], info: dict[str, Any]) -> str:
    rows = [("Task A nDCG@5 (union of retrieved)", "ndcg_5", "{:.3f}"), ("Recall@5", "recall_5", "{:.3f}"),
            ("answer F1", "answer_f1", "{:.3f}"), ("intent reward (vs organizers' rewrite)", "intent", "{:.3f}"),
            ("ChatR1 reward (F1 + 0.2 intent)", "reward", "{:.3f}"), ("IDK rate", "idk_rate", "{:.2f}"),
            ("searches / turn", "searches_per_turn", "{:.2f}"), ("per-search latency (ms)", "search_latency_ms_mean", "{:.0f}"),
            ("forced answers", "forced_answer_rate", "{:.2f}"), ("invalid steps / turn", "invalid_steps_per_turn", "{:.2f}"),
            ("LLM calls / turn", "llm_calls_per_turn", "{:.2f}"), ("latency / turn, mean (s)", "latency_s_mean", "{:.1f}"),
            ("latency / turn, p95 (s)", "latency_s_p95", "{:.1f}")]
    modes = [m for m in MODES if m in summary]
    lines = [f"# Agentic (ChatR1) vs pipeline mode — {info['profile']} ({info['llm']})", "",
             f"{info['tasks']} MTRAG tasks ({', '.join(info['domains'])}; seed {info['seed']}), same tasks in both "
             f"modes; {info['machine'].get('cpu', '')}, {info['machine'].get('cores', '')} cores. "
             "Written by `scripts/bench_agentic.py`.", "",
             "| metric | " + " | ".join(modes) + " |", "|---|" + "---|" * len(modes)]
    for label, key, fmt in rows:
        cells = [fmt.format(summary[m][key]) if summary[m].get(key) is not None else "–" for m in modes]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def bench_agentic(profile: str, domains_wanted: list[str], limit: int, seed: int, mtrag_dir: str | Path,
                  runs_dir: str | Path, out_stem: str | Path) -> str:
    """Answer the same tasks in both modes (resumable: ``<runs_dir>/records-<profile>-<seed>.jsonl``); write
    ``<out_stem>.json`` and ``.md`` and return the Markdown."""
    base = load_settings(profile)
    domains = [d for d in domains_wanted if (base.indexes_dir / f"mtrag-{d}").exists()]
    if not domains:
        raise BadInputError(f"no pool index for {','.join(domains_wanted)} under {base.indexes_dir} (scripts/build_pool_indexes.sh)")
    tasks = load_agent_tasks(mtrag_dir, domains, limit, seed)
    runs = Path(runs_dir)
    runs.mkdir(parents=True, exist_ok=True)
    records_file = runs / f"records-{profile}-{seed}.jsonl"
    done = {(r["task_id"], r["mode"]): r for r in map(json.loads, records_file.read_text().splitlines())} \
        if records_file.exists() else {}

    from local_rag.llm import load_llm
    from local_rag.modes import make_pipeline
    from local_rag.retrieve.stack import open_retriever

    llm = load_llm(base.llm, base.models_dir)
    retrievers: dict[str, Any] = {}
    embedder = None
    for task in tasks:
        settings = base.model_copy(update={"index": f"mtrag-{task.domain}"})
        if task.domain not in retrievers:
            retrievers[task.domain] = open_retriever(settings, embedder)
            embedder = next((r.embedder for r in retrievers[task.domain].retrievers.values() if hasattr(r, "embedder")), embedder)
        for mode in MODES:
            if (task.task_id, mode) in done:
                continue
            mode_settings = settings.model_copy(update={"pipeline": settings.pipeline.model_copy(update={"mode": mode})})
            record = run_task(make_pipeline(mode_settings, retriever=retrievers[task.domain], llm=llm), task, mode)
            done[(task.task_id, mode)] = record
            with records_file.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            print(f"{task.task_id} {mode}: F1 {record['answer_f1']:.2f} nDCG@5 {record['ndcg_5']:.2f} "
                  f"searches {record['searches']} {record['latency_s']:.1f}s", flush=True)
    records = [done[(t.task_id, m)] for t in tasks for m in MODES if (t.task_id, m) in done]
    summary = summarize(records)
    info = {"profile": profile, "llm": base.llm.model, "domains": domains, "tasks": len(tasks), "seed": seed,
            "agent": base.agent.model_dump(), "machine": machine(), "peak_rss_mb": peak_rss_mb(),
            "task_ids": [t.task_id for t in tasks]}
    out = Path(out_stem)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"info": info, "summary": summary, "records": records}, indent=1,
                                                   ensure_ascii=False) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(markdown(summary, info), encoding="utf-8")
    return markdown(summary, info)

"""Per-turn latency, citation validity and IDK behaviour of the conversational pipeline on MTRAG conversations
(``scripts/bench_pipeline.py``).

A fixed, stratified set of generation tasks (per domain: the first tasks by sha1 of their id, half of them
UNANSWERABLE where the domain has enough) runs through the full pipeline over the pool indexes
(indexes/mtrag-<domain>, see scripts/build_pool_indexes.sh). Writes docs/benchmarks/pipeline-<profile>.{json,md}.

    .venv/bin/python scripts/bench_pipeline.py --profile cpu-qwen --per-domain 4
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from local_rag.mtrag import load_generation_tasks, parse_conversation, task_domain
from local_rag.settings import load_settings
from local_rag.stats import percentile
from local_rag.subset import pick
from local_rag.sysinfo import machine, peak_rss_mb


def stratified(tasks: list[dict[str, Any]], per_domain: int, domains: list[str]) -> list[dict[str, Any]]:
    """Per domain: the first tasks in sha1 order, half of them UNANSWERABLE where the domain has enough."""
    out: list[dict[str, Any]] = []
    for domain in domains:
        pool = pick(t for t in tasks if task_domain(t) == domain)
        unanswerable = [t for t in pool if "UNANSWERABLE" in t.get("answerability", [])][: per_domain // 2]
        rest = [t for t in pool if t not in unanswerable][: per_domain - len(unanswerable)]
        out += unanswerable + rest
    return out


def bench_pipeline(profile: str, per_domain: int, domains: list[str], tasks_file: str | Path, out_dir: str | Path) -> dict[str, Any]:
    """Run the tasks; write ``pipeline-<profile>.{json,md}`` into ``out_dir``; return the summary."""
    from local_rag.llm import load_llm
    from local_rag.pipeline import Pipeline

    settings = load_settings(profile)
    llm = load_llm(settings.llm, settings.models_dir)
    tasks = stratified(load_generation_tasks(tasks_file), per_domain, domains)
    pipelines: dict[str, Pipeline] = {}
    rows: list[dict[str, Any]] = []
    for i, task in enumerate(tasks, 1):
        domain = task_domain(task)
        if domain not in pipelines:
            s = settings.model_copy(deep=True)
            s.index = f"mtrag-{domain}"
            pipelines[domain] = Pipeline(s, llm=llm)
        conversation = parse_conversation(task["input"], where=task["task_id"])
        started = time.perf_counter()
        result = pipelines[domain].answer(conversation)
        wall = time.perf_counter() - started
        gold = {c["document_id"] for c in task.get("contexts", [])}
        row = {
            "task_id": task["task_id"], "domain": domain, "answerability": task.get("answerability", [""])[0],
            "kind": result.answer.kind, "citations": len(result.answer.citations),
            "invalid_citations": result.answer.invalid_citations, "wall_s": round(wall, 2),
            "timings_s": {k: round(v, 3) for k, v in result.timings.items()},
            "gold_in_passages": bool(gold & {h.passage_id for h in result.passages}),
            "answer": result.answer.text, "queries": [q.text for q in result.queries],
            "llm_calls": [{"stage": c.stage, "prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
                           "prefill_s": round(c.prefill_s, 3), "decode_s": round(c.decode_s, 3)} for c in result.llm_calls],
        }
        rows.append(row)
        print(f"[{i}/{len(tasks)}] {domain} {row['answerability']:13} {row['kind']:7} cites={row['citations']} "
              f"invalid={row['invalid_citations']} {wall:.1f}s", flush=True)
    answered = [r for r in rows if r["kind"] == "answer"]
    unans = [r for r in rows if r["answerability"] == "UNANSWERABLE"]
    ans = [r for r in rows if r["answerability"] in ("ANSWERABLE", "PARTIAL")]
    walls = [r["wall_s"] for r in rows]
    stages = sorted({k for r in rows for k in r["timings_s"] if "." not in k})
    summary = {
        "turns": len(rows),
        "turn_p50_s": round(percentile(walls, 0.5), 2), "turn_p95_s": round(percentile(walls, 0.95), 2),
        "stage_p50_s": {k: round(percentile([r["timings_s"].get(k, 0.0) for r in rows], 0.5), 3) for k in stages},
        "valid_citation_share": round(sum(1 for r in answered if r["citations"] and not r["invalid_citations"]) / max(1, len(answered)), 3),
        "answers_with_any_invalid_citation": sum(1 for r in answered if r["invalid_citations"]),
        "idk_rate_unanswerable": round(sum(r["kind"] in ("idk", "decline") for r in unans) / max(1, len(unans)), 3),
        "idk_rate_answerable": round(sum(r["kind"] in ("idk", "decline") for r in ans) / max(1, len(ans)), 3),
        "clarify_rate": round(sum(r["kind"] == "clarify" for r in rows) / max(1, len(rows)), 3),
        "gold_passage_given_share": round(sum(r["gold_in_passages"] for r in ans) / max(1, len(ans)), 3),
        "decode_tokens_per_s_mean": round(statistics.fmean(
            [c["completion_tokens"] / c["decode_s"] for r in rows for c in r["llm_calls"] if c["decode_s"] > 0] or [0.0]), 1),
    }
    report = {
        "command": f"python scripts/bench_pipeline.py --profile {profile} --per-domain {per_domain} --domains {','.join(domains)}",
        "machine": machine(), "profile": profile, "llm": settings.llm.model, "embedder": settings.embedder.model,
        "pipeline": settings.pipeline.model_dump(), "summary": summary, "peak_rss_mb": round(peak_rss_mb(), 1), "turns": rows,
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"pipeline-{profile}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    lines = [f"<!-- generated by {report['command']} -->", f"### Pipeline, profile {profile} ({settings.llm.model})", "",
             "| figure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in summary.items()]
    (out / f"pipeline-{profile}.md").write_text("\n".join(lines) + "\n")
    return summary

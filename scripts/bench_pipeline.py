"""Per-turn latency, citation validity and IDK behaviour of the conversational pipeline on MTRAG conversations.

A fixed, stratified set of generation tasks (per domain: the first tasks by sha1 of their id, half of them
UNANSWERABLE where the domain has enough) runs through the full pipeline over the pool indexes
(indexes/mtrag-<domain>, see scripts/build_pool_indexes.sh). Writes docs/benchmarks/pipeline-<profile>.{json,md}.

    .venv/bin/python scripts/bench_pipeline.py --profile cpu-qwen --per-domain 4
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from local_rag.evaluation.retrieval import percentile  # noqa: E402
from local_rag.mtrag import DOMAINS, load_generation_tasks, parse_conversation, task_domain  # noqa: E402
from local_rag.settings import load_settings  # noqa: E402
from local_rag.subset import by_sha1  # noqa: E402
from local_rag.sysinfo import machine, peak_rss_mb  # noqa: E402


def stratified(tasks: list[dict], per_domain: int, domains: list[str]) -> list[dict]:
    out = []
    for domain in domains:
        pool = by_sha1(t for t in tasks if task_domain(t) == domain)
        unanswerable = [t for t in pool if "UNANSWERABLE" in t.get("answerability", [])][: per_domain // 2]
        rest = [t for t in pool if t not in unanswerable][: per_domain - len(unanswerable)]
        out += unanswerable + rest
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default="cpu-qwen")
    parser.add_argument("--per-domain", type=int, default=4)
    parser.add_argument("--domains", default=",".join(DOMAINS))
    parser.add_argument("--tasks", default=str(ROOT.parent / "shared" / "mtrag" / "generation_tasks" / "mtrag_tasks.jsonl"))
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks"))
    args = parser.parse_args()
    from local_rag.llm import load_llm
    from local_rag.pipeline import Pipeline

    settings = load_settings(args.profile)
    llm = load_llm(settings.llm, settings.models_dir)
    tasks = stratified(load_generation_tasks(args.tasks), args.per_domain, args.domains.split(","))
    pipelines: dict[str, Pipeline] = {}
    rows = []
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
        "command": f"python scripts/bench_pipeline.py --profile {args.profile} --per-domain {args.per_domain} --domains {args.domains}",
        "machine": machine(), "profile": args.profile, "llm": settings.llm.model, "embedder": settings.embedder.model,
        "pipeline": settings.pipeline.model_dump(), "summary": summary, "peak_rss_mb": round(peak_rss_mb(), 1), "turns": rows,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"pipeline-{args.profile}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    lines = [f"<!-- generated by {report['command']} -->", f"### Pipeline, profile {args.profile} ({settings.llm.model})", "",
             "| figure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in summary.items()]
    (out / f"pipeline-{args.profile}.md").write_text("\n".join(lines) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()

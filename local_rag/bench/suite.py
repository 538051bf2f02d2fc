"""`run_bench`: the whole ``local-rag bench`` run, from settings and sessions to the report dict.

Example:
    >>> sessions, source = default_sessions("mtrag-clapnq")  # doctest: +SKIP
    >>> report = run_bench(load_settings("cpu-qwen", overrides={"index": "mtrag-clapnq"}), sessions, source)  # doctest: +SKIP
    >>> write_report(report, "docs/benchmarks", "bench-cpu-qwen")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from local_rag.bench.bandwidth import bound_report
from local_rag.bench.build import build_throughput, default_corpus
from local_rag.bench.conversations import Session
from local_rag.bench.environment import backends_used, describe_machine
from local_rag.bench.runner import run_sessions, summarize
from local_rag.settings import Settings


def run_bench(settings: Settings, sessions: list[Session], source: str, *, repeats: int = 2, warmup: bool = True,
              llm: Any = None, retriever: Any = None, embedder: Any = None, bandwidth: bool = True,
              build_passages: int = 500, build_corpus: str | Path | None = None, command: str = "",
              progress: Any = None) -> dict[str, Any]:
    """Run ``sessions`` through the pipeline of ``settings`` and return the report (see `local_rag.bench.report`).

    ``llm``/``retriever``/``embedder`` are used instead of loading them (tests pass a fake LLM); ``build_passages``
    0 skips the index build throughput, ``bandwidth`` False the bandwidth measurement.
    """
    from local_rag.modes import make_pipeline

    if retriever is None:
        from local_rag.index.folder import wants_dense
        from local_rag.retrieve.stack import open_retriever

        if embedder is None and wants_dense(settings):
            from local_rag.embed import load_embedder

            embedder = load_embedder(settings.embedder, settings.models_dir)
        retriever = open_retriever(settings, embedder)
    if embedder is None:
        dense = getattr(retriever, "retrievers", {}).get("dense")
        embedder = getattr(dense, "embedder", None)
    pipeline = make_pipeline(settings, retriever=retriever, llm=llm)
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None  # other work on the machine skews figures
    run = run_sessions(pipeline, sessions, repeats=repeats, warmup=warmup, progress=progress)
    summary = summarize(run, settings)
    summary["load_average_1_5_15"] = {"before": load_before, "after": os.getloadavg() if load_before else None}
    p = settings.pipeline
    stages_on = [name for name, on in (("rewrite", p.rewrite), ("cross-encoder", p.cross_encoder),
                                       ("llm-rerank", p.llm_rerank), ("judge", p.judge)) if on]
    report: dict[str, Any] = {
        "command": command, "started": started, "machine": describe_machine(), "profile": settings.profile,
        "index": settings.index,
        "settings": {"llm": settings.llm.model_dump(), "embedder": f"{settings.embedder.backend}:{settings.embedder.model}",
                     "reranker": settings.reranker.model if p.cross_encoder else None, "pipeline": p.model_dump(),
                     "retrievers": list(settings.retrieval.retrievers), "query_modes": list(settings.retrieval.query_modes),
                     "stages_on": stages_on},
        "conversations": {"source": source, "sessions": len(sessions), "repeats": repeats,
                          "ids": [s.id for s in sessions]},
        "summary": summary,
        "backends_used": backends_used(pipeline, run.llm),
    }
    calls = [c for t in run.turns for c in t.calls]
    report["bandwidth"] = bound_report(run.llm, calls, measure=bandwidth) if run.llm is not None else {"skipped": "no LLM call"}
    if build_passages > 0:
        corpus = Path(build_corpus) if build_corpus else default_corpus(settings.index)
        report["index_build"] = build_throughput(settings, embedder, corpus, build_passages)
    stages = summary["stages"]
    gen = report["bandwidth"].get("generate", {})
    report["headline"] = {
        "turn_p50_s": stages["turn"]["p50_s"], "turn_p95_s": stages["turn"]["p95_s"],
        "retrieval_p50_ms": None if "retrieval" not in stages else round(stages["retrieval"]["p50_s"] * 1e3, 2),
        "retrieval_p95_ms": None if "retrieval" not in stages else round(stages["retrieval"]["p95_s"] * 1e3, 2),
        "ttft_p50_s": summary["ttft_from_turn_start"]["p50_s"],
        "warm_between_turns_p50_s": summary["warm_between_turns"]["p50_s"],
        "generate_decode_tokens_per_s": gen.get("decode_tokens_per_s"),
        "generate_decode_share_of_bandwidth_bound": gen.get("ratio"),
        "peak_rss_mb": summary["memory"]["peak_rss_mb"],
    }
    report["turns"] = [t.to_json() for t in run.turns]
    return report

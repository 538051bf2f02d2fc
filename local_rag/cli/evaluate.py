"""``local-rag eval retrieval``: MTRAG Task A runs and scores."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

import click

from local_rag.cli.main import handle_errors, load, settings_options
from local_rag.cli.search import split_csv
from local_rag.mtrag import default_mtrag_dir

if TYPE_CHECKING:
    from collections.abc import Callable

    from local_rag.records import Hit, Query
    from local_rag.rerank import Reranker


@click.group(name="eval")
def evaluate() -> None:
    """Evaluate on MTRAG."""


@evaluate.command()
@settings_options
@click.option("--tasks-root", type=click.Path(), help="Folder of <domain>/<domain>_<mode>.jsonl + qrels (default: MTRAG retrieval_tasks).")
@click.option("--generation-tasks", type=click.Path(), help="Use the conversations of a generation-tasks jsonl instead (gold contexts as qrels).")
@click.option("--domains", default="clapnq,cloud,fiqa,govt", show_default=True)
@click.option("--mode", "modes", multiple=True, help="Query modes fused together: lastturn, questions, rewrite (repeat or comma-separate).")
@click.option("--retriever", "retrievers", multiple=True, help="bm25, dense (default: both = hybrid).")
@click.option("--fusion", type=click.Choice(["rrf", "max", "learned"]), help="How the lists are merged (learned: --fusion-model).")
@click.option("--fusion-model", help="The trained fusion model of --fusion learned (`local-rag train fusion`).")
@click.option("--index-prefix", default="mtrag-", show_default=True, help="Index of a domain = <prefix><domain>.")
@click.option("--out", "out_dir", type=click.Path(), help="Folder for runs and scores (default: runs/<label>).")
@click.option("--label", help="Name of this run in reports.")
@click.option("--json", "as_json", is_flag=True)
@click.option("--rewrite", "llm_modes", multiple=True, help="LLM query modes fused with --mode: rewrite (the system's own standalone rewrite; overrides the organizers' file), keywords, multi, hyde.")
@click.option("--llm-rerank", is_flag=True, help="Listwise LLM reranking of the fused candidates (settings: llm_rerank).")
@click.option("--judge", is_flag=True, help="LLM relevance judging: drop and order by level (settings: judge).")
@click.option("--cross-encoder", "cross_encoder", is_flag=True, help="Rerank the fused candidates with the cross-encoder (settings: reranker).")
@click.option("--reranker", "reranker_model", help="Cross-encoder model: a models/ name or a folder (default reranker.model).")
@click.option("--reranker-backend", type=click.Choice(["sentence-transformers", "onnx", "bi-encoder", "likelihood"]), help="Cross-encoder backend (default reranker.backend); bi-encoder re-scores with an embedder model, likelihood with a GGUF LLM (the question's log-probability given the passage).")
@click.option("--candidates", type=click.IntRange(min=1), help="Fused hits the cross-encoder reranks (default reranker.candidates).")
@click.option("--prior-weight", type=float, help="Fuse the cross-encoder's order with the first stage's (RRF; weight of the latter, default reranker.prior_weight).")
@click.option("--split", type=click.Choice(["train", "test"]), help="Only the conversations of this MTRAG split (<mtrag>/splits/); default: every query.")
@click.option("--limit", type=click.IntRange(min=1), help="A fixed subset: N queries per domain (first in sha1(id) order).")
@click.option("--llm-cache", type=click.Path(), help="JSONL cache of LLM rewrites (default: runs/llm-cache.jsonl).")
@click.option("--resume", is_flag=True, help="Keep the queries already in the output folder's runs (an interrupted or partial run, same settings) and run only the rest.")
@handle_errors
def retrieval(profile, config_file, index_name, tasks_root, generation_tasks, domains, modes, retrievers, fusion, fusion_model, index_prefix, out_dir, label, as_json, llm_modes, llm_rerank, judge, cross_encoder, reranker_model, reranker_backend, candidates, prior_weight, split, limit, llm_cache, resume):
    """Run and score Task A (nDCG and Recall @1/3/5/10 per domain, pool-3 and all)."""
    from local_rag.evaluation.retrieval import (
        CONVERSATION_MODES,
        check_run_inputs,
        items_from_generation_tasks,
        items_from_task_files,
        markdown_table,
        run_domain,
        summarize,
    )
    from local_rag.retrieve.stack import open_retriever

    split_ids = None
    if split:
        from local_rag.evaluation.splits import load_split

        split_ids = load_split(default_mtrag_dir(), split)
    settings = load(profile, config_file, None, **{
        "retrieval.retrievers": split_csv(retrievers), "retrieval.query_modes": split_csv(modes), "fusion.method": fusion,
        "fusion.model": fusion_model, "fusion.fallback": "error" if fusion == "learned" else None,
        "reranker.model": reranker_model, "reranker.backend": reranker_backend, "reranker.candidates": candidates,
        "reranker.prior_weight": prior_weight,
    })
    modes = settings.retrieval.query_modes
    root = Path(tasks_root) if tasks_root else default_mtrag_dir() / "retrieval_tasks"
    check_run_inputs(settings, modes, split_csv((domains,)) or [], root, index_prefix, bool(generation_tasks))
    llm_modes = split_csv(llm_modes) or []
    llm = provider = conversations = None
    if llm_modes or llm_rerank or judge:  # the LLM stages (local_rag.llm), loaded only when asked for
        from local_rag.llm import load_llm
        from local_rag.llm.pipeline import LLMQueries, conversations_by_id

        llm = load_llm(settings.llm, settings.models_dir)
        if llm_modes:
            queries = LLMQueries(llm, settings, llm_modes, llm_cache or Path("runs") / "llm-cache.jsonl")
            conversations = conversations_by_id(generation_tasks or default_mtrag_dir() / "generation_tasks" / "mtrag_tasks.jsonl")
            provider = lambda item: queries(item.conversation or conversations[item.id])  # noqa: E731
            modes = list(modes) + [m for m in llm_modes if m not in modes]
        if llm_rerank or judge:
            depth = max(settings.llm_rerank.candidates if llm_rerank else 0, settings.judge.candidates if judge else 0)
            settings.retrieval.top_k = max(settings.retrieval.top_k, depth)
    reranker: Reranker | None = None
    if cross_encoder:
        from local_rag.rerank import load_reranker
        from local_rag.rerank.likelihood import LikelihoodReranker, shares_llm

        if llm is not None and shares_llm(settings.reranker, settings.llm):  # one copy of the model scores and rewrites
            reranker = LikelihoodReranker(settings.reranker, settings.models_dir, llm=llm)
        else:
            reranker = load_reranker(settings.reranker, settings.models_dir)
        settings.retrieval.top_k = max(settings.retrieval.top_k, settings.reranker.candidates)
    suffix = "".join([f"_llm-{'+'.join(llm_modes)}" if llm_modes else "", "_llmrerank" if llm_rerank else "", "_judge" if judge else "",
                      f"_ce-{Path(settings.reranker.model).name}" if reranker is not None else "",
                      f"_learned-{Path(settings.fusion.model).name}" if settings.fusion.method == "learned" else ""])
    label = label or f"{'+'.join(settings.retrieval.retrievers)}_{'+'.join(modes)}{suffix}"
    out = Path(out_dir or Path("runs") / label)
    from local_rag.evaluation.lock import run_lock

    with run_lock(out):  # one writer per run folder
        embedder = None
        per_domain = {}
        for domain in split_csv((domains,)) or []:
            settings.index = f"{index_prefix}{domain}"
            retriever = open_retriever(settings, embedder)
            embedder = next((r.embedder for r in retriever.retrievers.values() if hasattr(r, "embedder")), embedder)
            if generation_tasks:
                items, qrels = items_from_generation_tasks(generation_tasks, domain)
            else:
                items, qrels = items_from_task_files(root, domain, modes)
            if any(m in CONVERSATION_MODES for m in modes):  # the task files hold no agent turns: take the conversations
                if conversations is None:
                    from local_rag.llm.pipeline import conversations_by_id

                    conversations = conversations_by_id(generation_tasks or default_mtrag_dir() / "generation_tasks" / "mtrag_tasks.jsonl")
                for item in items:
                    item.conversation = item.conversation or conversations.get(item.id)
            if split_ids is not None:
                from local_rag.evaluation.splits import keep_split

                items = keep_split(items, split_ids, lambda i: i.id)
            if limit:
                from local_rag.subset import first_by_sha1

                keep = first_by_sha1([i.id for i in items], limit)
                items = [i for i in items if i.id in keep]
            search: Callable[[list[Query]], list[Hit]] = retriever.search
            if llm is not None:
                from local_rag.llm.pipeline import post_retrieval

                search = post_retrieval(retriever.search, llm, settings, llm_rerank, judge)
            if reranker is not None:
                from local_rag.llm.pipeline import question_of
                from local_rag.rerank.base import reranked

                search = reranked(search, reranker, question_of)
            per_domain[domain] = run_domain(search, items, qrels, modes, out / f"run-{domain}.jsonl", provider=provider,
                                            progress=not as_json, resume=resume)
        summary = summarize(per_domain)
        if llm is not None:
            from local_rag.llm.pipeline import call_stats

            out.mkdir(parents=True, exist_ok=True)
            calls_file = out / "llm-calls.jsonl"
            earlier = [SimpleNamespace(**json.loads(line)) for line in calls_file.read_text(encoding="utf-8").splitlines()
                       if line.strip()] if resume and calls_file.exists() else []  # the calls of the resumed run
            with calls_file.open("a" if resume else "w", encoding="utf-8") as fh:
                for call in llm.calls:
                    fh.write(json.dumps({k: v for k, v in call.to_json().items() if k not in ("prompt", "response")}) + "\n")
            summary["llm"] = {"model": settings.llm.model, "calls": call_stats([*earlier, *llm.calls]), "limit_per_domain": limit}
        summary["settings"] = {
            "profile": settings.profile, "split": split, "retrievers": settings.retrieval.retrievers, "modes": modes,
            "generation_tasks": str(Path(generation_tasks).resolve()) if generation_tasks else None,
            "fusion": settings.fusion.model_dump(), "embedder": settings.embedder.model,
            "reranker": settings.reranker.model_dump() if reranker is not None else None, "chunker": settings.chunker.model_dump(),
        }
        out.mkdir(parents=True, exist_ok=True)
        (out / "scores.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        table = markdown_table(summary, label)
        (out / "scores.md").write_text(table, encoding="utf-8")
        click.echo(json.dumps(summary, indent=2) if as_json else table + f"\nwritten to {out}/")
from local_rag.cli.eval_generation import compare as _compare, generation as _generation, recheck as _recheck  # noqa: E402, I001

evaluate.add_command(_generation)
evaluate.add_command(_recheck)
evaluate.add_command(_compare)

"""Task A: run retrieval over MTRAG tasks, write runs in the official shape, score them.

The official run shape is one JSON object per task: ``task_id``, ``Collection`` and ``contexts`` (at most 10
``{"document_id", "score"}``, best first).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError
from local_rag.evaluation.metrics import mean_metrics, run_scores, score_run, weighted_average
from local_rag.mtrag import (
    COLLECTIONS,
    POOL3,
    TASK_FILE_MODES,
    load_done,
    load_generation_tasks,
    load_retrieval_tasks,
    parse_conversation,
    task_domain,
    task_qrels,
)
from local_rag.records import Conversation, Hit, Query
from local_rag.retrieve.queries import conversation_texts
from local_rag.settings import Settings
from local_rag.stats import percentile as percentile  # re-exported for older imports; use local_rag.stats
from local_rag.sysinfo import peak_rss_mb

MAX_CONTEXTS = 10
CONVERSATION_MODES = ("lasttwo", "lastanswer")  # query modes that need the conversation (agent turns included)


@dataclass
class EvalItem:
    """One query to run: its id, domain, texts per file-backed mode and, when known, the conversation."""

    id: str
    domain: str
    given: dict[str, str] = field(default_factory=dict)
    conversation: Conversation | None = None


# extra query texts per mode for an item (e.g. the LLM rewrite): wired in by the LLM stages
QueryProvider = Callable[[EvalItem], dict[str, list[str]]]


def items_from_task_files(root: str | Path, domain: str, modes: Sequence[str]) -> tuple[list[EvalItem], dict[str, dict[str, int]]]:
    file_modes = [m for m in modes if m in TASK_FILE_MODES] or ["lastturn"]
    tasks = load_retrieval_tasks(root, domain, file_modes)
    items = []
    for qid in tasks.ids:
        given = {m: tasks.queries[m][qid] for m in file_modes if qid in tasks.queries[m]}
        items.append(EvalItem(qid, domain, given))
    return items, tasks.qrels


def items_from_generation_tasks(path: str | Path, domain: str) -> tuple[list[EvalItem], dict[str, dict[str, int]]]:
    """Items and qrels (gold ``contexts``) of the generation tasks of one domain."""
    items, qrels = [], {}
    for task in load_generation_tasks(path):
        if task_domain(task) != domain:
            continue
        conversation = parse_conversation(task["input"], where=f"task {task['task_id']}")
        item = EvalItem(str(task["task_id"]), domain, {}, conversation)
        item.given["lastturn"] = conversation.last_user_turn
        item.given["questions"] = "\n".join(conversation.user_turns)
        items.append(item)
        gold = task_qrels(task)
        if gold:
            qrels[item.id] = gold
    return items, qrels


def queries_for(item: EvalItem, modes: Sequence[str], provider: QueryProvider | None) -> list[Query]:
    extra = provider(item) if provider is not None else {}
    out: list[Query] = []
    for mode in modes:
        if mode in extra:
            out.extend(Query(text, mode) for text in extra[mode] if text.strip())
        elif mode in item.given:
            out.append(Query(item.given[mode], mode))
        elif mode in CONVERSATION_MODES and item.conversation is not None:
            out.extend(Query(text, mode) for text in conversation_texts(item.conversation, mode) if text.strip())
        else:
            raise BadInputError(f"query mode {mode!r} is not available for {item.id}")
    return out or [Query(item.given.get("lastturn", ""), "lastturn")]


def official_record(item: EvalItem, hits: Sequence[Hit]) -> dict[str, Any]:
    kept = hits[:MAX_CONTEXTS]
    scores = run_scores([h.score for h in kept])
    return {
        "task_id": item.id,
        "Collection": COLLECTIONS.get(item.domain, item.domain),
        "contexts": [{"document_id": h.passage_id, "score": s} for h, s in zip(kept, scores, strict=True)],
    }


def run_domain(
    search: Callable[[list[Query]], list[Hit]],
    items: Sequence[EvalItem],
    qrels: dict[str, dict[str, int]],
    modes: Sequence[str],
    out_file: Path | None,
    provider: QueryProvider | None = None,
    progress: bool = True,
    resume: bool = False,
) -> dict[str, Any]:
    """Retrieve for every item (one at a time, timed), write the official run, return means and latencies.

    Each record is appended to ``out_file`` as soon as its query is done. With ``resume``, the items already in
    ``out_file`` (from an interrupted or partial run) are read back instead of retrieved again; the latencies then
    cover only the queries run now (``resumed`` counts the others).
    """
    done = load_done(out_file) if resume and out_file is not None else {}
    run: dict[str, dict[str, float]] = {}
    latencies = []
    todo = []
    for item in items:
        if item.id in done:
            contexts = done[item.id].get("contexts", [])  # in the system's order, scores maybe tied (older files)
            scores = run_scores([c["score"] for c in contexts])
            run[item.id] = dict(zip([c["document_id"] for c in contexts], scores, strict=True))
        else:
            todo.append(item)
    iterator: Any = todo
    if progress and todo:
        from tqdm import tqdm

        iterator = tqdm(todo, desc=f"retrieval {todo[0].domain}", unit="query")
    fh = None
    if out_file is not None:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        fh = out_file.open("a" if done else "w", encoding="utf-8")
    try:
        for item in iterator:
            queries = queries_for(item, modes, provider)
            started = time.perf_counter()
            hits = search(queries)
            latencies.append(time.perf_counter() - started)
            record = official_record(item, hits)
            run[item.id] = {c["document_id"]: c["score"] for c in record["contexts"]}
            if fh is not None:
                fh.write(json.dumps(record) + "\n")
                fh.flush()
    finally:
        if fh is not None:
            fh.close()
    judged = {q: qrels[q] for q in run if q in qrels}
    means = mean_metrics(score_run(run, judged))
    return {
        "metrics": means,
        "resumed": len(items) - len(todo),
        "latency_ms": {
            "p50": round(1000 * percentile(latencies, 0.5), 2),
            "p95": round(1000 * percentile(latencies, 0.95), 2),
            "mean": round(1000 * statistics.fmean(latencies), 2) if latencies else 0.0,
        },
    }


def summarize(per_domain: dict[str, dict[str, Any]]) -> dict[str, Any]:
    metrics = {d: r["metrics"] for d, r in per_domain.items() if r["metrics"]}
    summary: dict[str, Any] = {"domains": per_domain}
    pool3 = {d: m for d, m in metrics.items() if d in POOL3}
    if pool3:
        summary["pool-3"] = weighted_average(pool3)
    if len(metrics) > 1:
        summary["all"] = weighted_average(metrics)
    summary["peak_rss_mb"] = round(peak_rss_mb(), 1)
    return summary


def markdown_table(summary: dict[str, Any], title: str = "") -> str:
    cols = ["ndcg_cut_1", "ndcg_cut_3", "ndcg_cut_5", "ndcg_cut_10", "recall_1", "recall_3", "recall_5", "recall_10"]
    head = "| set | queries | " + " | ".join(c.replace("_cut", "").replace("_", "@") for c in cols) + " | p50 ms | p95 ms |"
    lines = [f"### {title}" if title else "", head, "|" + "---|" * (len(cols) + 4)]
    rows = [(d, r["metrics"], r.get("latency_ms", {})) for d, r in summary["domains"].items()]
    rows += [(k, summary[k], {}) for k in ("pool-3", "all") if k in summary]
    for name, metrics, lat in rows:
        if not metrics:
            continue
        vals = " | ".join(f"{metrics[c]:.4f}" for c in cols)
        lines.append(f"| {name} | {int(metrics['queries'])} | {vals} | {lat.get('p50', '')} | {lat.get('p95', '')} |")
    return "\n".join(line for line in lines if line is not None) + "\n"


def check_run_inputs(settings: Settings, modes: list[str], domains: list[str], root: Path, index_prefix: str,
                     from_generation_tasks: bool) -> None:
    """Refuse, before any model loads or any domain runs, a query mode no task file or conversation gives (it was
    dropped, and the run labelled with it), a domain without a task folder, and a missing index of any domain."""
    from local_rag.index.manifest import IndexManifest

    known = dict.fromkeys((*TASK_FILE_MODES, *CONVERSATION_MODES))
    unknown = [m for m in modes if m not in known]
    if unknown:
        raise BadInputError(f"--mode: unknown {', '.join(map(repr, unknown))}; valid: {', '.join(known)} (the LLM's "
                            "modes go in --rewrite)")
    if from_generation_tasks:  # the conversations come from one file: no task folders, the indexes only
        for domain in domains:
            IndexManifest.load(settings.indexes_dir / f"{index_prefix}{domain}")
    elif domains:  # none: nothing to run (as before)
        check_domains(root, domains, settings.indexes_dir, index_prefix)


def check_domains(tasks_root: str | Path, domains: Sequence[str], indexes_dir: str | Path | None = None,
                  index_prefix: str = "mtrag-") -> list[str]:
    """``domains``, refused before any domain runs: none given, one without a task folder under ``tasks_root`` (the
    ``retrieval_tasks`` folder; a typo), or, with ``indexes_dir``, one whose index ``<index_prefix><domain>`` is
    missing (`eval retrieval`, the `train` commands).

    Raises:
        BadInputError: any of these, one line naming the domains there are.
        IndexError_: a missing or unreadable index.
    """
    from local_rag.index.manifest import IndexManifest

    if not domains:
        raise BadInputError("--domains: no domain given")
    root = Path(tasks_root)
    if not root.is_dir():
        raise BadInputError(f"no MTRAG retrieval tasks at {root}: point LOCAL_RAG_MTRAG_DIR at the MTRAG folder")
    missing = [d for d in domains if not (root / d).is_dir()]
    if missing:
        held = sorted(p.name for p in root.iterdir() if p.is_dir())
        raise BadInputError(f"--domains: no task folder for {', '.join(map(repr, missing))} in {root}"
                            + (f" (there: {', '.join(held)})" if held else ""))
    if indexes_dir is not None:
        for domain in domains:
            IndexManifest.load(Path(indexes_dir) / f"{index_prefix}{domain}")
    return list(domains)

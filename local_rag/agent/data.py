"""MTRAG conversations with the labels the agentic rewards need: the reference answer, the organizers' standalone
rewrite (the intent label) and the relevant passages (Task A qrels).

Example:
    >>> tasks = load_agent_tasks("../shared/mtrag", ["govt"], limit=8, seed=0)  # doctest: +SKIP
    >>> tasks[0].gold_rewrite, sorted(tasks[0].gold_ids)[:1]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from local_rag.mtrag import load_generation_tasks, load_qrels, load_queries, parse_conversation, task_domain
from local_rag.records import Conversation
from local_rag.subset import pick


@dataclass
class AgentTask:
    """One MTRAG turn to answer, with its labels."""

    task_id: str
    domain: str
    conversation: Conversation
    reference: str
    gold_rewrite: str
    gold_ids: dict[str, int]  # passage id -> relevance (qrels)
    answerability: str = ""


def load_agent_tasks(mtrag_dir: str | Path, domains: Sequence[str], limit: int | None = None, seed: int = 0,
                     tasks_file: str | Path | None = None) -> list[AgentTask]:
    """The generation tasks of ``domains`` that have a reference answer, a rewrite and qrels; the first ``limit``
    of them in seeded sha1 order (`local_rag.subset.pick`: the same for the same seed and files), in task-id order."""
    root = Path(mtrag_dir)
    rewrites: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for domain in domains:
        rewrites.update(load_queries(root / "retrieval_tasks" / domain / f"{domain}_rewrite.jsonl"))
        qrels.update(load_qrels(root / "retrieval_tasks" / domain / "qrels" / "dev.tsv"))
    out = []
    for task in load_generation_tasks(tasks_file or root / "generation_tasks" / "mtrag_tasks.jsonl"):
        task_id = str(task["task_id"])
        domain = task_domain(task)
        targets = [t.get("text", "") for t in task.get("targets") or [] if t.get("text")]
        if domain not in domains or task_id not in rewrites or task_id not in qrels or not targets:
            continue
        conversation = parse_conversation(task["input"], where=f"task {task_id}")
        conversation.id = task_id
        out.append(AgentTask(task_id, domain, conversation, targets[0], rewrites[task_id], qrels[task_id],
                             str(task.get("answerability", ""))))
    return sorted(pick(out, limit, key=lambda t: t.task_id, seed=seed), key=lambda t: t.task_id)

"""The conversations a benchmark runs: a file, MTRAG generation tasks, or the demo's scripted session.

A `Session` is a history plus user turns to answer in order; each answer is appended as the agent's turn before
the next user turn (as in ``local-rag chat``). An MTRAG task is a session of one turn after its given history.

Example:
    >>> sessions, source = default_sessions("mtrag-clapnq", n=6)  # doctest: +SKIP
    >>> source  # doctest: +SKIP
    'MTRAG generation tasks, domain clapnq, first 6 by sha1(task_id)'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError
from local_rag.records import Conversation, Turn

MTRAG_TASKS = Path(__file__).resolve().parents[2].parent / "shared" / "mtrag" / "generation_tasks" / "mtrag_tasks.jsonl"


@dataclass
class Session:
    id: str
    history: list[Turn] = field(default_factory=list)
    user_turns: list[str] = field(default_factory=list)


def task_sessions(tasks: list[dict[str, Any]], n: int | None = None, domain: str | None = None) -> list[Session]:
    """Sessions from MTRAG generation tasks (of ``domain`` when given), the first ``n`` by sha1 of their id."""
    from local_rag.mtrag import parse_conversation, task_domain
    from local_rag.subset import pick

    if domain is not None:
        tasks = [t for t in tasks if task_domain(t) == domain]
    out = []
    for task in pick(tasks, n):
        conversation = parse_conversation(task["input"], where=str(task["task_id"]))
        turns = list(conversation.turns)
        last = max(i for i, t in enumerate(turns) if t.speaker == "user")
        out.append(Session(str(task["task_id"]), turns[:last], [turns[last].text]))
    return out


def demo_sessions() -> list[Session]:
    """The demo's scripted session over the bundled documentation (`local_rag.demo.SCRIPT`)."""
    from local_rag.demo import SCRIPT

    return [Session("demo-script", [], list(SCRIPT))]


def read_sessions(path: str | Path, n: int | None = None) -> list[Session]:
    """Sessions from a file: MTRAG tasks (``.jsonl``, one task with ``input`` a line), or one conversation JSON
    (the official ``input`` list, a task record, or ``{"messages": [...]}``), answered at its last user turn."""
    from local_rag.mtrag import load_generation_tasks, parse_conversation

    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"conversations file not found: {path}")
    if path.suffix == ".jsonl":
        return task_sessions(load_generation_tasks(path), n)
    from local_rag import safejson

    try:
        data = safejson.loads(path.read_bytes(), str(path))
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    items = data if isinstance(data, list) and data and isinstance(data[0], dict) and "input" in data[0] else [data]
    out = []
    for i, item in enumerate(items[:n]):
        if isinstance(item, dict) and "messages" in item:
            item = item["messages"]
        conversation: Conversation = parse_conversation(item, where=str(path))
        turns = list(conversation.turns)
        last = max(j for j, t in enumerate(turns) if t.speaker == "user")
        out.append(Session(f"{path.stem}#{i}", turns[:last], [turns[last].text]))
    return out


def default_sessions(index: str, n: int = 6, tasks_file: Path = MTRAG_TASKS) -> tuple[list[Session], str]:
    """The built-in set: MTRAG tasks of the index's domain for an ``mtrag-<domain>`` index when the shared data is
    there, else the demo script. Returns the sessions and a description of where they come from."""
    from local_rag.mtrag import DOMAINS, load_generation_tasks

    domain = index.removeprefix("mtrag-") if index.startswith("mtrag-") else None
    if domain in DOMAINS and tasks_file.is_file():
        sessions = task_sessions(load_generation_tasks(tasks_file), n, domain)
        return sessions, f"MTRAG generation tasks, domain {domain}, first {len(sessions)} by sha1(task_id)"
    return demo_sessions(), "the demo's scripted session (local_rag.demo.SCRIPT)"

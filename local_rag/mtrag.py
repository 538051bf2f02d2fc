"""Reading the official MTRAG files: retrieval task queries, qrels, generation tasks.

Query files hold ``{"_id": "<conv><::><turn>", "text": "|user|: ..."}``; the ``questions`` files hold every user turn
on its own ``|user|:`` line. qrels are ``query-id corpus-id score`` TSV with a header row.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from local_rag import safejson
from local_rag.errors import BadInputError
from local_rag.records import Conversation, Speaker, Turn

__all__ = [
    "COLLECTIONS", "DOMAINS", "DOMAIN_OF_COLLECTION", "POOL3", "TASK_FILE_MODES", "RetrievalTasks", "default_mtrag_dir",
    "generation_qrels", "load_done", "load_generation_tasks", "load_qrels", "load_queries", "load_retrieval_tasks",
    "parse_conversation", "read_jsonl", "strip_speakers", "task_domain", "task_qrels",
]

log = logging.getLogger("local_rag.evaluation")

DOMAINS = ("clapnq", "cloud", "fiqa", "govt")
POOL3 = ("clapnq", "cloud", "fiqa")
COLLECTIONS = {
    "clapnq": "mt-rag-clapnq-elser-512-100-20240503",
    "cloud": "mt-rag-ibmcloud-elser-512-100-20240502",
    "fiqa": "mt-rag-fiqa-beir-elser-512-100-20240501",
    "govt": "mt-rag-govt-elser-512-100-20240611",
}
DOMAIN_OF_COLLECTION = {v: k for k, v in COLLECTIONS.items()}
TASK_FILE_MODES = ("lastturn", "questions", "rewrite")


def default_mtrag_dir() -> Path:
    """``$LOCAL_RAG_MTRAG_DIR``, else ``../shared/mtrag`` (the development checkout layout)."""
    return Path(os.environ.get("LOCAL_RAG_MTRAG_DIR", "../shared/mtrag"))


_SPEAKER = re.compile(r"^\|(user|agent)\|:\s?", re.MULTILINE)


def strip_speakers(text: str) -> str:
    """``"|user|: a\\n|user|: b"`` -> ``"a\\nb"``."""
    return _SPEAKER.sub("", text).strip()


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    if not path.exists():
        raise BadInputError(f"file not found: {path}")
    out = []
    with path.open(encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            record = safejson.loads(line, f"{path}:{lineno}")
            if not isinstance(record, dict):
                raise BadInputError(f"{path}:{lineno}: expected a JSON object")
            out.append(record)
    return out


def load_done(path: Path) -> dict[str, dict[str, Any]]:
    """Records already in a resumable JSONL file by ``task_id`` (first wins); a torn last line, left by an
    interrupted run, is cut off the file."""
    done: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return done
    raw = path.read_bytes()
    good = 0
    for line in raw.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break
        if line.strip():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break
            task_id = record.get("task_id") if isinstance(record, dict) else None
            if isinstance(task_id, str):
                if task_id in done:
                    log.warning("%s: task %s appears twice; keeping the first", path, task_id)
                else:
                    done[task_id] = record
        good += len(line)
    if good < len(raw):
        log.warning("%s: dropping an unfinished last line (%d bytes) left by an interrupted run", path,
                    len(raw) - good)
        with path.open("r+b") as fh:
            fh.truncate(good)
    return done


def load_queries(path: str | Path) -> dict[str, str]:
    """Query id -> text (speaker prefixes removed), in file order."""
    out: dict[str, str] = {}
    for i, record in enumerate(read_jsonl(path), start=1):
        if "_id" not in record or not isinstance(record.get("text"), str):
            raise BadInputError(f"{path}:{i}: a query needs '_id' and 'text'")
        out[str(record["_id"])] = strip_speakers(record["text"])
    return out


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    path = Path(path)
    if not path.exists():
        raise BadInputError(f"qrels not found: {path}")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").split("\t")
            if lineno == 1 and parts[0] == "query-id":
                continue
            if len(parts) != 3:
                raise BadInputError(f"{path}:{lineno}: expected 'query-id<TAB>corpus-id<TAB>score'")
            try:
                qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
            except ValueError as exc:
                raise BadInputError(f"{path}:{lineno}: score {parts[2]!r} is not an integer") from exc
    return qrels


@dataclass
class RetrievalTasks:
    """One domain's queries per mode and its qrels."""

    domain: str
    queries: dict[str, dict[str, str]]  # mode -> query id -> text
    qrels: dict[str, dict[str, int]]

    @property
    def ids(self) -> list[str]:
        first = next(iter(self.queries.values()))
        return list(first)


def load_retrieval_tasks(root: str | Path, domain: str, modes: list[str]) -> RetrievalTasks:
    """Load ``<root>/<domain>/<domain>_<mode>.jsonl`` for each file-backed mode and the qrels."""
    root = Path(root)
    queries = {}
    for mode in modes:
        if mode not in TASK_FILE_MODES:
            raise BadInputError(f"query mode {mode!r} has no task file; file modes: {', '.join(TASK_FILE_MODES)}")
        queries[mode] = load_queries(root / domain / f"{domain}_{mode}.jsonl")
    qrels = load_qrels(root / domain / "qrels" / "dev.tsv")
    return RetrievalTasks(domain, queries, qrels)


def parse_conversation(messages: Any, where: str = "conversation") -> Conversation:
    """A `Conversation` from the official ``input`` shape: ``[{"speaker": "user"|"agent", "text": ...}, ...]``.

    Also accepts OpenAI-style ``{"role": "user"|"assistant", "content": ...}`` messages.

    Raises:
        BadInputError: not a list, unknown speakers, non-string texts, or no non-empty last user turn.
    """
    if isinstance(messages, dict) and "input" in messages:
        messages = messages["input"]
    if not isinstance(messages, list) or not messages:
        raise BadInputError(f"{where}: expected a non-empty list of messages")
    turns = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise BadInputError(f"{where}[{i}]: a message must be an object with 'speaker' and 'text'")
        speaker = message.get("speaker", message.get("role"))
        text = message.get("text", message.get("content"))
        speaker = "agent" if speaker == "assistant" else speaker
        if speaker not in ("user", "agent", "system"):
            raise BadInputError(f"{where}[{i}]: unknown speaker {speaker!r} (expected user or agent)")
        if not isinstance(text, str):
            raise BadInputError(f"{where}[{i}]: 'text' must be a string")
        turns.append(Turn(cast(Speaker, speaker), text))
    conversation = Conversation(turns)
    if not conversation.last_user_turn.strip():  # the last user turn is the question
        raise BadInputError(f"{where}: no user turn, or the last user turn is empty: nothing to answer")
    return conversation


def load_generation_tasks(path: str | Path) -> list[dict[str, Any]]:
    """The official generation tasks (``task_id``, ``Collection``, ``input``, ``contexts``, ``targets``...)."""
    tasks = read_jsonl(path)
    for i, task in enumerate(tasks, start=1):
        for key in ("task_id", "input"):
            if key not in task:
                raise BadInputError(f"{path}:{i}: a generation task needs {key!r}")
    return tasks


def task_qrels(task: dict[str, Any]) -> dict[str, int]:
    """A generation task's gold ``contexts`` as qrels: document id → 1."""
    return {str(c["document_id"]): 1 for c in task.get("contexts") or [] if c.get("document_id")}


def generation_qrels(path: str | Path) -> dict[str, dict[str, dict[str, int]]]:
    """The qrels of the generation tasks in ``path`` by domain (domain → task id → document id → 1), for runs made
    from those tasks (``eval retrieval --generation-tasks``); tasks without gold contexts are left out."""
    out: dict[str, dict[str, dict[str, int]]] = {d: {} for d in DOMAINS}
    for task in load_generation_tasks(path):
        gold = task_qrels(task)
        if gold:
            out[task_domain(task)][str(task["task_id"])] = gold
    return out


def task_domain(task: dict[str, Any]) -> str:
    if task.get("domain") in DOMAINS:
        return str(task["domain"])
    collection = task.get("Collection") or task.get("collection")
    if collection in DOMAIN_OF_COLLECTION:
        return DOMAIN_OF_COLLECTION[collection]
    raise BadInputError(f"task {task.get('task_id')}: unknown domain/Collection {collection!r}")

"""The fixed MTRAG train/test split: conversation ids listed in ``<mtrag>/splits/mtrag_<name>_conversations.txt``.

Anything learned from MTRAG is learned on ``train``; every MTRAG figure is reported on ``test``. A task belongs to
the conversation whose id starts its task id (``<conversation><::><turn>``) or that its ``conversation_id`` names.

Example:
    >>> conversation_of("0ef145e49938dfb9b6eefe781d21dca8<::>3")
    '0ef145e49938dfb9b6eefe781d21dca8'
    >>> keep_split([{"task_id": "a<::>1"}, {"task_id": "b<::>2"}], {"b"}, lambda t: t["task_id"])
    [{'task_id': 'b<::>2'}]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from local_rag.errors import BadInputError
from local_rag.subset import conversation_of

SPLITS = ("train", "test")
T = TypeVar("T")


def split_file(mtrag_dir: str | Path, name: str) -> Path:
    return Path(mtrag_dir) / "splits" / f"mtrag_{name}_conversations.txt"


def load_split(mtrag_dir: str | Path, name: str) -> set[str]:
    """The conversation ids of split ``name`` (``train`` or ``test``).

    Raises:
        BadInputError: unknown split name, missing or empty split file.
    """
    if name not in SPLITS:
        raise BadInputError(f"unknown split {name!r}; valid: {', '.join(SPLITS)}")
    path = split_file(mtrag_dir, name)
    if not path.exists():
        raise BadInputError(f"split file not found: {path}")
    ids = {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    if not ids:
        raise BadInputError(f"split file {path} lists no conversation")
    return ids


def keep_split(items: Iterable[T], conversations: set[str], task_id: Callable[[T], str]) -> list[T]:
    """The items whose task belongs to one of ``conversations``, in their order."""
    return [item for item in items if conversation_of(task_id(item)) in conversations]


def task_in_split(task: dict[str, Any], conversations: set[str]) -> bool:
    """A generation task (``conversation_id`` when present, else its ``task_id``) in ``conversations``."""
    conversation = task.get("conversation_id") or conversation_of(str(task.get("task_id", "")))
    return str(conversation) in conversations

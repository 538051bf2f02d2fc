"""The one task-subset picker: fixed subsets, the same on every machine and every run, items ordered by the sha1
of their id (of ``"<seed>:<id>"`` when seeded), optionally kept to the conversations of a split first.

Every figure measured on "a fixed subset" (``--limit`` of the evaluations, the bench's conversations, the
benchmarks, the agentic training tasks) takes its items through `pick` (or its sha1 order, `by_sha1`), so runs
with other settings, models or prompts compare item for item.

Example:
    >>> [t["task_id"] for t in by_sha1([{"task_id": "a"}, {"task_id": "b"}, {"task_id": "c"}])]
    ['c', 'a', 'b']
    >>> sorted(first_by_sha1(["a", "b", "c"], 2))
    ['a', 'c']
    >>> pick([{"task_id": "x<::>1"}, {"task_id": "y<::>1"}], 5, conversations={"y"})
    [{'task_id': 'y<::>1'}]
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def sha1_of(item_id: object, seed: object = None) -> str:
    """The sort key: sha1 of the id (of ``"<seed>:<id>"`` when a seed is given)."""
    text = str(item_id) if seed is None else f"{seed}:{item_id}"
    return hashlib.sha1(text.encode()).hexdigest()


def by_sha1(items: Iterable[T], key: Callable[[T], object] = lambda t: t["task_id"],  # type: ignore[index]
            seed: object = None) -> list[T]:
    """``items`` sorted by the sha1 of ``key(item)`` (a task's ``task_id`` by default)."""
    return sorted(items, key=lambda t: sha1_of(key(t), seed))


def conversation_of(task_id: object) -> str:
    """The conversation id of an MTRAG task id (the part before ``<::>``)."""
    return str(task_id).split("<::>", 1)[0]


def pick(items: Iterable[T], n: int | None = None, *, key: Callable[[T], object] = lambda t: t["task_id"],  # type: ignore[index]
         seed: object = None, conversations: Collection[str] | None = None) -> list[T]:
    """The first ``n`` of ``items`` (all when ``n`` is None) in seeded sha1 order of ``key(item)``; with
    ``conversations`` (a split: `local_rag.evaluation.splits.load_split`), only the items whose task id belongs to one
    of them."""
    if conversations is not None:
        items = [t for t in items if conversation_of(key(t)) in conversations]
    return by_sha1(items, key, seed)[:n]


def first_by_sha1(ids: Sequence[str], limit: int | None) -> set[str]:
    """The first ``limit`` ids in sha1 order (all of them when ``limit`` is falsy or too large)."""
    if not limit or limit >= len(ids):
        return set(ids)
    return set(by_sha1(ids, key=lambda i: i)[:limit])


def stratified(items: Sequence[dict[str, Any]], n: int, stratum: Callable[[dict[str, Any]], Hashable]) -> list[dict[str, Any]]:
    """``n`` items, each stratum getting its proportional share (at least one), taken in sha1(task_id) order and
    returned in the original order; the largest strata give way first when the shares round above ``n``."""
    if n >= len(items):
        return list(items)
    strata: dict[Hashable, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        strata[stratum(item)].append(item)
    quota = {k: max(1, round(n * len(v) / len(items))) for k, v in strata.items()}
    while sum(quota.values()) > n:  # trim the largest strata first
        biggest = max((k for k in quota if quota[k] > 1), key=lambda k: quota[k], default=None)
        if biggest is None:
            break
        quota[biggest] -= 1
    keep = {id(t) for k, v in strata.items() for t in by_sha1(v)[: quota[k]]}
    return [t for t in items if id(t) in keep]

"""A bar over the parts of one long file (a scan's pages, a mailbox's messages) under the build's bar over its files,
shown when the build shows progress (`show_progress`, set by `local_rag.corpus.readers` for each file it reads)."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

__all__ = ["part_bar", "show_progress"]

#: the build shows progress: a reader may show a bar over the parts of a long file (`part_bar`)
show_progress: ContextVar[bool] = ContextVar("part_progress", default=False)


def part_bar(total: int, label: str, unit: str, done: int = 0, least: int = 1) -> Any:
    """A bar (tqdm) over ``total`` parts of a file, ``done`` of them already read, when the build shows progress and
    more than ``least`` are left to read; else None."""
    if not show_progress.get() or total - done <= least:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, desc=label[:40], unit=unit, leave=False)

"""One writer per run folder: resumable runs append to their JSONL files and cut a torn last line on resume, so two
runs writing into one folder would interleave lines or cut each other's. `run_lock` holds ``<folder>/.lock`` (an OS
lock, released when the process ends, even when it is killed) for the whole run.

Example:
    >>> with run_lock(Path("runs/gen-reference-cpu-qwen-answer")):  # doctest: +SKIP
    ...     ...  # generate and score
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from local_rag.errors import BadInputError


@contextmanager
def run_lock(folder: Path) -> Iterator[None]:
    """Create ``folder`` and hold ``folder/.lock`` exclusively, or raise `BadInputError` naming the holder.

    Where the OS has no ``fcntl`` (Windows) the lock is skipped.
    """
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    path = folder / ".lock"
    with path.open("a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise BadInputError(f"{folder} is in use by {holder}: one run at a time may write into a run folder "
                                "(wait for it, stop it, or give another --out)") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}\n")
        fh.flush()
        try:
            yield
        finally:
            if created:
                _remove_if_empty(folder)
            fcntl.flock(fh, fcntl.LOCK_UN)


def _remove_if_empty(folder: Path) -> None:
    """Remove a run folder this run created and left with nothing in it (the lock, empty files): a run refused
    for its input (a missing or malformed predictions file) leaves no folder behind."""
    try:
        entries = list(folder.iterdir())
        if any(p.is_dir() or (p.name != ".lock" and p.stat().st_size) for p in entries):
            return
        for p in entries:
            p.unlink()
        folder.rmdir()
    except OSError:
        pass

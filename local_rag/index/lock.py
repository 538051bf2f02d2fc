"""One writer per index, and readers that never see a half-written one.

Two lock files sit beside each index folder (``indexes/.NAME.lock`` and ``indexes/.NAME.swap``), both held with
``flock``, so a lock dies with its process (``kill -9`` included) and is never stale:

- `writing` holds ``.NAME.lock`` exclusively for a whole build, add, remove or rebuild: read the index, write the
  new one beside it, swap it in. A second writer *waits* for it, up to ``timeout`` seconds (setting
  ``index_lock_timeout_s``, default 600), then fails with one line naming the holder: "index X is being changed
  by PID N". Waiting rather than failing at once means two scripts that both add documents both succeed, in turn.
  While it holds the lock the writer removes what killed writers left behind (``.NAME.building-PID``,
  ``.NAME.old-PID``) and restores the previous index if one was killed between its two renames.
- `swapping` / `reading` share ``.NAME.swap``: a writer holds it exclusively only for its two renames, a reader
  shares it while it opens the index's files, so a reader sees the old index or the new one, whole, and never the
  moment between the renames or a mix of both.

The two files live as long as the index: a writer that leaves no index behind (a failed first build, an add to a
name that holds none, `index delete`) removes them, and a search of a missing index creates none.

Example:
    >>> with writing(Path("indexes/docs"), timeout=600):  # doctest: +SKIP
    ...     ...  # read, build the new folder, then `with swapping(path): rename, rename`
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from local_rag.errors import IndexError_

POLL_S = 0.05
_LEFTOVER = re.compile(r"\.(building|old)-(\d+)$")
_held = threading.local()  # the writer locks this thread holds (re-entered, not re-taken)


def lock_path(index: Path, kind: str = "lock") -> Path:
    return index.parent / f".{index.name}.{kind}"


def _open(path: Path, create: bool) -> int | None:
    """A file descriptor for ``path`` (created when ``create``), or None when the folder is read-only or missing."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT if create else os.O_RDONLY, 0o644)
    except FileNotFoundError:
        return None
    except PermissionError:
        try:
            return os.open(path, os.O_RDONLY)
        except OSError:
            return None
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES):
            return None
        raise


def holder(index: Path) -> int | None:
    """The PID written by the writer that holds (or last held) the index's lock, if any."""
    try:
        text = lock_path(index).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


@contextlib.contextmanager
def writing(index: Path, timeout: float = 600.0) -> Iterator[None]:
    """Hold the index's writer lock (waiting up to ``timeout`` seconds), cleaning leftovers of killed writers.

    Raises:
        IndexError_: another process kept the lock for ``timeout`` seconds (the message names its PID).
    """
    key = str(index.resolve())
    held: set[str] = _held.__dict__.setdefault("paths", set())
    if key in held:
        yield
        return
    index.parent.mkdir(parents=True, exist_ok=True)
    fd = _take(index, timeout)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        held.add(key)
        clean_leftovers(index)
        yield
    finally:
        held.discard(key)
        if not index.exists():  # nothing written (a failed build, an add to a missing index) or deleted: no files
            for kind in ("swap", "lock"):  # left behind; unlinked while held, so a waiting writer takes a new one
                with contextlib.suppress(OSError):  # a folder gone read-only: the files stay, the error is the write's
                    lock_path(index, kind).unlink(missing_ok=True)
        os.close(fd)  # closing releases the flock


def _take(index: Path, timeout: float) -> int:
    """A descriptor of ``.NAME.lock`` with its flock held, waiting up to ``timeout`` seconds. A lock file unlinked
    by the writer before us (its index gone) is not the one the path names now: that one is opened and taken."""
    deadline = time.monotonic() + timeout
    while True:
        fd = _open(lock_path(index), create=True)
        if fd is None:
            raise IndexError_(f"cannot write index {index}: its folder {index.parent} is not writable")
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        pid = holder(index)
                        who = f"PID {pid}" if pid else "another process"
                        raise IndexError_(
                            f"index {index.name} is being changed by {who} (waited {timeout:g}s; "
                            "setting index_lock_timeout_s); try again when it is done"
                        ) from None
                    time.sleep(POLL_S)
            try:
                if os.stat(lock_path(index)).st_ino == os.fstat(fd).st_ino:
                    return fd
            except FileNotFoundError:
                pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def one_writer(func: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``func(settings, ...)`` holding the writer lock of ``settings.index_dir`` (see `writing`)."""

    @functools.wraps(func)
    def wrapper(settings: Any, *args: Any, **kwargs: Any) -> Any:
        with writing(settings.index_dir, settings.index_lock_timeout_s):
            return func(settings, *args, **kwargs)

    return wrapper


def clean_leftovers(index: Path) -> list[Path]:
    """Remove ``.NAME.building-PID`` and ``.NAME.old-PID`` folders (call with the writer lock held: no writer is
    running, so every one is a leftover). A missing index with an ``.old`` copy left by a writer killed between its
    two renames gets that copy back. Returns what was removed."""
    removed = []
    olds = []
    for path in index.parent.glob(f".{index.name}.*-*"):
        match = _LEFTOVER.search(path.name)
        if not match or path.name != f".{index.name}.{match.group(1)}-{match.group(2)}":
            continue
        if match.group(1) == "old":
            olds.append(path)
        else:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    olds.sort(key=lambda p: p.stat().st_mtime)
    if olds and not index.exists():
        with swapping(index):
            os.rename(olds.pop(), index)
    for path in olds:
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


@contextlib.contextmanager
def swapping(index: Path) -> Iterator[None]:
    """Exclusive hold of the swap lock: readers wait while the writer renames."""
    fd = _open(lock_path(index, "swap"), create=True)
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        if fd is not None:
            os.close(fd)


@contextlib.contextmanager
def reading(index: Path) -> Iterator[None]:
    """Shared hold of the swap lock while a reader opens the index's files (no-op on a read-only folder)."""
    # no lock file for a missing index: a search of a wrong name leaves nothing behind (the first build's one rename
    # needs no reader lock)
    fd = _open(lock_path(index, "swap"), create=index.is_dir() and os.access(index.parent, os.W_OK))
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        if fd is not None:
            os.close(fd)

"""The content digest of a passage and the order-independent hash of a corpus (recorded in index manifests; the
demo and `index build` compare them to know whether a corpus changed)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from local_rag.records import Passage


def passage_digest(passage: Passage) -> str:
    """sha256 of the passage's title, text and url."""
    return hashlib.sha256(f"{passage.title}\x00{passage.text}\x00{passage.url}".encode()).hexdigest()


def corpus_hash(digests: Mapping[str, str]) -> str:
    """sha256 over ``passage id -> digest`` in id order: the same corpus in any order gives the same hash."""
    digest = hashlib.sha256()
    for pid in sorted(digests):
        digest.update(f"{pid}\x00{digests[pid]}\n".encode())
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (what `local_rag.index.sync` compares). A file of `REMEMBERED_BYTES` or more is hashed
    once for its size, modification time and inode (`_Remembered`): a sync of a folder of large files (an Outlook
    archive of gigabytes, years of scanned PDFs) that did not change reads none of them again. A repository's
    ``.git`` (``--git-log``) is known by the commit its branch is at (`local_rag.corpus.git_log.history_digest`)."""
    if path.name == ".git":  # a folder, or a worktree's or submodule's file naming one
        from local_rag.corpus.git_log import history_digest

        return history_digest(path)
    try:
        stat = path.stat()
    except OSError:
        stat = None
    if stat is None or stat.st_size < REMEMBERED_BYTES:
        return _sha256(path)
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    known = _remembered.get(key)
    if known is not None:
        return known
    started = time.time_ns()
    digest = _sha256(path)
    if started - stat.st_mtime_ns > RACY_NS:  # changed just before it was read, it may change again in the same tick
        _remembered.put(key, digest)
    return digest


#: files this large or larger have their digest remembered (smaller ones are hashed in less than a millisecond)
REMEMBERED_BYTES = 1 << 20
#: a digest is not remembered for a file modified this recently before it was hashed: a write in the same
#: timestamp tick would leave its size and time unchanged (git's "racily clean" files)
RACY_NS = 2_000_000_000


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class _Remembered:
    """Digests of large files by (path, size, modification time, inode), in a SQLite file of the user's cache folder
    (``LOCAL_RAG_HOME/cache`` when set), shared by the processes of this user; any error (a read-only home, a
    locked or damaged file) only means the file is hashed again."""

    def __init__(self) -> None:
        self._db: sqlite3.Connection | None = None
        self._failed = False
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def _open(self) -> sqlite3.Connection | None:
        if self._pid != os.getpid():  # a forked child: a SQLite connection is never used across a fork
            self._db, self._failed, self._pid = None, False, os.getpid()
        if self._db is None and not self._failed:
            try:
                folder = _cache_folder()
                folder.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(folder / "file-digests.sqlite", timeout=5, check_same_thread=False)
                db.execute("CREATE TABLE IF NOT EXISTS digest (path TEXT, size INTEGER, mtime_ns INTEGER, "
                           "inode INTEGER, sha256 TEXT, PRIMARY KEY (path, size, mtime_ns, inode))")
                self._db = db
            except (OSError, sqlite3.Error):
                self._failed = True
        return self._db

    def get(self, key: tuple[str, int, int, int]) -> str | None:
        with self._lock:
            try:
                db = self._open()
                row = db.execute("SELECT sha256 FROM digest WHERE path=? AND size=? AND mtime_ns=? AND inode=?",
                                 key).fetchone() if db is not None else None
            except sqlite3.Error:
                return None
        return str(row[0]) if row else None

    def put(self, key: tuple[str, int, int, int], digest: str) -> None:
        with self._lock:
            try:
                db = self._open()
                if db is not None:
                    with db:
                        db.execute("DELETE FROM digest WHERE path=?", key[:1])  # the file's older versions
                        db.execute("INSERT OR REPLACE INTO digest VALUES (?, ?, ?, ?, ?)", (*key, digest))
            except sqlite3.Error:
                pass


def _cache_folder() -> Path:
    home = os.environ.get("LOCAL_RAG_HOME")
    if home:
        return Path(home).expanduser() / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir("local-rag", appauthor=False))


_remembered = _Remembered()

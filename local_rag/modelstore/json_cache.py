"""A small JSON cache file (a dict of str keys) shared by the model checks: the sha256 cache, the GGUF header cache and
the llama.cpp build check (`local_rag.llm.cpu_build`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def cache_path(name: str) -> Path:
    """``name`` in local-rag's cache folder (``$XDG_CACHE_HOME/local-rag``, else ``~/.cache/local-rag``)."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "local-rag" / name


def read_cache(cache_file: Path) -> dict[str, Any]:
    """The cache's entries; an absent, unreadable or corrupt file reads as empty (a cache only saves time)."""
    try:
        cache = json.loads(cache_file.read_text(encoding="utf-8")) if cache_file.exists() else {}
    except (json.JSONDecodeError, OSError):
        return {}
    return cache if isinstance(cache, dict) else {}


def write_cache(cache_file: Path, cache: dict[str, Any]) -> None:
    """Replace the cache file atomically; a read-only cache only costs time, so a failed write is ignored."""
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache), encoding="utf-8")
        os.replace(tmp, cache_file)
    except OSError:
        pass

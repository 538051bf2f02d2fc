"""Where the scale benchmark's cells live and how they measure memory and disk (shared by its cell modules)."""

from __future__ import annotations

import os
import resource
from pathlib import Path

DENSE = {"flat": "Flat", "hnsw": "HNSW32", "ivf-sq8": "IVF{lists},SQ8", "ivf-pq": "IVF{lists},PQ48"}


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="utf-8") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def rss_parts() -> tuple[float, float]:
    """(anonymous, file-backed) resident MiB of this process (``RssAnon``, ``RssFile`` of /proc/self/status)."""
    parts = {"RssAnon": 0.0, "RssFile": 0.0}
    with open("/proc/self/status", encoding="utf-8") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in parts:
                parts[key] = int(value.split()[0]) / 1024
    return parts["RssAnon"], parts["RssFile"]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def disk_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def cell_dir(work: Path, size: int, kind: str) -> Path:
    return work / "indexes" / f"{size}-{kind}"

"""Process memory and machine description, shared by benchmarks and reports."""

from __future__ import annotations

import platform
import resource
import sys


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def total_memory_gib() -> float:
    """The machine's physical memory in GiB."""
    import psutil

    return float(psutil.virtual_memory().total) / 2**30


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, object]:
    """A short description of this machine for reports."""
    import os

    from local_rag.device import cpu_flags, nvml_gpus

    return {
        "cpu": cpu_name(),
        "cpu_flags": cpu_flags(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "gpus": nvml_gpus(),
    }

"""Process memory and machine description, shared by benchmarks and reports."""

from __future__ import annotations

import platform
import resource
import sys


def peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


_SIMD = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile",
         "amx_int8", "amx_bf16")


def cpu_flags() -> list[str]:
    """The vector-instruction flags of this CPU that llama.cpp and torch use (AVX2, AVX-512, VNNI, AMX), as
    /proc/cpuinfo lists them; [] where it cannot be read. Two CPUs of one name can differ here (a VM may hide some)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    return [f for f in _SIMD if f in have]
    except OSError:
        pass
    return []


def machine() -> dict[str, object]:
    """A short description of this machine for reports."""
    import os

    from local_rag.device import nvml_gpus

    return {
        "cpu": cpu_name(),
        "cpu_flags": cpu_flags(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "gpus": nvml_gpus(),
    }

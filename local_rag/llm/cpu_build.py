"""Does the installed llama.cpp build run on this CPU?

`scripts/install_llama_cpp.sh` builds llama.cpp for the machine it runs on (``-march=native``): the build uses every
vector extension that CPU has (AVX-512, VNNI, ...). Carried to an older CPU (a wheelhouse for an air-gapped machine,
a venv or wheel cache on a shared home), it stops with an illegal instruction, with no message, at the first model
load. `probe` asks the build which extensions it uses, in a child process (a crash there is reported, not suffered),
and names those this CPU lacks; `local-rag doctor` prints it, and `LlamaCppLLM` calls `check_installed` before it
imports llama_cpp, so a run stops with that line instead of dying mid-load (the answer is cached per build and CPU:
the child process runs once).

Example:
    >>> build_features("CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | OPENMP = 1 | ")
    ['SSE3', 'AVX', 'AVX2', 'AVX512']
    >>> missing_features(['AVX', 'AVX2', 'AVX512'], {'avx', 'avx2', 'fma'})
    ['AVX512']
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import signal
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from local_rag.modelstore.json_cache import cache_path, read_cache, write_cache

# llama.cpp's names in llama_print_system_info() -> the /proc/cpuinfo flag each needs
FEATURE_FLAGS = {
    "SSE3": "pni", "SSSE3": "ssse3", "AVX": "avx", "AVX2": "avx2", "AVX_VNNI": "avx_vnni", "F16C": "f16c", "FMA": "fma",
    "BMI2": "bmi2", "AVX512": "avx512f", "AVX512_VBMI": "avx512vbmi", "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16", "AMX_INT8": "amx_int8",
}
_PROBE = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"


def build_features(system_info: str) -> list[str]:
    """The CPU extensions a llama.cpp build uses, in its order, from ``llama_print_system_info()``: the ``NAME = 1``
    items of its ``CPU :`` section (a CUDA build lists a ``CUDA :`` section too)."""
    section, out = "", []
    for part in system_info.split("|"):
        if " : " in part:
            section, part = (s.strip() for s in part.split(" : ", 1))
        name, _, value = part.partition("=")
        if section == "CPU" and value.strip() == "1" and name.strip() in FEATURE_FLAGS:
            out.append(name.strip())
    return out


def missing_features(features: Iterable[str], cpu_flags: set[str]) -> list[str]:
    """The ``features`` (llama.cpp's names) whose CPU flag is not in ``cpu_flags``."""
    return [f for f in features if FEATURE_FLAGS.get(f, "") not in cpu_flags]


def probe(python: str = sys.executable, timeout: float = 120.0) -> dict[str, object]:
    """Import llama_cpp in a child process and compare the extensions its build uses with this CPU's flags.

    Returns ``{"features": [...], "missing": [...]}`` (``missing`` is None where the CPU's flags cannot be read), or
    ``{"error": "..."}`` when the child fails: llama_cpp not importable, or killed (SIGILL: built for another CPU).
    """
    from local_rag.device import cpu_flag_set

    try:
        done = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"could not run {python} ({exc})"}
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        why = " (an instruction this CPU lacks: llama.cpp was built for another CPU)" if name == "SIGILL" else ""
        return {"error": f"importing llama_cpp was killed by {name}{why}"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return {"error": f"importing llama_cpp failed: {last}"}
    features = build_features(done.stdout)
    flags = cpu_flag_set()
    return {"features": features, "missing": None if flags is None else missing_features(features, flags)}


def advice(result: dict[str, object]) -> str | None:
    """One line for `local-rag doctor` when the build cannot run here; None when it can (or nothing is known)."""
    rebuild = "rebuild it on this machine: bash scripts/install_llama_cpp.sh (or build a portable one: LLAMA_CPP_PORTABLE=1)"
    error = result.get("error")
    if isinstance(error, str) and "SIGILL" in error:
        return f"{error}; {rebuild}"
    missing = result.get("missing")
    if isinstance(missing, list) and missing:
        return (f"llama.cpp was built for another CPU: it uses {', '.join(missing)}, which this CPU lacks, and will "
                f"stop with an illegal instruction when a model loads; {rebuild}")
    return None


def amx_hint(result: dict[str, object], tiles_granted: bool) -> str | None:
    """One line for `local-rag doctor` where this CPU offers AMX tiles that the installed build does not use (a build
    made before AMX builds were patched, or with ``LLAMA_CPP_AMX=0``); None otherwise."""
    features = result.get("features")
    if not tiles_granted or not isinstance(features, list) or "AMX_INT8" in features:
        return None
    return ("this CPU offers AMX tiles, which the installed llama.cpp does not use: bash scripts/install_llama_cpp.sh "
            "rebuilds it with them (prompts prefill ~1.5x faster on a 2-core Xeon, docs/benchmarks.md)")


def build_key() -> str | None:
    """What identifies the installed build on this CPU: its shared libraries (names, sizes, times) and the CPU's
    flags; None when llama_cpp is not installed."""
    from local_rag.device import cpu_flag_set

    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.origin:
        return None
    lib = Path(spec.origin).parent / "lib"
    files = sorted(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in lib.glob("*.so*") if p.is_file()) \
        if lib.is_dir() else []
    flags = " ".join(sorted(cpu_flag_set() or []))
    return hashlib.sha256("\n".join([str(lib), *files, flags]).encode()).hexdigest()[:16]


def installed_build() -> dict[str, object] | None:
    """`probe`'s answer for the installed build on this CPU, asked once per build and CPU (cached in
    ``~/.cache/local-rag/llama-cpu-check.json``; an import failure other than SIGILL is not remembered); None where
    llama_cpp is not installed."""
    key = build_key()
    if key is None:
        return None
    cache_file = cache_path("llama-cpu-check.json")
    cache = read_cache(cache_file)
    result = cache.get(key)
    if not isinstance(result, dict):
        result = probe()
        if "error" not in result or "SIGILL" in str(result["error"]):
            cache[key] = result
            write_cache(cache_file, cache)
    return result


@functools.cache
def check_installed() -> None:
    """Raise `ModelError` with `advice`'s line when the installed llama.cpp build cannot run on this CPU
    (`installed_build`); where llama_cpp is missing or fails to import for another reason, nothing is raised here (the
    import that follows says why)."""
    from local_rag.errors import ModelError

    result = installed_build()
    line = advice(result) if result is not None else None
    if line:
        raise ModelError(line)

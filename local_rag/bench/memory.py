"""Memory of this process over time: a sampler thread reads RSS (psutil), the process's GPU memory (NVML) and
torch's allocated CUDA memory every few milliseconds; `peaks` gives the highest reading inside a time interval,
so a benchmark gets the peak memory of each stage from the stage's start and end times.

Example:
    >>> with MemorySampler(interval_s=0.005) as sampler:  # doctest: +SKIP
    ...     t0 = time.perf_counter(); work(); t1 = time.perf_counter()
    >>> sampler.peaks(t0, t1)  # doctest: +SKIP
    {'rss_mb': 812.4, 'gpu_mb': None, 'torch_mb': None}
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any

MB = 1 << 20


@dataclass(slots=True)
class Sample:
    t: float  # time.perf_counter()
    rss: int
    gpu: int | None  # bytes NVML attributes to this process (all GPUs), None without NVML/GPU
    torch: int | None  # torch.cuda.memory_allocated, None when torch has no CUDA


class _NVML:
    """This process's GPU memory through NVML (``nvidia-ml-py``); inactive without the package or a GPU."""

    def __init__(self) -> None:
        self.handles: list[Any] = []
        self.pynvml: Any = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            self.pynvml = pynvml
        except Exception:  # noqa: BLE001 - no package, no driver or no GPU: the sampler simply has no GPU column
            self.handles = []

    @property
    def active(self) -> bool:
        return bool(self.handles)

    def process_bytes(self, pid: int) -> int | None:
        if not self.handles:
            return None
        total = 0
        for handle in self.handles:
            try:
                procs = self.pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
            except Exception:  # noqa: BLE001 - some drivers refuse per-process queries (e.g. MIG, containers)
                return None
            total += sum(int(p.usedGpuMemory or 0) for p in procs if p.pid == pid)
        return total

    def close(self) -> None:
        if self.pynvml is not None:
            try:
                self.pynvml.nvmlShutdown()
            except Exception:  # noqa: BLE001
                pass


def _torch_cuda() -> Any:
    """torch when it is already imported and sees a GPU (the sampler never imports torch itself)."""
    import sys

    torch = sys.modules.get("torch")
    try:
        return torch if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized() else None
    except Exception:  # noqa: BLE001
        return None


class MemorySampler:
    """Samples memory in a daemon thread from ``start()`` to ``stop()`` (or as a context manager)."""

    def __init__(self, interval_s: float = 0.01) -> None:
        import psutil

        self.interval_s = interval_s
        self.samples: list[Sample] = []
        self._process = psutil.Process(os.getpid())
        self._nvml = _NVML()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sorted: list[Sample] = []
        self._sorted_n = -1
        self._times: list[float] = []

    @property
    def gpu(self) -> bool:
        return self._nvml.active

    def sample(self) -> Sample:
        """One reading now (also appended to ``samples``); the thread calls this, and so can a stage boundary."""
        torch = _torch_cuda()
        s = Sample(
            time.perf_counter(), int(self._process.memory_info().rss), self._nvml.process_bytes(self._process.pid),
            int(torch.cuda.memory_allocated()) if torch is not None else None,
        )
        self.samples.append(s)
        return s

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def start(self) -> MemorySampler:
        self._stop.clear()
        self.sample()
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.sample()

    def close(self) -> None:
        self.stop()
        self._nvml.close()

    def __enter__(self) -> MemorySampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def peaks(self, start: float, end: float) -> dict[str, float | None]:
        """Highest RSS / GPU / torch readings (MiB) between ``start`` and ``end``; a stage shorter than the sampling
        interval gets the reading nearest to it."""
        import bisect

        samples = sorted(self.samples, key=lambda s: s.t) if self._sorted_n != len(self.samples) else self._sorted
        if self._sorted_n != len(self.samples):
            self._sorted, self._sorted_n = samples, len(samples)
            self._times = [s.t for s in samples]
        inside = samples[bisect.bisect_left(self._times, start): bisect.bisect_right(self._times, end)]
        if not inside and samples:
            mid = (start + end) / 2
            i = min(bisect.bisect_left(self._times, mid), len(samples) - 1)
            inside = [min(samples[max(0, i - 1): i + 1], key=lambda s: abs(s.t - mid))]

        def top(values: list[int | None]) -> float | None:
            known = [v for v in values if v is not None]
            return round(max(known) / MB, 1) if known else None

        return {
            "rss_mb": top([s.rss for s in inside]),
            "gpu_mb": top([s.gpu for s in inside]),
            "torch_mb": top([s.torch for s in inside]),
        }


def torch_peak_mb() -> float | None:
    """``torch.cuda.max_memory_allocated`` over the run (MiB), None without a CUDA torch in use."""
    torch = _torch_cuda()
    return round(torch.cuda.max_memory_allocated() / MB, 1) if torch is not None else None


def llama_buffers(llm: Any) -> dict[str, Any]:
    """What llama.cpp reports for a loaded `LlamaCppLLM`: weight bytes, parameters, context state size, GPU layers.
    Empty for other LLMs (a fake, or a backend without llama.cpp)."""
    inner = getattr(llm, "_llama", None)
    if inner is None:
        return {}
    out: dict[str, Any] = {"n_ctx": getattr(llm, "n_ctx", None), "n_gpu_layers": getattr(llm, "n_gpu_layers", None),
                           "n_threads": getattr(llm, "n_threads", None),
                           "n_threads_batch": getattr(llm, "n_threads_batch", None)}
    model = getattr(inner, "_model", None)
    for key, method in (("model_bytes", "size"), ("n_params", "n_params")):
        fn = getattr(model, method, None)
        if callable(fn):
            out[key] = int(fn())
    try:
        import llama_cpp

        ctx = getattr(getattr(inner, "_ctx", None), "ctx", None)
        if ctx is not None and hasattr(llama_cpp, "llama_state_get_size"):
            out["state_bytes"] = int(llama_cpp.llama_state_get_size(ctx))  # KV cells in use + logits + embeddings
    except (ImportError, AttributeError, OSError):
        pass
    return out

"""Measured memory bandwidth, and the decode-speed bound it sets.

Decoding one token reads every weight of the model once (the KV cache too, small at these contexts), so tokens/s
can not exceed ``bandwidth / bytes read per token``. The benchmark reports measured decode tokens/s as a share of
that bound, with the bandwidth measured on the device the model runs on:

- CPU: the best of several passes over arrays far larger than the caches, on ``threads`` threads (numpy releases
  the GIL): *read* (a SIMD max over bytes: memory-bound, bytes read / s) and *copy* (STREAM convention: bytes
  read + written / s). Decoding streams weights in, so *read*, measured with as many threads as llama.cpp decodes
  with, is the bound's bandwidth (one core can not saturate the memory bus: its own limit is what decode meets).
- GPU: a ``torch`` max over a 1 GiB tensor (read) and a device copy (read + written / s) when torch sees a GPU;
  the higher is the bound's bandwidth (a GPU runs thousands of threads: both saturate the bus).

Example:
    >>> bw = cpu_bandwidth(threads=1)  # doctest: +SKIP
    >>> bw["bound_gbps"]  # doctest: +SKIP
    10.4
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

GB = 1e9


def _timed(fn: Any, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def cpu_bandwidth(threads: int = 1, mib: int = 256, repeats: int = 5) -> dict[str, Any]:
    """CPU memory bandwidth in GB/s (10^9 bytes) with ``threads`` threads over ``mib`` MiB arrays."""
    n = (mib << 20) // 4
    src = np.ones(n, dtype=np.float32)
    dst = np.zeros(n, dtype=np.float32)  # touched: no page faults inside the timing
    raw = src.view(np.uint8)
    bounds = np.linspace(0, n, threads + 1, dtype=np.int64)
    slices = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        def read() -> None:
            list(pool.map(lambda s: int(raw[s.start * 4: s.stop * 4].max()), slices))

        def copy() -> None:
            list(pool.map(lambda s: np.copyto(dst[s], src[s]), slices))

        read()
        copy()  # warm
        read_s, copy_s = _timed(read, repeats), _timed(copy, repeats)
    nbytes = n * 4
    read_gbps, copy_gbps = nbytes / read_s / GB, 2 * nbytes / copy_s / GB
    return {"device": "cpu", "threads": threads, "array_mib": mib, "read_gbps": round(read_gbps, 2),
            "copy_gbps": round(copy_gbps, 2), "bound_gbps": round(read_gbps, 2)}


def gpu_bandwidth(mib: int = 1024, repeats: int = 10) -> dict[str, Any] | None:
    """GPU memory bandwidth in GB/s (a read and a device copy); None when torch has no usable GPU. The buffers are
    freed when this returns (call ``torch.cuda.empty_cache()`` to give them back to the driver)."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    src = torch.empty(mib << 20, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    torch.cuda.synchronize()

    def copy() -> None:
        dst.copy_(src)
        torch.cuda.synchronize()

    def read() -> None:
        src.max()
        torch.cuda.synchronize()

    read()
    copy_s, read_s = _timed(copy, repeats), _timed(read, repeats)
    copy_gbps, read_gbps = 2 * (mib << 20) / copy_s / GB, (mib << 20) / read_s / GB
    return {"device": "cuda", "name": torch.cuda.get_device_name(0), "array_mib": mib,
            "read_gbps": round(read_gbps, 1), "copy_gbps": round(copy_gbps, 1),
            "bound_gbps": round(max(read_gbps, copy_gbps), 1)}


def decode_bound(bytes_per_token: int, gpu_share: float, cpu_gbps: float | None, gpu_gbps: float | None) -> float | None:
    """Tokens/s the memory allows when ``gpu_share`` of the per-token bytes live on the GPU and the rest on the CPU.

    Example:
        >>> round(decode_bound(1_000_000_000, 0.0, 10.0, None), 1)
        10.0
    """
    seconds = 0.0
    if gpu_share > 0:
        if not gpu_gbps:
            return None
        seconds += bytes_per_token * gpu_share / (gpu_gbps * GB)
    if gpu_share < 1:
        if not cpu_gbps:
            return None
        seconds += bytes_per_token * (1 - gpu_share) / (cpu_gbps * GB)
    return 1 / seconds if seconds > 0 else None


def bound_report(llm: Any, calls: list[Any], measure: bool = True) -> dict[str, Any]:
    """Measured decode tokens/s against the bandwidth bound, for the generation calls and for all LLM calls.

    Bytes per decoded token: the weights read (`LLMShape.bytes_read_per_token`, from the GGUF header) plus the
    KV cache at the call's mean context (prompt + half the completion). The bandwidth is measured here: CPU read
    with the LLM's decode thread count (and with every core, for reference), GPU when layers are offloaded.
    """
    import os

    from local_rag.errors import LocalRagError
    from local_rag.modelstore.shapes import gguf_shape

    path = getattr(llm, "path", None)
    if path is None:
        return {"skipped": "the LLM is not a GGUF model on llama.cpp"}
    try:
        shape = gguf_shape(path)
    except LocalRagError as exc:
        return {"skipped": str(exc)}
    threads = int(getattr(llm, "n_threads", 1) or 1)
    gpu_layers = int(getattr(llm, "n_gpu_layers", 0) or 0)
    share = 1.0 if gpu_layers < 0 else min(1.0, gpu_layers / shape.n_layers if shape.n_layers else 0.0)
    out: dict[str, Any] = {"model": shape.name, "bytes_read_per_token": shape.bytes_read_per_token,
                           "kv_bytes_per_context_token": shape.kv_bytes_per_token,
                           "kv_cache_bytes_at_n_ctx": shape.kv_bytes(int(getattr(llm, "n_ctx", 0) or 0)),
                           "decode_threads": threads,
                           "gpu_share_of_weights": round(share, 3)}
    if not measure:
        return out
    cpu = cpu_bandwidth(threads)
    out["cpu_bandwidth"] = cpu
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if cores != threads:
        out["cpu_bandwidth_all_cores"] = cpu_bandwidth(cores)
    gpu = gpu_bandwidth() if share > 0 else None
    out["gpu_bandwidth"] = gpu
    cpu_gbps, gpu_gbps = cpu["bound_gbps"], (gpu or {}).get("bound_gbps")
    for label, group in (("generate", [c for c in calls if c.stage == "generate"]), ("all_calls", list(calls))):
        tokens = sum(c.completion_tokens for c in group)
        decode_s = sum(c.decode_s for c in group)
        if not tokens or decode_s <= 0:
            continue
        bound_s = 0.0
        for c in group:
            context = c.prompt_tokens + c.completion_tokens / 2
            per_token = shape.bytes_read_per_token + (shape.kv_bytes_per_token or 0) * context
            tps = decode_bound(int(per_token), share, cpu_gbps, gpu_gbps)
            if tps is None:
                bound_s = 0.0
                break
            bound_s += c.completion_tokens / tps
        measured = tokens / decode_s
        bound = tokens / bound_s if bound_s > 0 else None
        out[label] = {"decode_tokens_per_s": round(measured, 2), "bound_tokens_per_s": None if bound is None else round(bound, 2),
                      "ratio": None if bound is None else round(measured / bound, 3)}
    return out

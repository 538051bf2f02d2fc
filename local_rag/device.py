"""Picking CPU or GPU for each backend, and forcing hub libraries offline.

Every GPU path is chosen only when the library's GPU build is installed *and* a GPU is visible; otherwise the CPU
path runs. Nothing here imports a heavy library at module import.
"""

from __future__ import annotations

import os
import sys

_OFFLINE_VARS = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
}


_offline = True  # settings.offline; `set_offline` records it when settings are loaded


def set_offline(enabled: bool) -> None:
    """Apply ``settings.offline``: on, the hub variables are set now, before any hub library is imported (settings
    load first in every command); off, backends leave the network to the hub libraries' own defaults."""
    global _offline
    _offline = enabled
    if enabled:
        enforce_offline()


def enforce_offline() -> None:
    """Make Hugging Face libraries refuse the network (unless ``settings.offline`` is off). Called when settings load
    and by every backend before it imports a hub library.

    ``local-rag models pull`` is the only command that lifts this, for its own process.
    """
    if not _offline:
        return
    for key, value in _OFFLINE_VARS.items():
        os.environ[key] = value
    # huggingface_hub reads the variable once at import: if it is already imported, set its constant too.
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        vars(constants)["HF_HUB_OFFLINE"] = True
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def quiet_transformers() -> None:
    """Silence transformers' per-load progress bar ("Loading weights") after it is imported."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()


def cpu_has_amx() -> bool:
    """True on CPUs with AMX bf16 tiles, where bf16 autocast is ~3x faster than fp32 for small encoders (without
    AMX, bf16 is emulated and ~3x *slower*: measured 15 vs 49 passages/s for MiniLM on a 2-core Xeon)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            return "amx_bf16" in fh.read()
    except OSError:
        return False


def torch_device(preference: str = "auto") -> str:
    """``cuda`` when asked for or when ``auto`` and torch sees a GPU; else ``cpu``."""
    if preference == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if preference == "cuda":
        from local_rag.errors import LocalRagError

        raise LocalRagError("device 'cuda' was asked for but torch sees no GPU (is the CUDA build of torch installed?)")
    return "cpu"


def faiss_gpu_count() -> int:
    """Number of GPUs the installed faiss build can use (0 for faiss-cpu)."""
    try:
        import faiss
    except ImportError:
        return 0
    get = getattr(faiss, "get_num_gpus", None)
    return int(get()) if get is not None else 0


def onnx_providers() -> list[str]:
    """ONNX Runtime providers to use, CUDA first when it is really usable.

    onnxruntime-gpu lists CUDAExecutionProvider even without a GPU (and then falls back silently), so CUDA is only
    chosen when NVML also sees a device.
    """
    import onnxruntime as ort

    available = ort.get_available_providers()
    if "CUDAExecutionProvider" in available and nvml_gpus():
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]


def nvml_gpus() -> list[dict[str, object]]:
    """GPUs seen by NVML: name, total and free memory in bytes, driver. Empty without NVML or a GPU."""
    try:
        import pynvml
    except ImportError:
        return []
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - NVML raises its own error classes when no driver is present
        return []
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        out = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
            name = pynvml.nvmlDeviceGetName(handle)
            out.append(
                {
                    "index": i,
                    "name": name.decode() if isinstance(name, bytes) else name,
                    "total": int(mem.total),
                    "free": int(mem.free),
                    "driver": driver.decode() if isinstance(driver, bytes) else driver,
                }
            )
        return out
    finally:
        pynvml.nvmlShutdown()

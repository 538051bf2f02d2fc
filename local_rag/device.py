"""Picking CPU or GPU for each backend, and forcing hub libraries offline.

Every GPU path is chosen only when the library's GPU build is installed *and* a GPU is visible; otherwise the CPU
path runs. Nothing here imports a heavy library at module import.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from typing import Any

log = logging.getLogger("local_rag.device")

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
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # transformers does not annotate it


SIMD_FLAGS = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "avx_vnni",
              "amx_tile", "amx_int8", "amx_bf16")


def cpu_flag_set() -> set[str] | None:
    """Every flag of this CPU as /proc/cpuinfo lists it; None where it cannot be read (not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def cpu_flags() -> list[str]:
    """The vector-instruction flags of this CPU that llama.cpp and torch use (AVX2, AVX-512, VNNI, AMX), as
    /proc/cpuinfo lists them; [] where it cannot be read. Two CPUs of one name can differ here (a VM may hide some)."""
    have = cpu_flag_set() or set()
    return [f for f in SIMD_FLAGS if f in have]


def cpu_has_amx() -> bool:
    """True on CPUs with AMX bf16 tiles, where bf16 autocast is ~3x faster than fp32 for small encoders (without
    AMX, bf16 is emulated and ~3x *slower*: measured 15 vs 49 passages/s for MiniLM on a 2-core Xeon). The kernel
    must grant the tile state too (`amx_tiles_granted`): a VM can list the flag and refuse it."""
    return "amx_bf16" in cpu_flags() and amx_tiles_granted()


def amx_tiles_granted() -> bool:
    """True where this CPU has AMX int8 tiles (with AVX512-VNNI) and the kernel lets a process use them: the Linux
    ``arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`` request that llama.cpp's AMX kernels make at load. A VM or
    an old kernel can list the flags and refuse the request; llama.cpp then runs without AMX."""
    have = cpu_flag_set() or set()
    if not {"amx_int8", "amx_tile", "avx512_vnni"} <= have:
        return False
    import ctypes
    import platform

    if platform.machine() != "x86_64":
        return False
    arch_prctl, req_xcomp_perm, xtiledata = 158, 0x1023, 18  # x86-64 syscall number, <asm/prctl.h>, the tile state
    return int(ctypes.CDLL(None, use_errno=True).syscall(arch_prctl, req_xcomp_perm, xtiledata)) == 0


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


def session_providers(session: Any, requested: list[str]) -> list[str]:
    """The providers an ONNX Runtime session really uses, read back from it. onnxruntime drops CUDA without an error
    when cuDNN or a CUDA library is missing: that is logged as a warning here."""
    used = list(session.get_providers())
    if "CUDAExecutionProvider" in requested and "CUDAExecutionProvider" not in used:
        log.warning("onnxruntime dropped CUDAExecutionProvider (cuDNN or a CUDA library is missing?): this model "
                    "runs on the CPU")
    return used


def gpu_listed() -> bool:
    """True when ``nvidia-smi -L`` lists a GPU (independent of NVML bindings in Python)."""
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def silent_fallbacks(facts: dict[str, Any]) -> list[str]:
    """Warnings for every place that would quietly run on the CPU although a GPU is there.

    ``facts``: ``gpu_listed`` (nvidia-smi sees a GPU), ``nvml`` (nvidia-ml-py imports), ``nvcc`` (on PATH),
    ``torch_cuda_build`` / ``torch_cuda_available``, ``faiss_gpus``, ``onnx_available`` (providers onnxruntime lists),
    ``onnx_session`` (providers a probe session kept, None if not probed), ``llama_offload`` (None = not installed).

    Example:
        >>> silent_fallbacks({"gpu_listed": True, "nvml": False})[0].startswith("nvidia-ml-py")
        True
    """
    if not facts.get("gpu_listed"):
        return []
    out = []
    if not facts.get("nvml"):
        out.append("nvidia-ml-py is not installed: local-rag cannot read free VRAM, so llama.cpp offloads nothing "
                   "(pip install nvidia-ml-py, or the `gpu` extra)")
    if facts.get("llama_offload") is False:
        why = "nvcc was not on PATH when it was built" if not facts.get("nvcc") else "it was built for the CPU"
        out.append(f"llama.cpp cannot offload to the GPU ({why}): the LLM runs on the CPU; install the CUDA toolkit "
                   "and rerun scripts/install_llama_cpp.sh")
    if facts.get("torch_cuda_build") is None and "torch_cuda_build" in facts:
        out.append("torch is a CPU build: the embedder and cross-encoder run on the CPU (install a CUDA torch wheel)")
    elif facts.get("torch_cuda_build") and not facts.get("torch_cuda_available"):
        out.append("torch is a CUDA build but sees no GPU (driver too old for its CUDA?): encoders run on the CPU")
    if facts.get("faiss_gpus") == 0:
        out.append("faiss sees no GPU (faiss-cpu installed?): dense search runs on the CPU (the `gpu` extra)")
    available = facts.get("onnx_available") or []
    if available and "CUDAExecutionProvider" not in available:
        out.append("onnxruntime is the CPU build: ONNX models run on the CPU (onnxruntime-gpu, the `gpu` extra)")
    elif facts.get("onnx_session") is not None and "CUDAExecutionProvider" not in facts["onnx_session"]:
        out.append("onnxruntime lists CUDA but a session dropped it (cuDNN or a CUDA library missing): ONNX models "
                   "run on the CPU")
    return out


def onnx_probe_providers() -> list[str] | None:
    """Providers a tiny ONNX Runtime session keeps when asked for CUDA first; None without onnx/onnxruntime or
    without the CUDA provider listed (then there is nothing to probe)."""
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return None
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return None

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - onnxruntime raises its own error classes
        return []
    return list(session.get_providers())


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

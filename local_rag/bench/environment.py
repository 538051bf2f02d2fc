"""The machine and library builds a benchmark ran on, written into every report."""

from __future__ import annotations

import importlib.metadata
from typing import Any

_PACKAGES = ("numpy", "torch", "faiss-cpu", "faiss-gpu-cu12", "sentence-transformers", "transformers", "onnxruntime",
             "onnxruntime-gpu", "llama_cpp_python", "bm25s", "nvidia-ml-py")


def library_builds() -> dict[str, Any]:
    """Installed versions, plus what the builds can do: torch's CUDA, faiss GPUs, llama.cpp's offload and flags."""
    out: dict[str, Any] = {}
    for name in _PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    try:
        import torch

        out["torch_cuda"] = torch.version.cuda
        out["torch_threads"] = torch.get_num_threads()
    except ImportError:
        pass
    from local_rag.device import faiss_gpu_count

    out["faiss_gpus"] = faiss_gpu_count()
    try:
        from local_rag.llm.native import make_cxx_runtime_global

        make_cxx_runtime_global()
        import llama_cpp

        out["llama_cpp_gpu_offload"] = bool(llama_cpp.llama_supports_gpu_offload())
        info = llama_cpp.llama_print_system_info()
        out["llama_cpp_system_info"] = (info.decode() if isinstance(info, bytes) else str(info)).strip()
    except (ImportError, AttributeError, OSError):
        pass
    return out


def describe_machine() -> dict[str, Any]:
    """CPU, cores, RAM, GPUs with driver (NVML), Python and platform, and the library builds."""
    import psutil

    from local_rag.sysinfo import machine

    out = dict(machine())
    out["physical_cores"] = psutil.cpu_count(logical=False)
    out["ram_gib"] = round(psutil.virtual_memory().total / 2**30, 1)
    out["libraries"] = library_builds()
    return out


def _runs_on(model: Any) -> Any:
    providers = getattr(model, "providers", None)  # ONNX Runtime: read back from the session
    return list(providers) if providers is not None else getattr(model, "device", None)


def backends_used(pipeline: Any, llm: Any = None) -> dict[str, Any]:
    """Where each loaded stage really ran: the torch device or the ONNX Runtime providers its session kept, FAISS on
    the GPU or not, llama.cpp's offloaded layers (so a silent CPU fallback shows in every report)."""
    out: dict[str, Any] = {}
    retriever = getattr(pipeline, "_retriever", None)
    for retr in getattr(retriever, "retrievers", {}).values():
        embedder = getattr(retr, "embedder", None)
        if embedder is not None:
            out["embedder"] = _runs_on(embedder)
        dense = getattr(retr, "dense", None)
        if dense is not None and hasattr(dense, "on_gpu"):
            out["faiss"] = "gpu" if dense.on_gpu else "cpu"
    reranker = getattr(pipeline, "_reranker", None)
    if reranker is not None:
        out["reranker"] = _runs_on(reranker)
    llm = llm if llm is not None else getattr(pipeline, "_llm", None)
    if llm is not None:
        out["llm"] = {"n_gpu_layers": getattr(llm, "n_gpu_layers", None)}
    return out

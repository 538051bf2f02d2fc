"""``local-rag plan``: before anything is loaded, what each profile needs in memory and whether it fits.

Per profile: the LLM weights and KV cache at the context llama.cpp will really use (``llm.n_ctx``, capped at the
model's trained context; GGUF metadata, `local_rag.modelstore.shapes`), the embedding and reranking models, the FAISS
index (on the GPU: an HNSW index as its flat copy, plus FAISS's fixed scratch memory) and BM25 index, and runtime
overheads, each placed on the GPU or the CPU the way the backends place them (llama.cpp keeps the token embeddings on
the CPU; torch models in fp16 on the GPU). The encoders and FAISS are placed first, as the pipeline loads them first
on a GPU; the LLM's layers get what is left.
The verdict: everything fits; or the LLM layers that fit on the GPU (the rest run on the CPU); and the largest
context that fits with every layer on the GPU.

Example:
    >>> p = plan_profile(load_settings("gpu-8gb"), vram=8 << 30, ram=16 << 30)  # doctest: +SKIP
    >>> p.verdict  # doctest: +SKIP
    'fits (every layer on the GPU) at n_ctx 8192; GPU 7.74 GiB of 8.00 GiB; RAM 926 MiB of 16.00 GiB; ...'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError, LocalRagError
from local_rag.index.dense import GPU_TEMP_MEMORY
from local_rag.modelstore.shapes import encoder_size, llm_shape
from local_rag.settings import Settings

GiB = 1 << 30
MiB = 1 << 20
LLAMA_GPU_RESERVE = 768 * MiB  # llama.cpp CUDA context and compute buffers (the reserve `pick_gpu_layers` keeps)
TORCH_GPU_CONTEXT = 400 * MiB  # the CUDA context of torch, when an encoder runs on the GPU (estimate)
PROCESS_BASE_RAM = 600 * MiB  # Python + torch + transformers + faiss imported, before any model (measured ~0.6 GB here)
CHUNKS_PER_PASSAGE = 1.16  # MTRAG clapnq pool at 256/64-token chunks: 11.6k chunks for 10k passages


def parse_size(text: str) -> int:
    """Bytes from ``8GB``, ``8G``, ``7.5GiB``, ``512MB`` or ``24`` (GB). GB means GiB, as GPU memory is sold.

    Example:
        >>> parse_size("8GB") == 8 * 2**30
        True
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgt]?)(i?b)?\s*", text.lower())
    if not m:
        raise BadInputError(f"not a memory size: {text!r} (write e.g. 8GB, 512MB)")
    unit = {"": GiB if not m.group(3) else 1, "k": 1 << 10, "m": MiB, "g": GiB, "t": 1 << 40}[m.group(2)]
    return int(float(m.group(1)) * unit)


def human(n: float | None) -> str:
    if n is None:
        return "unknown"
    return f"{n / GiB:.2f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


@dataclass
class Component:
    name: str
    bytes: int | None
    where: str  # GPU | CPU
    note: str = ""


@dataclass
class Plan:
    profile: str
    vram: int
    ram: int
    n_ctx: int
    components: list[Component] = field(default_factory=list)
    gpu_layers: int = 0
    n_layers: int = 0
    max_n_ctx: int | None = None
    fits: bool = True
    verdict: str = ""
    notes: list[str] = field(default_factory=list)

    def total(self, where: str) -> int:
        return sum(c.bytes or 0 for c in self.components if c.where == where)

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile, "vram_bytes": self.vram, "ram_bytes": self.ram, "n_ctx": self.n_ctx,
            "components": [c.__dict__ for c in self.components], "gpu_bytes": self.total("GPU"),
            "cpu_bytes": self.total("CPU"), "gpu_layers": self.gpu_layers, "n_layers": self.n_layers,
            "max_n_ctx_all_layers_on_gpu": self.max_n_ctx, "fits": self.fits, "verdict": self.verdict,
            "notes": self.notes,
        }


def index_bytes(settings: Settings, passages: int | None = None) -> tuple[int | None, int | None, str]:
    """(FAISS bytes, BM25 bytes, where the figures come from) for the settings' index, or for ``passages``."""
    import json

    folder = settings.index_dir
    manifest_file = folder / "manifest.json"
    if passages is None and manifest_file.exists():
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
        dense = manifest.get("dense") or {}
        faiss_file = folder / "dense" / "faiss.index"
        faiss = faiss_file.stat().st_size if faiss_file.exists() else int(manifest["chunks"]) * int(dense.get("dimension", 0)) * 4
        sparse = sum(p.stat().st_size for p in (folder / "sparse").rglob("*") if p.is_file()) if (folder / "sparse").exists() else 0
        return faiss, sparse, f"index {settings.index}: {manifest['chunks']:,} chunks"
    if passages is None:
        return None, None, f"no index {settings.index} (give --index or --passages N)"
    from local_rag.index.factory import resolve_factory
    from local_rag.index.sizing import bm25_bytes, faiss_bytes, postings_per_chunk

    chunks = int(passages * CHUNKS_PER_PASSAGE)
    dim = _embedding_dim(settings)
    factory = resolve_factory(settings.dense.factory, chunks)
    # the scale benchmark's curves (local_rag.index.sizing, docs/benchmarks/scale.md)
    return (faiss_bytes(factory, chunks, dim), bm25_bytes(chunks, postings_per_chunk(settings.chunker.size)),
            f"estimated for {passages:,} passages (~{chunks:,} chunks of dimension {dim}, FAISS {factory})")


def _flat_bytes(settings: Settings, passages: int | None) -> int | None:
    """Bytes of a flat float32 copy of the index's vectors."""
    import json

    manifest_file = settings.index_dir / "manifest.json"
    if passages is None and manifest_file.exists():
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
        return int(manifest["chunks"]) * int((manifest.get("dense") or {}).get("dimension", 0)) * 4
    if passages is None:
        return None
    return int(passages * CHUNKS_PER_PASSAGE) * _embedding_dim(settings) * 4


def _embedding_dim(settings: Settings) -> int:
    return {"bge-m3": 1024, "all-MiniLM-L6-v2": 384}.get(settings.embedder.model, 768)


def likelihood_reranker(settings: Settings, on_gpu: bool) -> list[Component]:
    """The `likelihood` reranker's second GGUF (`local_rag.rerank.likelihood`): its weights and its KV cache at the
    context it opens (``reranker.max_length`` + 256), every layer on the GPU when llama.cpp offloads it (the token
    table stays on the CPU, as for the LLM), else all on the CPU."""
    config = settings.reranker
    name, where = f"reranker {config.model} (likelihood: a second GGUF)", "GPU" if on_gpu else "CPU"
    try:
        shape = llm_shape(config.model, settings.models_dir)
    except LocalRagError as exc:
        return [Component(name, None, where, str(exc))]
    n_ctx = config.max_length + 256
    est = "" if shape.source.startswith("gguf:") else "estimate: "
    kv = shape.kv_bytes(n_ctx) or 0
    if not on_gpu:
        return [Component(name, shape.layer_bytes + shape.input_bytes + shape.output_bytes + kv, "CPU",
                          f"{est}weights + KV cache at n_ctx {n_ctx}")]
    return [Component(name, shape.layer_bytes + shape.output_read_bytes + kv + LLAMA_GPU_RESERVE, "GPU",
                      f"{est}layers, output head, KV cache at n_ctx {n_ctx}, llama.cpp's CUDA reserve"),
            Component(f"reranker {config.model}: token embeddings", shape.input_bytes, "CPU",
                      f"{est}llama.cpp keeps the input table on the CPU")]


def plan_profile(settings: Settings, vram: int, ram: int, passages: int | None = None) -> Plan:
    """The memory plan for ``settings`` on a machine with ``vram`` GPU bytes (0 = no GPU) and ``ram`` bytes.

    Raises:
        ModelError: the LLM is neither in models/ nor in the table of known models.
    """
    gpu = vram > 0
    plan = Plan(settings.profile, vram, ram, settings.llm.n_ctx)
    shape = llm_shape(settings.llm.model, settings.models_dir)
    n_ctx = min(settings.llm.n_ctx, shape.context_length) if shape.context_length else settings.llm.n_ctx
    if n_ctx < settings.llm.n_ctx:
        plan.notes.append(f"llm.n_ctx {settings.llm.n_ctx} exceeds the model's trained context; llama.cpp uses {n_ctx}")
    plan.n_ctx, plan.n_layers = n_ctx, shape.n_layers
    est = "" if shape.source.startswith("gguf:") else "estimate: "
    src = "GGUF header" if not est else "known parameters, the file is not in models/"

    # what sits beside the LLM
    others: list[Component] = []
    torch_on_gpu = False
    for role, name, device, enabled in (
        ("embedder", settings.embedder.model, settings.embedder.device, settings.dense.enabled),
        ("reranker", settings.reranker.model, settings.reranker.device,
         settings.pipeline.cross_encoder),
    ):
        if not enabled:
            continue
        on_gpu = gpu and device != "cpu"
        if role == "reranker" and settings.reranker.backend == "likelihood":
            from local_rag.rerank.likelihood import shares_llm

            if shares_llm(settings.reranker, settings.llm):
                plan.notes.append("the likelihood reranker scores with the LLM itself: no second GGUF")
            else:
                others += likelihood_reranker(settings, on_gpu)
            continue
        torch_on_gpu |= on_gpu
        try:
            size = encoder_size(name, settings.models_dir)
            others.append(Component(f"{role} {name}", size.runtime_bytes(on_gpu), "GPU" if on_gpu else "CPU",
                                    f"{'fp16' if on_gpu else 'fp32'} weights ({size.source})"))
        except LocalRagError as exc:
            others.append(Component(f"{role} {name}", None, "GPU" if on_gpu else "CPU", str(exc)))
    faiss, sparse, where_from = index_bytes(settings, passages)
    faiss_gpu = gpu and settings.dense.use_gpu != "no" and settings.dense.enabled
    from local_rag.index.factory import resolve_factory

    hnsw = resolve_factory(settings.dense.factory, int((passages or 0) * CHUNKS_PER_PASSAGE)).upper().startswith("HNSW")
    if faiss_gpu and hnsw and faiss is not None:
        # no GPU HNSW: the stored vectors are searched by a flat GPU index (local_rag.index.dense.gpu_placement)
        flat = _flat_bytes(settings, passages)
        others.append(Component("FAISS index (HNSW -> flat on the GPU)", flat, "GPU",
                                where_from + "; FAISS has no GPU HNSW: an exact flat copy of the vectors"))
        others.append(Component("FAISS index (HNSW graph, kept on the CPU)", faiss, "CPU", where_from))
    else:
        others.append(Component("FAISS index", faiss, "GPU" if faiss_gpu else "CPU",
                                where_from + (" (on the GPU with a faiss-gpu build)" if faiss_gpu else "")))
    if faiss_gpu:
        others.append(Component("FAISS GPU scratch memory", GPU_TEMP_MEMORY, "GPU",
                                "StandardGpuResources temp memory, fixed by local_rag.index.dense"))
    others.append(Component("BM25 index", sparse, "CPU", where_from + " (memory-mapped: at most this)"))
    if passages is not None:
        from local_rag.index.sizing import chunk_list_bytes

        chunks = int(passages * CHUNKS_PER_PASSAGE)
        others.append(Component("chunk list", chunk_list_bytes(chunks), "CPU",
                                f"offsets of {chunks:,} chunks (rows read from chunks.jsonl when a search returns them)"))
    if torch_on_gpu:
        others.append(Component("torch CUDA context", TORCH_GPU_CONTEXT, "GPU", "estimate"))
    others.append(Component("process (Python, torch, faiss imported)", PROCESS_BASE_RAM, "CPU", "estimate"))

    # the LLM: as many layers on the GPU as fit beside the others
    kv_full = shape.kv_bytes(n_ctx)
    kv_layer = (kv_full or 0) / shape.n_layers if shape.n_layers else 0.0
    if gpu and settings.llm.n_gpu_layers != 0:
        room = vram - sum(c.bytes or 0 for c in others if c.where == "GPU") - LLAMA_GPU_RESERVE
        per_layer = shape.bytes_per_layer + kv_layer
        need_all = shape.layer_bytes + (kv_full or 0) + shape.output_read_bytes
        if room >= need_all:
            layers = shape.n_layers
        else:
            layers = max(0, min(shape.n_layers, int(room // per_layer))) if per_layer else 0
        if settings.llm.n_gpu_layers > 0:
            layers = min(layers, settings.llm.n_gpu_layers)
        plan.gpu_layers = layers
        weights_gpu = shape.layer_bytes + shape.output_read_bytes
        if kv_layer:
            per_token = shape.kv_bytes_per_token or 1
            fit = max(0, int((room - weights_gpu) // per_token) // 256 * 256)
            plan.max_n_ctx = min(fit, shape.context_length or fit)
    layers = plan.gpu_layers
    cpu_layers = shape.n_layers - layers
    full = layers == shape.n_layers and layers > 0
    how = f"{est}{src}"
    kv_how = f"{est}2 x {{}} layers x {shape.n_head_kv} KV heads x {shape.head_dim_k} dims x 2 B"
    comps = [
        Component(f"LLM {settings.llm.model}: {layers} layers", int(shape.bytes_per_layer * layers), "GPU", how)
        if layers else None,
        Component(f"LLM {settings.llm.model}: {cpu_layers} layers", int(shape.bytes_per_layer * cpu_layers), "CPU",
                  how) if cpu_layers else None,
        Component("LLM token embeddings", shape.input_bytes, "CPU", f"{est}llama.cpp keeps the input table on the CPU"),
        Component("LLM output head" + (" (tied: a GPU copy of the token table)" if shape.tied else ""),
                  shape.output_read_bytes, "GPU", how) if full else
        Component("LLM output head", shape.output_bytes, "CPU", how),
        Component(f"KV cache, n_ctx {n_ctx} (f16)", shape.kv_bytes(n_ctx, layers), "GPU", kv_how.format(layers))
        if layers else None,
        Component(f"KV cache, n_ctx {n_ctx} (f16)", shape.kv_bytes(n_ctx, cpu_layers), "CPU",
                  kv_how.format(cpu_layers)) if cpu_layers else None,
        Component("llama.cpp CUDA context + compute buffers", LLAMA_GPU_RESERVE, "GPU", "estimate") if layers else None,
    ]
    plan.components = [c for c in comps if c is not None] + others
    if kv_full is None:
        plan.notes.append("the GGUF header has no attention.head_count_kv / head dimension: KV cache unknown")

    gpu_total, cpu_total = plan.total("GPU"), plan.total("CPU")
    ram_ok = cpu_total <= ram
    plan.fits = ram_ok and gpu_total <= max(vram, 0)
    where = "CPU only" if not gpu else (
        "every layer on the GPU" if layers == shape.n_layers else
        f"offload: {layers} of {shape.n_layers} layers on the GPU, {cpu_layers} on the CPU")
    parts = [f"{'fits' if plan.fits else 'does NOT fit'} ({where}) at n_ctx {n_ctx}",
             f"GPU {human(gpu_total)} of {human(vram)}" if gpu else "",
             f"RAM {human(cpu_total)} of {human(ram)}"]
    if gpu and plan.max_n_ctx is not None:
        parts.append(f"largest n_ctx with every layer on the GPU: {plan.max_n_ctx}" if plan.max_n_ctx else
                     "the weights alone do not fit on the GPU")
    if not gpu and kv_full is not None:
        room = ram - (cpu_total - kv_full)
        per_token = shape.kv_bytes_per_token or 1
        plan.max_n_ctx = max(0, min(int(room // per_token) // 256 * 256, shape.context_length or 1 << 30))
        parts.append(f"largest n_ctx that fits in RAM: {plan.max_n_ctx}")
    if not ram_ok:
        plan.notes.append("RAM is short: llama.cpp maps the GGUF, so the OS pages weights in and out (slow)")
    plan.verdict = "; ".join(p for p in parts if p)
    return plan


def plan_table(plan: Plan) -> str:
    """The plan as a Markdown table followed by the verdict."""
    lines = [f"### profile {plan.profile} (n_ctx {plan.n_ctx})", "", "| component | bytes | where | from |", "|---|---:|---|---|"]
    for c in plan.components:
        lines.append(f"| {c.name} | {human(c.bytes)} | {c.where} | {c.note} |")
    lines.append(f"| **total GPU** | **{human(plan.total('GPU'))}** | GPU | |")
    lines.append(f"| **total CPU RAM** | **{human(plan.total('CPU'))}** | CPU | |")
    lines += ["", f"**{plan.verdict}**"] + [f"- {n}" for n in plan.notes]
    return "\n".join(lines) + "\n"


def models_dir_note(models_dir: Path) -> str:
    return f"models from {models_dir}; figures marked 'estimate' come from known parameters, not from the files"

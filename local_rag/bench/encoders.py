"""Encoder speed and GPU memory on this machine's devices: embedding throughput and reranking latency per candidate
count, on the CPU and (where torch sees one) the GPU, with the GPU memory NVML sees after each load.

Texts are the bundled documentation cut into ~1,600-character passages (longer than ``max_length`` tokens, so every
pair is truncated to it, as 384-token chunks are). Weights do not change the speed: an untrained cross-encoder head
on MiniLM times like a trained one. `scripts/gpu_check.sh` runs this on a lent GPU machine.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal


def doc_passages(n: int, size: int = 1600) -> tuple[list[str], list[str]]:
    """``n`` passages of the bundled docs (repeated when short) and one question per markdown heading (used in turn)."""
    text, headings = "", []
    for item in sorted(resources.files("local_rag.data.docs").iterdir(), key=lambda p: p.name):
        if item.name.endswith(".md"):
            body = item.read_text(encoding="utf-8")
            text += body + "\n"
            headings += [f"how does {h.strip().lower()} work?" for h in re.findall(r"^#+ (.+)$", body, re.M)]
    text = re.sub(r"\s+", " ", text)
    chunks = [text[i : i + size] for i in range(0, len(text) - size, size)]
    if not chunks or not headings:
        raise ValueError(f"the bundled docs hold fewer than {size} characters or no heading: nothing to time")
    return [chunks[i % len(chunks)] for i in range(n)], headings


def _gpu_used() -> int | None:
    from local_rag.device import nvml_gpus

    gpus = nvml_gpus()
    return int(gpus[0]["total"]) - int(gpus[0]["free"]) if gpus else None  # type: ignore[call-overload]


def embed_throughput(embedder: Any, passages: Sequence[str], batch: int = 64, repeats: int = 3) -> float:
    """Passages a second for ``embedder.embed_batch`` in batches of ``batch`` (best of ``repeats``, one warm-up)."""
    embedder.embed_batch(list(passages[:batch]), "passage")
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for i in range(0, len(passages), batch):
            embedder.embed_batch(list(passages[i : i + batch]), "passage")
        best = min(best, time.perf_counter() - started)
    return round(len(passages) / best, 1)


def encoder_bench(
    models_dir: str | Path,
    embedder: str,
    cross_encoder: str | Path,
    devices: Sequence[Literal["auto", "cpu", "cuda"]],
    counts: Sequence[int] = (10, 20, 50),
    max_lengths: Sequence[int] = (256, 512),
    n_passages: int = 2048,
    n_queries: int = 30,
) -> dict[str, Any]:
    """Figures per device: embedder passages/s, then cross-encoder and bi-encoder latency per count and max_length,
    and the GPU memory in use (NVML) after torch starts and after each model loads."""
    from local_rag.embed import load_embedder
    from local_rag.rerank import load_reranker
    from local_rag.rerank.latency import reranker_latency
    from local_rag.settings import EmbedderConfig, RerankerConfig

    passages, questions = doc_passages(n_passages)
    queries = [questions[i % len(questions)] for i in range(n_queries)]
    out: dict[str, Any] = {
        "passages": n_passages,
        "queries": len(queries),
        "passage_chars": len(passages[0]),
        "gpu_used_before": _gpu_used(),
        "devices": {},
    }
    for device in devices:
        row: dict[str, Any] = {}
        emb = load_embedder(EmbedderConfig(model=embedder, device=device, max_length=256), models_dir)
        row["embedder"] = {
            "dtype": getattr(emb, "dtype", None),
            "gpu_used_after_load": _gpu_used(),
            "passages_per_s_batch64": embed_throughput(emb, passages),
        }
        del emb
        for length in max_lengths:
            ce = load_reranker(RerankerConfig(model=str(cross_encoder), device=device, max_length=length), models_dir)
            row[f"cross_encoder_{length}"] = reranker_latency(ce, queries, passages, counts, warm_each_count=True)["counts"]
            del ce
            bi = load_reranker(
                RerankerConfig(backend="bi-encoder", model=embedder, device=device, max_length=length), models_dir
            )
            row[f"bi_encoder_{length}"] = reranker_latency(bi, queries, passages, counts, warm_each_count=True)["counts"]
            del bi
        row["gpu_used_after"] = _gpu_used()
        out["devices"][device] = row
    return out

"""The query twin: an ONNX Runtime copy of a sentence-transformers model, for what is embedded at query time.

A command that only searches (`search`, `ask`, the start of `chat` and `serve`) spent ~6 s of a one-shot `search`'s
~7 s importing sentence-transformers, transformers and torch to embed one query (cProfile, 2-core Zen 4). The twin
imports onnxruntime and tokenizers (0.14 s). It is exported once per model checksum into
``<models_dir>/.query-onnx/<checksum>/`` the first time the sentence-transformers model is loaded anyway (an index
build, or a search before the twin exists), and used only where sentence-transformers itself would run in fp32 on the
CPU: there its vectors equal torch's to ~2e-7 (all-MiniLM-L6-v2; session 44). It embeds the queries and what is scored
at query time (evidence compression's sentences, the bi-encoder re-scorer's passages); the vectors an index stores
(`Embedder.embed(..., for_index=True)`) come from sentence-transformers, so an index and its manifest are what they
were. ``embedder.query_onnx: false`` turns the twin off.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

from local_rag.device import cpu_has_amx, nvml_gpus
from local_rag.embed.base import sentence_transformers_limit
from local_rag.embed.onnx import OnnxEmbedder, export_onnx
from local_rag.modelstore.manifest import query_twin_folder as twin_folder
from local_rag.settings import EmbedderConfig

log = logging.getLogger("local_rag.embed.twin")


def eligible(config: EmbedderConfig) -> bool:
    """Whether sentence-transformers would embed in fp32 on the CPU with these settings (the only case the twin
    reproduces: fp16 on a GPU and bf16 autocast on an AMX CPU give other vectors)."""
    if not config.query_onnx or config.backend != "sentence-transformers" or config.device == "cuda":
        return False
    if config.dtype in ("fp16", "bf16") or (config.dtype == "auto" and cpu_has_amx()):
        return False
    return not (config.device == "auto" and nvml_gpus())  # torch would take the GPU


def _max_length(config: EmbedderConfig, source: Path) -> int:
    """The truncation sentence-transformers applies: ``max_length``, else the model's ``max_seq_length``."""
    return config.max_length or sentence_transformers_limit(source) or 512


def open_twin(config: EmbedderConfig, models_dir: Path, checksum: str, source: Path) -> OnnxEmbedder | None:
    """The twin of the model at ``source``, when it has been exported; None otherwise (or when it cannot be opened:
    sentence-transformers then embeds the queries, as before)."""
    folder = twin_folder(models_dir, checksum)
    if not (folder / "model.onnx").is_file():
        return None
    try:
        return OnnxEmbedder(config.model_copy(update={"max_length": _max_length(config, source)}), folder=folder)
    except Exception as exc:  # a damaged export must not stop a search: the torch path still works
        log.warning("the query twin in %s cannot be opened (%s: %s); queries go through sentence-transformers",
                    folder, type(exc).__name__, exc)
        return None


def make_twin(models_dir: Path, checksum: str, source: Path) -> Path | None:
    """Export the twin of the model at ``source`` (a few seconds, once; `export_folder` writes it in a folder of this
    process's own and swaps it in, replacing one that could not be opened); None when it cannot be written (a
    read-only models folder, no ``onnx`` package, another process swapping its own in at the same moment):
    sentence-transformers then embeds."""
    folder = twin_folder(models_dir, checksum)
    try:
        with warnings.catch_warnings():  # torch.onnx's tracer warnings are about the export, not the user's command
            warnings.simplefilter("ignore")
            export_onnx(source, folder)
    except Exception as exc:
        log.info("no query twin for %s (%s: %s)", source, type(exc).__name__, exc)
        return None
    log.info("exported the query twin of %s to %s", source, folder)
    return folder

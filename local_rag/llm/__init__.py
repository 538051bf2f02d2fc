"""The local LLM layer: the `LLM` interface, the llama.cpp backend and the LLM stages (rewrite, listwise rerank,
relevance judge). Nothing heavy is imported here: `load_llm` imports llama-cpp-python when it is called."""

from __future__ import annotations

from pathlib import Path

from local_rag.llm.base import LLM, Completion, Message, Scored
from local_rag.settings import LLMConfig

__all__ = ["LLM", "Completion", "Message", "Scored", "load_llm"]


def load_llm(config: LLMConfig, models_dir: str | Path = "models") -> LLM:
    """The configured GGUF model on llama.cpp (the only backend today).

    Raises:
        ModelError: a missing, unverified, truncated or corrupt model.
        MissingDependencyError: llama-cpp-python is not installed (``scripts/install_llama_cpp.sh``).
    """
    from local_rag.device import enforce_offline
    from local_rag.llm.llamacpp import LlamaCppLLM

    enforce_offline()
    return LlamaCppLLM(config, models_dir)

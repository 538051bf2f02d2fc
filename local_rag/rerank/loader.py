"""`load_reranker`: imports the backends (each registers itself with `local_rag.rerank.base`) and builds the one
the settings name. The base module never imports its backends, so the package has no import cycle."""

from __future__ import annotations

from pathlib import Path

from local_rag.errors import SettingsError
from local_rag.rerank import bi_encoder, cross_encoder, likelihood, onnx  # noqa: F401 - registers the backends
from local_rag.rerank.base import _REGISTRY, Reranker
from local_rag.settings import RerankerConfig


def load_reranker(config: RerankerConfig, models_dir: str | Path) -> Reranker:
    """The cross-encoder that ``config`` names.

    Raises:
        SettingsError: unknown backend (lists the registered ones). ModelError: missing model files.
    """
    if config.backend not in _REGISTRY:
        raise SettingsError(f"unknown reranker backend {config.backend!r}; valid: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[config.backend](config, Path(models_dir))

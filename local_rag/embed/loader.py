"""`load_embedder`: imports the backends (each registers itself with `local_rag.embed.base`) and builds the one
the settings name. The base module never imports its backends, so the package has no import cycle."""

from __future__ import annotations

from pathlib import Path

from local_rag.embed import bge, onnx, st  # noqa: F401 - registers the backends; none imports its heavy library here
from local_rag.embed.base import _REGISTRY, Embedder
from local_rag.errors import SettingsError
from local_rag.settings import EmbedderConfig


def load_embedder(config: EmbedderConfig, models_dir: str | Path) -> Embedder:
    """Build the embedder that ``config`` names; its model must be in ``models/`` (or be a folder path).

    Raises:
        SettingsError: unknown backend (the message lists the registered ones).
        ModelError: the model is missing or incomplete.
        MissingDependencyError: the backend's extra is not installed.
    """
    if config.backend not in _REGISTRY:
        raise SettingsError(f"unknown embedder backend {config.backend!r}; valid: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[config.backend](config, Path(models_dir))

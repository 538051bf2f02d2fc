"""ONNX Runtime backend: a transformer encoder exported to ``model.onnx`` beside its ``tokenizer.json``.

CUDA provider when onnxruntime-gpu is installed and a GPU is really present, CPU otherwise. Pooling (mean or CLS)
is read from the sentence-transformers ``1_Pooling/config.json`` when present. `export_onnx` makes such a folder from
a local sentence-transformers folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from local_rag._optional import require
from local_rag.device import enforce_offline, onnx_providers, session_providers
from local_rag.embed.base import Embedder, Kind, register_embedder
from local_rag.errors import ModelError
from local_rag.modelstore import resolve_model
from local_rag.settings import EmbedderConfig


def read_pooling(folder: Path) -> str:
    config = folder / "1_Pooling" / "config.json"
    if config.exists():
        data = json.loads(config.read_text(encoding="utf-8"))
        if data.get("pooling_mode_cls_token"):
            return "cls"
    return "mean"


class OnnxEmbedder(Embedder):
    backend = "onnx"

    @property
    def max_tokens(self) -> int:
        """The truncation of its tokenizer: ``max_length`` of the settings, else 512."""
        return self.config.max_length or 512

    def __init__(self, config: EmbedderConfig, models_dir: Path | None = None, folder: Path | None = None) -> None:
        """The model ``config.model`` resolved in ``models_dir``, or an export at ``folder`` (no checksum taken: the
        query twin of `local_rag.embed.twin`)."""
        super().__init__(config)
        enforce_offline()
        if folder is None:
            folder, self.checksum = resolve_model(config.model, Path(models_dir or "."), role="embedder")
        self.folder = folder
        model_file = folder / "model.onnx"
        if not model_file.exists():
            raise ModelError(f"no model.onnx in {folder}; make one with `local-rag models export-onnx`")
        ort = require("onnxruntime", "the ONNX embedder")
        tokenizers = require("tokenizers", "the ONNX embedder")
        self.providers = onnx_providers()
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(model_file), options, providers=self.providers)
        self.providers = session_providers(self.session, self.providers)  # what it really runs on
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_tokens)
        self.tokenizer.enable_padding()
        self.pooling = read_pooling(folder)
        self.name = config.model
        self.dimension = int(self._run(["dimension probe"]).shape[1])

    def _run(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feed)[0]
        if self.pooling == "cls":
            return hidden[:, 0, :]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)

    def embed_batch(self, texts: list[str], kind: Kind) -> np.ndarray:
        return self._run(texts)


@register_embedder("onnx")
def _factory(config: EmbedderConfig, models_dir: Path) -> Embedder:
    return OnnxEmbedder(config, models_dir)


def export_onnx(source: str | Path, dest: str | Path, opset: int = 17) -> Path:
    """Export a local transformers/sentence-transformers encoder folder to ``dest/model.onnx`` (+ tokenizer files).

    Example:
        >>> export_onnx("models/all-MiniLM-L6-v2", "models/all-MiniLM-L6-v2-onnx")  # doctest: +SKIP
    """
    from local_rag.onnx_export import export_folder

    return export_folder(source, dest, "AutoModel", "last_hidden_state", {0: "batch", 1: "sequence"}, lambda out: out[0], opset)

"""ONNX Runtime backend: a transformer encoder exported to ``model.onnx`` beside its ``tokenizer.json``.

CUDA provider when onnxruntime-gpu is installed and a GPU is really present, CPU otherwise. Pooling (mean or CLS)
is read from the sentence-transformers ``1_Pooling/config.json`` when present. `export_onnx` makes such a folder from
a local sentence-transformers folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from local_rag._optional import require
from local_rag.device import enforce_offline, onnx_providers
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

    def __init__(self, config: EmbedderConfig, models_dir: Path) -> None:
        super().__init__(config)
        enforce_offline()
        folder, self.checksum = resolve_model(config.model, models_dir, role="embedder")
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
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=config.max_length or 512)
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
    enforce_offline()
    source, dest = Path(source), Path(dest)
    torch = require("torch", "ONNX export")
    transformers = require("transformers", "ONNX export")
    if not (source / "config.json").exists():
        raise ModelError(f"{source} is not a transformers model folder (no config.json)")
    model = transformers.AutoModel.from_pretrained(str(source), local_files_only=True)
    model.eval()
    tmp = dest.with_name(dest.name + ".exporting")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "config.json"):
        if (source / name).exists():
            shutil.copy2(source / name, tmp / name)
    if (source / "1_Pooling").exists():
        shutil.copytree(source / "1_Pooling", tmp / "1_Pooling")
    ids = torch.ones((2, 8), dtype=torch.long)
    mask = torch.ones((2, 8), dtype=torch.long)
    types = torch.zeros((2, 8), dtype=torch.long)

    class _Wrapper(torch.nn.Module):
        def __init__(self, inner: object) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]

    axes = {0: "batch", 1: "sequence"}
    with torch.inference_mode():
        torch.onnx.export(
            _Wrapper(model),
            (ids, mask, types),
            str(tmp / "model.onnx"),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes},
            opset_version=opset,
            dynamo=False,
        )
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return dest

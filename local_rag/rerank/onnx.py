"""ONNX Runtime cross-encoder: ``model.onnx`` + ``tokenizer.json``; CUDA provider only when a GPU is really there.

`export_cross_encoder_onnx` makes such a folder from a local sequence-classification model folder.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from local_rag._optional import require
from local_rag.device import enforce_offline, onnx_providers, session_providers
from local_rag.errors import ModelError
from local_rag.modelstore import resolve_model
from local_rag.rerank.base import Reranker, register_reranker
from local_rag.settings import RerankerConfig


class OnnxReranker(Reranker):
    backend = "onnx"

    def __init__(self, config: RerankerConfig, models_dir: Path) -> None:
        super().__init__(config)
        enforce_offline()
        self.folder, self.checksum = resolve_model(config.model, models_dir, role="reranker")
        if not (self.folder / "model.onnx").exists():
            raise ModelError(f"no model.onnx in {self.folder}; make one with `local-rag models export-onnx --cross-encoder`")
        ort = require("onnxruntime", "the ONNX cross-encoder")
        tokenizers = require("tokenizers", "the ONNX cross-encoder")
        self.providers = onnx_providers()
        self.session = ort.InferenceSession(str(self.folder / "model.onnx"), providers=self.providers)
        self.providers = session_providers(self.session, self.providers)  # what it really runs on
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = tokenizers.Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=config.max_length)
        self.tokenizer.enable_padding()
        self.name = config.model

    def score(self, query: str, texts: list[str]) -> list[float]:
        out: list[float] = []
        for start in range(0, len(texts), self.config.batch_size):
            batch = texts[start : start + self.config.batch_size]
            encodings = self.tokenizer.encode_batch([(query, t) for t in batch])
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            }
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
            logits = self.session.run(None, feed)[0].reshape(len(batch), -1)[:, 0]
            # a sigmoid, as sentence-transformers' CrossEncoder applies to single-label models
            out.extend(float(x) for x in 1.0 / (1.0 + np.exp(-logits)))
        return out


@register_reranker("onnx")
def _factory(config: RerankerConfig, models_dir: Path) -> Reranker:
    return OnnxReranker(config, models_dir)


def export_cross_encoder_onnx(source: str | Path, dest: str | Path, opset: int = 17) -> Path:
    """Export a local sequence-classification (cross-encoder) folder to ``dest/model.onnx`` + tokenizer files."""
    from local_rag.onnx_export import export_folder

    return export_folder(source, dest, "AutoModelForSequenceClassification", "logits", {0: "batch"}, lambda out: out.logits, opset)

"""BGE-M3 with transformers: dense vectors, and optionally its learned sparse (lexical) weights.

The model is BAAI's XLM-RoBERTa encoder plus two small heads saved beside it (``sparse_linear.pt``,
``colbert_linear.pt``). The outputs are computed as FlagEmbedding's ``BGEM3FlagModel.encode`` computes them:

- dense: the last hidden state of the first token (CLS pooling), L2-normalized;
- sparse: ``relu(sparse_linear(hidden_state))`` for every token, kept per token id as the largest weight of that id,
  without the CLS, EOS, PAD and UNK tokens and without zero weights; keys are token ids as strings.

FlagEmbedding itself is not used: its 1.4.2 (the newest) imports ``transformers.modeling_attn_mask_utils`` at package
import, which transformers 5.10 removed, and sentence-transformers 6 needs transformers 5 (docs/install.md).
ColBERT vectors are not computed (no stage uses them), but the head must be present: a folder without it is not a
complete BGE-M3 download.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from local_rag._optional import require
from local_rag.device import enforce_offline, quiet_transformers, torch_device
from local_rag.embed.base import Embedder, Kind, register_embedder
from local_rag.errors import ModelError
from local_rag.modelstore import resolve_model
from local_rag.settings import EmbedderConfig

REQUIRED_HEADS = ("colbert_linear.pt", "sparse_linear.pt")


def check_bge_m3_folder(folder: Path) -> None:
    """Refuse a folder without BGE-M3's heads (FlagEmbedding silently made *random* heads when they were missing)."""
    missing = [name for name in REQUIRED_HEADS if not (folder / name).exists()]
    if missing:
        raise ModelError(
            f"{folder} is not a complete BGE-M3 folder: {', '.join(missing)} missing "
            "(without them the sparse weights would come from random heads); re-fetch it with "
            "`local-rag models pull bge-m3`"
        )


class BGEM3Embedder(Embedder):
    backend = "bge-m3"

    @property
    def max_tokens(self) -> int:
        return self.max_length

    def __init__(self, config: EmbedderConfig, models_dir: Path) -> None:
        super().__init__(config)
        enforce_offline()
        folder, self.checksum = resolve_model(config.model, models_dir, role="embedder")
        self.folder = folder
        check_bge_m3_folder(folder)
        self._torch = require("torch", "the BGE-M3 embedder")
        transformers = require("transformers", "the BGE-M3 embedder")
        quiet_transformers()
        self.device = torch_device(config.device)
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True)
        head = self._torch.nn.Linear(model.config.hidden_size, 1)
        head.load_state_dict(
            self._torch.load(folder / "sparse_linear.pt", map_location="cpu", weights_only=True)
        )
        if config.dtype in ("auto", "fp16") and self.device == "cuda":
            model, head = model.half(), head.half()
        self.model, self.sparse_head = model.to(self.device).eval(), head.to(self.device).eval()
        special = (self.tokenizer.cls_token_id, self.tokenizer.eos_token_id, self.tokenizer.pad_token_id,
                   self.tokenizer.unk_token_id)
        self._unused_ids = {i for i in special if i is not None}
        self.name = config.model
        # BGE-M3 reads 8192 tokens; a smaller encoder (the tests' stand-in) stops at its tokenizer's limit
        self.max_length = min(config.max_length or 8192, int(self.tokenizer.model_max_length))
        self.dimension = int(model.config.hidden_size)

    def _encode(self, texts: list[str], sparse: bool) -> tuple[np.ndarray, list[dict[str, float]]]:
        torch = self._torch
        batch = self.tokenizer(
            texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(self.device)
        with torch.inference_mode():
            hidden = self.model(**batch, return_dict=True).last_hidden_state
            dense = torch.nn.functional.normalize(hidden[:, 0].float(), dim=-1).cpu().numpy()
            weights: list[dict[str, float]] = []
            if sparse:
                token_weights = torch.relu(self.sparse_head(hidden)).squeeze(-1).float().cpu().numpy()
                ids = batch["input_ids"].cpu().numpy()
                weights = [self._max_per_token(w, i) for w, i in zip(token_weights, ids, strict=True)]
        return dense, weights

    def _max_per_token(self, token_weights: np.ndarray, input_ids: np.ndarray) -> dict[str, float]:
        out: dict[str, float] = {}
        for weight, token in zip(token_weights.tolist(), input_ids.tolist(), strict=True):
            if token in self._unused_ids or weight <= 0:
                continue
            key = str(token)
            if weight > out.get(key, 0.0):
                out[key] = weight
        return out

    def embed_batch(self, texts: list[str], kind: Kind) -> np.ndarray:
        return self._encode(texts, sparse=False)[0]

    def lexical_weights(self, texts: list[str]) -> list[dict[str, float]]:
        """BGE-M3's learned sparse weights (token id -> weight) for each text."""
        return self._encode(texts, sparse=True)[1]


@register_embedder("bge-m3")
def _factory(config: EmbedderConfig, models_dir: Path) -> Embedder:
    return BGEM3Embedder(config, models_dir)

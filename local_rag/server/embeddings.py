"""``POST /v1/embeddings`` (OpenAI's shape) with the local embedder.

Clients such as LangChain's ``OpenAIEmbeddings`` or Open WebUI's embedding settings call ``/v1/embeddings`` with
``{"input": str | [str], "model": ..., "encoding_format": "float" | "base64"}`` (the `openai` client asks for base64
unless told otherwise). The vectors are the index's embedder's, as queries (``kind="query"``): the same vectors
local-rag searches with, L2-normalized. Token-id inputs are refused: they are some other model's token ids.

Example:
    >>> client.embeddings.create(model="local-rag", input=["what is rrf?"]).data[0].embedding[:2]  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import base64
import threading
from typing import TYPE_CHECKING, Any  # Any: the JSON of requests and responses

import numpy as np

from local_rag.embed.base import Embedder
from local_rag.server.errors import ApiError, strings_request
from local_rag.settings import Settings

if TYPE_CHECKING:
    from local_rag.pipeline import Pipeline

MAX_INPUTS = 2048  # OpenAI's own limit per request


def find_embedder(pipeline: object) -> Embedder | None:
    """The embedder the pipeline's dense retriever already loaded, or None."""
    retriever = getattr(pipeline, "_retriever", None) or getattr(pipeline, "retriever", None)
    for retr in getattr(retriever, "retrievers", {}).values():
        if isinstance(embedder := getattr(retr, "embedder", None), Embedder):
            return embedder
    return None


def parse_inputs(body: bytes, max_chars: int) -> tuple[list[str], str]:
    """The texts and the encoding format of an embeddings request; `ApiError` 400 on anything else."""
    data, texts = strings_request(body, "input", "an embeddings request", " (token ids are not accepted: LangChain: "
                                  "OpenAIEmbeddings(check_embedding_ctx_length=False))", "invalid_input")
    if len(texts) > MAX_INPUTS:
        raise ApiError(400, f"at most {MAX_INPUTS} inputs per request", "too_many_inputs")
    empty = [i for i, t in enumerate(texts) if not t.strip()]
    if empty:  # OpenAI refuses them too; the vector of nothing would match everything equally
        raise ApiError(400, f"input[{empty[0]}] is empty: every input must hold some text", "invalid_input")
    fmt = data.get("encoding_format") or "float"
    if fmt not in ("float", "base64"):
        raise ApiError(400, "encoding_format must be 'float' or 'base64'", "invalid_request")
    if data.get("dimensions") is not None:
        raise ApiError(400, "'dimensions' is not supported: the embedder's vectors have a fixed size", "invalid_request")
    return [t[:max_chars] for t in texts], fmt


def embeddings_response(vectors: np.ndarray, model: str, fmt: str, tokens: int) -> dict[str, Any]:
    """The ``list`` of ``embedding`` objects; base64 is little-endian float32, as the `openai` client decodes it."""
    data = []
    for i, row in enumerate(np.asarray(vectors, dtype="<f4")):
        value: Any = base64.b64encode(row.tobytes()).decode() if fmt == "base64" else row.tolist()
        data.append({"object": "embedding", "index": i, "embedding": value})
    return {"object": "list", "data": data, "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


class EmbeddingService:
    """Embeds with the pipeline's embedder (loaded on first use if the pipeline has none), one batch at a time."""

    def __init__(self, settings: Settings, pipeline: Pipeline) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()

    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = find_embedder(self.pipeline)
        if self._embedder is None:
            from local_rag.embed import load_embedder

            self._embedder = load_embedder(self.settings.embedder, self.settings.models_dir)
        return self._embedder

    def _embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return self.embedder().embed(texts, kind="query")

    async def handle(self, body: bytes, model: str) -> dict[str, Any]:
        texts, fmt = parse_inputs(body, self.settings.server.max_message_chars)
        vectors = await asyncio.to_thread(self._embed, texts)
        tokens = sum(len(t.split()) for t in texts)  # words: the embedder's tokenizer is not exposed here
        return embeddings_response(vectors, model, fmt, tokens)

"""`make_pipeline`: the answering object for ``settings.pipeline.mode``.

It sits above both modes, `local_rag.pipeline.Pipeline` and the agentic `local_rag.agent.pipeline.AgenticPipeline`
(which builds on `Pipeline`), so that neither imports the other's module in a cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from local_rag.agent.pipeline import AgenticPipeline
from local_rag.pipeline import Pipeline
from local_rag.records import Conversation
from local_rag.settings import Settings

if TYPE_CHECKING:
    from local_rag.llm.base import LLM
    from local_rag.rerank.base import Reranker
    from local_rag.retrieve.hybrid import HybridRetriever


def make_pipeline(settings: Settings, retriever: HybridRetriever | None = None, llm: LLM | None = None,
                  reranker: Reranker | None = None,
                  rewrites: Callable[[Conversation], dict[str, list[str]]] | None = None) -> Pipeline:
    """The answering object for ``settings.pipeline.mode``: `Pipeline`, or the agentic (ChatR1) mode.

    Both answer with ``.answer(conversation, on_token=None) -> TurnResult``. ``rewrites``: see `Pipeline` (the
    agentic mode writes its own searches and takes none).
    """
    if settings.pipeline.mode == "agentic":
        return AgenticPipeline(settings, retriever=retriever, llm=llm, reranker=reranker)
    return Pipeline(settings, retriever=retriever, llm=llm, reranker=reranker, rewrites=rewrites)


def check_models(settings: Settings) -> None:
    """Resolve the models a turn will load, without loading them: the LLM's GGUF (its sha256 checked, cached) and,
    when the profile searches with vectors, the embedder. `chat` calls it before its first turn, so a missing or
    broken model is one line at start, not after the user has typed a question.

    Raises:
        ModelError: a model that is missing, unknown or does not match its manifest.
    """
    from local_rag.index.folder import wants_dense
    from local_rag.modelstore import resolve_model
    from local_rag.modelstore.gguf_check import resolve_gguf

    resolve_gguf(settings.llm.model, settings.models_dir)
    if wants_dense(settings):
        resolve_model(settings.embedder.model, settings.models_dir, role="embedder")

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

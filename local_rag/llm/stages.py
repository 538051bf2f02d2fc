"""The LLM stages by name, for the CLI and the pipeline: ``rewrite`` (with its modes), ``llm-rerank``, ``judge``.

Example:
    >>> STAGES.names()
    ['rewrite', 'llm-rerank', 'judge']
    >>> from local_rag.llm.rewrite import REWRITE_MODES
    >>> REWRITE_MODES.names()
    ['rewrite', 'keywords', 'multi', 'hyde']
"""

from __future__ import annotations

from collections.abc import Callable

from local_rag.llm.base import LLM
from local_rag.llm.judge import RelevanceJudge
from local_rag.llm.registry import Registry
from local_rag.llm.rerank import ListwiseReranker
from local_rag.llm.rewrite import REWRITE_MODES, rewrite
from local_rag.records import Hit, Query
from local_rag.settings import Settings

Stage = Callable[..., list[Query] | list[Hit]]  # the signatures differ by stage (see make_stage)
StageFactory = Callable[[LLM, Settings], Stage]
STAGES: Registry[StageFactory] = Registry("LLM stage")

STAGES.register("rewrite")(
    lambda llm, s: (lambda conversation, modes=None: rewrite(conversation, llm, modes, s.rewrite))
)
STAGES.register("llm-rerank")(lambda llm, s: ListwiseReranker(llm, s.llm_rerank, seed=s.llm.seed).rerank)
STAGES.register("judge")(lambda llm, s: RelevanceJudge(llm, s.judge).filter)


def make_stage(name: str, llm: LLM, settings: Settings) -> Stage:
    """The callable for stage ``name``: ``rewrite(conversation, modes=None) -> list[Query]``,
    ``llm-rerank(query, hits) -> list[Hit]``, ``judge(query, hits) -> list[Hit]``.

    Raises:
        SettingsError: an unknown stage, or unknown rewrite modes in ``settings.rewrite.modes``.
    """
    factory = STAGES.get(name)
    if name == "rewrite":
        REWRITE_MODES.check(settings.rewrite.modes)
    return factory(llm, settings)

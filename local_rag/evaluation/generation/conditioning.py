"""The official answerability conditioning ("IDK conditioning") and the final harmonic mean.

From ``get_idk_score`` in the official ``judge_wrapper.py`` (IBM/mt-rag-benchmark), with ``idk`` the IDK judge's
label (1 = the answer declines, 0.5 = declines in part, 0 = answers):

- UNANSWERABLE and CONVERSATIONAL tasks score 1 when ``idk == 1``, else 0;
- every other task (ANSWERABLE, PARTIAL, or no label) scores 0 when ``idk == 1``, else the metric itself
  (a partial decline keeps the metric);
- UNDERSPECIFIED tasks (MTRAG-UN) score 1 when the reply is a clarification request (``clarify == 1``, the
  clarification judge, `local_rag.evaluation.generation.clarify`), else 0.

The leaderboard figure is the harmonic mean of the conditioned RB_alg, RL_F and RB_llm means
(`final_score`); per-task harmonic means are kept for inspection only.

Example:
    >>> condition("UNANSWERABLE", 1.0, 0.2), condition("UNANSWERABLE", 0.5, 0.9)
    (1.0, 0.0)
    >>> condition("ANSWERABLE", 1.0, 0.9), condition("ANSWERABLE", 0.5, 0.9), condition("PARTIAL", 0.0, 0.4)
    (0.0, 0.9, 0.4)
    >>> condition("UNDERSPECIFIED", 0.0, 0.7, clarify=1.0), condition("UNDERSPECIFIED", 0.0, 0.7, clarify=0.0)
    (1.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Mapping

from local_rag.evaluation.generation.algorithmic import harmonic_mean
from local_rag.evaluation.generation.official import DECLINE_CLASSES

UNDERSPECIFIED = "UNDERSPECIFIED"  # MTRAG-UN: the right reply asks which thing is meant

# raw metric -> its conditioned name (the official output's names)
CONDITIONED = {"RB_agg": "RB_agg_idk", "RL_F": "RL_F_idk", "RB_llm": "RB_llm_idk"}
FINAL_COMPONENTS = ("RB_agg_idk", "RL_F_idk", "RB_llm_idk")


def condition(answerability: str, idk: float, value: float | None, clarify: float | None = None) -> float | None:
    """The conditioned score of one task (see the module docstring); ``value`` may be ``None`` (not judged);
    ``clarify``: the clarification label (UNDERSPECIFIED tasks)."""
    if answerability == UNDERSPECIFIED:
        return 1.0 if clarify == 1 else 0.0
    if answerability in DECLINE_CLASSES:
        return 1.0 if idk == 1 else 0.0
    if idk == 1:
        return 0.0
    return value


def decided(answerability: str, idk: float) -> bool:
    """True when conditioning fixes the score whatever the metric is, so the metric need not be computed."""
    return answerability in (*DECLINE_CLASSES, UNDERSPECIFIED) or idk == 1


def final_score(means: Mapping[str, float | None]) -> float | None:
    """Harmonic mean of the conditioned RB_alg, RL_F and RB_llm means (``None`` if one is missing).

    Example:
        >>> round(final_score({"RB_agg_idk": 0.4, "RL_F_idk": 0.8, "RB_llm_idk": 0.6}), 4)
        0.5538
    """
    return harmonic_mean([means.get(k) for k in FINAL_COMPONENTS])

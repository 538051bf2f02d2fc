"""A second look after generation: decline when the draft says what its passages do not.

The decision stage decides before the generator writes, from the turn and the passages alone; the generator's own
draft is a signal it cannot see. Asked something the passages do not answer, a small generator still answers, from
passages on the same subject: its sentences then share fewer words with them. `DraftGate` scores the draft with the
support classifier (`local_rag.decide.support`: each sentence's best P(supported) over the passages given) and
combines those scores with the decision stage's P(decline) in a small logistic regression
(`local-rag train draft-gate`): above its threshold, the answer is replaced by the decline.

Features (`draft_signals`): ``weak_share`` (the share of sentences no passage supports), ``weak_mean``,
``weak_max``, ``weak_min`` (1 - the mean, the best and the worst sentence's best support), and ``decider`` (the
logit of the decision stage's P(decline); a gate trained without it needs no trained decider).

Example:
    >>> signals = draft_signals(np.array([[0.9, 0.2], [0.1, 0.3]]), threshold=0.5, p_decline=0.5)
    >>> {k: round(v, 2) for k, v in signals.items()}
    {'weak_share': 0.5, 'weak_mean': 0.4, 'weak_max': 0.1, 'weak_min': 0.7, 'decider': 0.0}
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.decide.saved import read_fitted, save_fitted
from local_rag.decide.support import SupportChecker, passage_texts, split_sentences
from local_rag.errors import ModelError
from local_rag.records import Hit
from local_rag.settings import Settings

log = logging.getLogger("local_rag.decide")
DRAFT_FEATURES = ("decider", "weak_share", "weak_mean", "weak_max", "weak_min")
META = "draft.json"


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def draft_signals(support: np.ndarray, threshold: float, p_decline: float | None = None) -> dict[str, float]:
    """The gate's features from ``support`` (P(supported) of each draft sentence against each passage, shape
    (sentences, passages)); an empty draft counts as wholly unsupported. ``decider`` only when ``p_decline`` is given."""
    best = support.max(axis=1) if support.size else np.zeros(1)
    out = {"weak_share": float(1 - np.mean(best >= threshold)), "weak_mean": float(1 - best.mean()),
           "weak_max": float(1 - best.max()), "weak_min": float(1 - best.min())}
    if p_decline is not None:
        out["decider"] = logit(p_decline)
    return out


def score_draft(checker: SupportChecker, text: str, passages: Sequence[Hit], p_decline: float | None = None) -> dict[str, float]:
    """`draft_signals` of the draft ``text`` against ``passages``, by the support classifier ``checker``."""
    sentences = split_sentences(text)
    support = checker.probabilities(sentences, passage_texts(passages)) if sentences and passages else np.zeros((0, 0))
    return draft_signals(support, checker.threshold, p_decline)


class DraftGate:
    """A fitted classifier over `draft_signals` and the threshold on its P(decline) (``draft.json``)."""

    def __init__(self, model: Any, meta: dict[str, Any], checker: SupportChecker, threshold: float = -1.0) -> None:
        self.model = model
        self.meta = meta
        self.checker = checker
        self.features = list(meta.get("features") or DRAFT_FEATURES)
        unknown = sorted(set(self.features) - set(DRAFT_FEATURES))
        if unknown:
            raise ModelError(f"this draft gate uses unknown features {unknown}; rebuild it with `local-rag train draft-gate`")
        self.threshold = threshold if threshold >= 0 else float(meta.get("threshold", 0.5))

    @property
    def needs_decider(self) -> bool:
        """Whether the gate reads the decision stage's P(decline) (then it needs a trained decider)."""
        return "decider" in self.features

    def signals(self, text: str, passages: Sequence[Hit], p_decline: float | None = None) -> dict[str, float]:
        """`score_draft` with this gate's support classifier (``p_decline`` only when the gate reads it)."""
        return score_draft(self.checker, text, passages, p_decline if self.needs_decider else None)

    def probability(self, signals: dict[str, float]) -> float:
        """P(decline) of one row of `signals`."""
        x = np.array([[signals[f] for f in self.features]], dtype=np.float64)
        return float(self.model.predict_proba(x)[0, 1])

    def check(self, text: str, passages: Sequence[Hit], p_decline: float | None = None) -> tuple[bool, float]:
        """(decline?, P(decline)) for the draft ``text``; a gate that reads the decider and gets no ``p_decline``
        never declines."""
        if self.needs_decider and p_decline is None:
            return False, 0.0
        p = self.probability(self.signals(text, passages, p_decline))
        return p >= self.threshold, p


def save_gate(folder: Path, model: Any, meta: dict[str, Any]) -> Path:
    """Write ``model.joblib`` and ``draft.json`` into ``folder`` (created)."""
    return save_fitted(folder, model, meta, META)


def read_gate(folder: Path, checker: SupportChecker, threshold: float = -1.0) -> DraftGate:
    """The `DraftGate` saved in ``folder``."""
    model, meta = read_fitted(folder, META, "draft gate", "local-rag train draft-gate")
    return DraftGate(model, meta, checker, threshold)


def load_draft_gate(settings: Settings, checker: Callable[[], SupportChecker | None]) -> DraftGate | None:
    """The gate of ``settings.decide.draft_model``, reading the support model ``checker()`` loads; None when either
    is missing (a warning when the gate was named in the settings, a debug line for the default name)."""
    from local_rag.modelstore.manifest import resolve_model

    named = "draft_model" in settings.decide.model_fields_set
    try:
        folder, _ = resolve_model(settings.decide.draft_model, settings.models_dir, role="draft-gate")
    except ModelError as exc:
        log.log(logging.WARNING if named else logging.DEBUG, "no draft gate (%s): drafts stand unchecked; build one "
                "with `local-rag train draft-gate`", exc)
        return None
    support = checker()
    if support is None:
        log.warning("the draft gate %s reads the support model %r, which is missing: drafts stand unchecked",
                    folder.name, settings.support.model)
        return None
    return read_gate(folder, support, settings.decide.draft_threshold)

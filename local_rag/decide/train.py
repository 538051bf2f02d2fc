"""Training the decision stage: model variants, thresholds set on out-of-fold predictions, the pick by
cross-validation, and the folder written to ``models/`` with its manifest entry.

Variants (all scikit-learn, all run in milliseconds): logistic regression or gradient boosting over the named
features (`local_rag.decide.features.FEATURES`), logistic regression over the MiniLM embedding of the last turn,
and logistic regression over both. Thresholds: P(decline) and P(clarify) at the quantile of the answerable
examples' out-of-fold probabilities that declines at most ``decline_budget`` and clarifies at most
``clarify_budget`` of them. The variant kept is the one with the best mean of decline recall (UNANSWERABLE) and
clarify recall (UNDERSPECIFIED) at those thresholds, in cross-validation by conversation over the training pool.

Example:
    >>> result = fit_variants(x_named, x_embedding, examples)  # doctest: +SKIP
"""

from __future__ import annotations

import fcntl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.decide.data import Example
from local_rag.decide.features import FEATURES

VARIANTS = ("lr-features", "gbm-features", "lr-embedding", "lr-features+embedding")
ANSWERABLE = ("ANSWERABLE", "PARTIAL")


@dataclass
class Thresholds:
    decline: float
    clarify: float

    def to_json(self) -> dict[str, float]:
        return {"decline": round(self.decline, 4), "clarify": round(self.clarify, 4)}


def columns(variant: str, x_named: np.ndarray, x_embedding: np.ndarray | None) -> np.ndarray:
    """The design matrix of ``variant``: named features, embedding, or both."""
    parts = []
    if "features" in variant:
        parts.append(x_named)
    if "embedding" in variant:
        if x_embedding is None:
            raise ValueError(f"variant {variant} needs the turn embeddings")
        parts.append(x_embedding)
    return np.hstack(parts)


def make_model(variant: str, seed: int = 0) -> Any:
    """An unfitted scikit-learn classifier for ``variant``."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if variant.startswith("gbm"):
        return HistGradientBoostingClassifier(max_iter=150, learning_rate=0.06, max_leaf_nodes=15, l2_regularization=1.0,
                                              class_weight="balanced", random_state=seed)
    c = 0.05 if "embedding" in variant else 0.5
    return make_pipeline(StandardScaler(), LogisticRegression(C=c, class_weight="balanced", max_iter=3000))


def proba_frame(model: Any, x: np.ndarray, classes: Sequence[str]) -> np.ndarray:
    """P(class) with columns in ``classes`` order (0 for a class the model never saw)."""
    p = model.predict_proba(x)
    out = np.zeros((len(x), len(classes)))
    for j, c in enumerate(model.classes_):
        out[:, list(classes).index(str(c))] = p[:, j]
    return out


CLASSES = ("answer", "decline", "clarify")


def out_of_fold(variant: str, x: np.ndarray, examples: Sequence[Example], folds: int = 5, seed: int = 0) -> np.ndarray:
    """Out-of-fold P(answer, decline, clarify) per example, folds by conversation (`Example.group`)."""
    from sklearn.model_selection import GroupKFold

    y = np.array([trained_kind(e) for e in examples])
    groups = np.array([e.group for e in examples])
    out = np.zeros((len(examples), len(CLASSES)))
    splitter = GroupKFold(n_splits=min(folds, len(set(groups))))
    for train, held in splitter.split(x, y, groups):
        model = make_model(variant, seed).fit(x[train], y[train])
        out[held] = proba_frame(model, x[held], CLASSES)
    return out


def trained_kind(example: Example) -> str:
    """The class a model learns for an example: chitchat turns (handled by rules) count as declines, as MTRAG
    scores them."""
    return "decline" if example.kind == "chitchat" else example.kind


def set_thresholds(p: np.ndarray, examples: Sequence[Example], decline_budget: float = 0.08,
                   clarify_budget: float = 0.04) -> Thresholds:
    """Thresholds that decline at most ``decline_budget`` and clarify at most ``clarify_budget`` of the answerable
    examples (by their out-of-fold probabilities ``p``)."""
    answerable = np.array([e.gold in ANSWERABLE for e in examples])
    if not answerable.any():
        return Thresholds(0.5, 0.5)
    decline = float(np.quantile(p[answerable, 1], 1 - decline_budget))
    clarify = float(np.quantile(p[answerable, 2], 1 - clarify_budget))
    return Thresholds(max(decline, 0.05), max(clarify, 0.05))


def choose_kinds(p: np.ndarray, thresholds: Thresholds, after_clarify: np.ndarray | None = None) -> list[str]:
    """`TrainedDecider.choose` over rows of P(answer, decline, clarify)."""
    out = []
    for i, row in enumerate(p):
        over = {}
        if row[1] >= thresholds.decline:
            over["decline"] = row[1]
        if row[2] >= thresholds.clarify and not (after_clarify is not None and after_clarify[i]):
            over["clarify"] = row[2]
        out.append(max(over, key=lambda k: over[k]) if over else "answer")
    return out


def fit(variant: str, x: np.ndarray, examples: Sequence[Example], seed: int = 0) -> Any:
    """``variant`` fitted on every example."""
    return make_model(variant, seed).fit(x, np.array([trained_kind(e) for e in examples]))


def decider_meta(variant: str, thresholds: Thresholds, embedder: str, extra: dict[str, Any]) -> dict[str, Any]:
    """What ``decider.json`` records beside the model."""
    return {
        "variant": variant,
        "classes": list(CLASSES),
        "features": list(FEATURES) if "features" in variant else [],
        "use_features": "features" in variant,
        "use_embedding": "embedding" in variant,
        "embedder": embedder if "embedding" in variant else "",
        "thresholds": thresholds.to_json(),
        **extra,
    }


def register(models_dir: Path, name: str, folder: Path, role: str, description: str) -> None:
    """Add (or replace) the manifest entry of a trained model in ``folder`` (under ``models_dir``); the manifest is
    rewritten under a lock, as other commands may register models at the same time."""
    from local_rag.modelstore.manifest import Manifest, ModelEntry, folder_files

    models_dir.mkdir(parents=True, exist_ok=True)
    with (models_dir / ".manifest.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        manifest = Manifest.load(models_dir)
        manifest.entries[name] = ModelEntry(name=name, role=role,
                                            path=str(folder.relative_to(models_dir)), source="local-rag train",
                                            licence="Apache-2.0 (trained on MTRAG data)", format="sklearn",
                                            description=description, files=folder_files(folder))
        manifest.save()

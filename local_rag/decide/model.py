"""The `Decider` interface and its two implementations: `TrainedDecider` (a small scikit-learn model over
`local_rag.decide.features`) and `AlwaysAnswer` (the behaviour before the decision stage existed).

A trained decider is a folder: ``model.joblib`` (the fitted scikit-learn pipeline) and ``decider.json`` (the variant,
the feature layout, the classes, the decision thresholds and the figures it was chosen by), registered in
``models/manifest.json`` with role ``decider`` by `local-rag train decider`.

Example:
    >>> decider = load_decider(settings, embed=None)  # doctest: +SKIP
    >>> decider.decide(conversation, hits).kind  # doctest: +SKIP
    'clarify'
"""

from __future__ import annotations

import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any  # Any: the scikit-learn model (no stubs) and its JSON metadata

import numpy as np

from local_rag.decide.clarify import clarifying_question, options
from local_rag.decide.features import CE_TOP, NO_CE_FEATURES, Embed, FeatureExtractor
from local_rag.decide.saved import read_fitted, save_fitted
from local_rag.decide.turns import (
    CHITCHAT_REPLIES,
    chitchat_kind,
    is_clarification,
    last_agent_turn,
    resolve_clarification,
)
from local_rag.errors import BadInputError, ModelError
from local_rag.records import Conversation, Decision, Hit
from local_rag.settings import DecideConfig, Settings

log = logging.getLogger("local_rag.decide")
META = "decider.json"
MAX_TURN_CHARS = 4000  # features read at most this much of a turn: a pasted document is not a question


def check_conversation(conversation: Conversation) -> None:
    """`BadInputError` unless the conversation ends with a user turn that has text."""
    if not conversation.turns or conversation.turns[-1].speaker != "user":
        raise BadInputError("the conversation must end with a user turn to answer (it ends with "
                            f"{conversation.turns[-1].speaker if conversation.turns else 'nothing'})")
    if not conversation.turns[-1].text.strip():
        raise BadInputError("the last user turn is empty")


def clipped(conversation: Conversation) -> Conversation:
    """The conversation with an over-long last turn cut to `MAX_TURN_CHARS` (for features only)."""
    last = conversation.turns[-1]
    if len(last.text) <= MAX_TURN_CHARS:
        return conversation
    return Conversation([*conversation.turns[:-1], type(last)(last.speaker, last.text[:MAX_TURN_CHARS])], conversation.id)


class Decider(ABC):
    """Answer, decline, clarify or chitchat: one required method, `decide`."""

    @abstractmethod
    def decide(self, conversation: Conversation, evidence: Sequence[Hit]) -> Decision:
        """The decision for the last user turn of ``conversation`` given its reranked ``evidence``."""

    def before_retrieval(self, conversation: Conversation) -> tuple[Conversation, Decision | None]:
        """Before retrieval: the conversation to work on (a reply to a clarifying question is resolved, see
        `resolve_clarification`) and a decision that needs no retrieval (small talk), else None."""
        check_conversation(conversation)
        return conversation, None


class AlwaysAnswer(Decider):
    """No trained model: every turn is answered, as before the decision stage; small talk ("thanks", "ok bye")
    still gets its short reply by rules, without retrieval or the LLM, unless ``chitchat`` is off."""

    def __init__(self, reason: str = "no trained decider: always answer", chitchat: bool = True) -> None:
        self.reason = reason
        self.chitchat = chitchat

    def before_retrieval(self, conversation: Conversation) -> tuple[Conversation, Decision | None]:
        check_conversation(conversation)
        return conversation, small_talk(conversation) if self.chitchat else None

    def decide(self, conversation: Conversation, evidence: Sequence[Hit]) -> Decision:
        _, early = self.before_retrieval(conversation)
        return early or Decision("answer", 1.0, {"answer": 1.0}, reason=self.reason)


def small_talk(conversation: Conversation) -> Decision | None:
    """The ``chitchat`` decision when the last user turn is only small talk (`chitchat_kind`), else None."""
    kind = chitchat_kind(conversation.last_user_turn)
    return Decision("chitchat", 1.0, {"chitchat": 1.0}, reason=f"chitchat pattern: {kind}") if kind else None


class TrainedDecider(Decider):
    """A fitted classifier over `FeatureExtractor` rows plus per-class thresholds.

    Declines when P(decline) reaches the decline threshold, asks when P(clarify) reaches the clarify threshold (the
    larger share wins when both do), answers otherwise. Never asks twice in a row: right after its own clarifying
    question the user's reply is answered or declined. Small talk is answered by rules before retrieval; a turn
    with no passages at all is declined.

    A model trained with cross-encoder features (``meta['cross_encoder']``) reads the ``cross-encoder`` scores the
    pipeline's reranker put on the hits; when they are missing (the pipeline runs no cross-encoder), or ``rescore``
    (it runs another one), it scores the hits itself with ``reranker()`` (that model, loaded once) against the last
    turn. Without it the turn is answered, as without a decider.
    """

    def __init__(self, model: Any, meta: dict[str, Any], config: DecideConfig | None = None,
                 embed: Embed | None = None, reranker: Callable[[], Any] | None = None, rescore: bool = False) -> None:
        self.model = model
        self.meta = meta
        self.config = config or DecideConfig()
        if meta.get("use_embedding") and embed is None:
            raise ModelError("this decider was trained with turn embeddings: give it the embedder "
                             f"({meta.get('embedder', 'all-MiniLM-L6-v2')})")
        names = meta.get("features") or (NO_CE_FEATURES if meta.get("use_features", True) else ())
        self.features = FeatureExtractor(embed, bool(meta.get("use_embedding")), bool(meta.get("use_features", True)), names)
        self.needs_ce = bool(meta.get("cross_encoder")) and any(n.startswith("ce_") for n in self.features.names)
        self._reranker, self.rescore = reranker, rescore
        self.classes = [str(c) for c in model.classes_]  # predict_proba's column order
        saved = meta.get("thresholds", {})
        self.thresholds = {
            "decline": self.config.decline_threshold if self.config.decline_threshold >= 0 else saved.get("decline", 0.5),
            "clarify": self.config.clarify_threshold if self.config.clarify_threshold >= 0 else saved.get("clarify", 0.5),
        }

    def before_retrieval(self, conversation: Conversation) -> tuple[Conversation, Decision | None]:
        check_conversation(conversation)
        early = small_talk(conversation) if self.config.chitchat else None
        if early is not None:
            return conversation, early
        return resolve_clarification(conversation), None

    def probabilities(self, conversations: Sequence[Conversation], evidence: Sequence[Sequence[Hit]]) -> np.ndarray:
        """P(class) per row, columns in `classes` order."""
        x = self.features.vectors([clipped(c) for c in conversations], evidence)
        return np.asarray(self.model.predict_proba(x), dtype=np.float64)

    def choose(self, p: dict[str, float], after_clarify: bool) -> str:
        """The kind for class probabilities ``p`` (see the class docstring)."""
        over = {k: p.get(k, 0.0) for k in ("decline", "clarify") if p.get(k, 0.0) >= self.thresholds[k]}
        if after_clarify:
            over.pop("clarify", None)
        return max(over, key=lambda k: over[k]) if over else "answer"

    def decide(self, conversation: Conversation, evidence: Sequence[Hit]) -> Decision:
        started = time.perf_counter()
        _, early = self.before_retrieval(conversation)
        if early is not None:
            return early
        if not evidence:  # nothing retrieved: nothing to answer from, and no options to ask about
            return Decision("decline", 1.0, {"decline": 1.0}, reason="no passages", latency_s=time.perf_counter() - started)
        evidence = list(evidence)
        if self.needs_ce and (self.rescore or not any("cross-encoder" in h.scores for h in evidence[:CE_TOP])):
            reranker = self._reranker() if self._reranker is not None else None
            if reranker is None:
                return Decision("answer", 1.0, {"answer": 1.0}, reason="the decider's cross-encoder is missing: answer",
                                latency_s=time.perf_counter() - started)
            evidence = reranker.rerank(conversation.last_user_turn, [first_stage(h) for h in evidence])
        row = self.probabilities([conversation], [evidence])[0]
        p = {c: float(v) for c, v in zip(self.classes, row, strict=True)}
        kind = self.choose(p, is_clarification(last_agent_turn(conversation)))
        found = options(evidence, self.config.max_options) if kind == "clarify" else []
        return Decision(kind, p.get(kind, 0.0), p, found, "model", time.perf_counter() - started)  # type: ignore[arg-type]


def first_stage(hit: Hit) -> Hit:
    """``hit`` as the first stage gave it: another cross-encoder's score and order undone."""
    scores = {k: v for k, v in hit.scores.items() if k not in ("cross-encoder", "fused")}
    return Hit(**{**hit.to_json(), "score": hit.scores.get("fused", hit.score), "scores": scores})


def reply_text(decision: Decision, conversation: Conversation, evidence: Sequence[Hit], settings: Settings) -> str:
    """The text of a turn that the decision answers without the generator: the IDK sentence, the clarifying
    question, or the small-talk reply."""
    if decision.kind == "decline":
        return settings.generate.idk_answer
    if decision.kind == "clarify":
        return clarifying_question(conversation.last_user_turn, evidence, settings.decide.max_options)
    if decision.kind == "chitchat":
        return CHITCHAT_REPLIES.get(chitchat_kind(conversation.last_user_turn) or "thanks", CHITCHAT_REPLIES["thanks"])
    raise ValueError(f"a decision of kind {decision.kind!r} is answered by the generator")


# ---------------------------------------------------------------- saving and loading
def save_decider(folder: Path, model: Any, meta: dict[str, Any]) -> Path:
    """Write ``model.joblib`` and ``decider.json`` into ``folder`` (created)."""
    return save_fitted(folder, model, meta, META)


def read_decider(folder: Path, config: DecideConfig | None = None, embed: Embed | None = None,
                 reranker: Callable[[], Any] | None = None, rescore: bool = False) -> TrainedDecider:
    """The `TrainedDecider` saved in ``folder`` (``reranker``, ``rescore``: see `TrainedDecider`)."""
    model, meta = read_fitted(folder, META, "decider", "local-rag train decider")
    return TrainedDecider(model, meta, config, embed, reranker, rescore)


def load_decider(settings: Settings, embed: Embed | None = None, retriever: object = None) -> Decider:
    """The decider of ``settings.decide``: the trained model, or `AlwaysAnswer` when it is off or not trained yet
    (a warning when the model was named in the settings, a debug line for the default name: no decider ships, and
    the measured one loses more answerable turns than it saves, docs/evaluation.md). ``embed``: the turn embedder;
    else the dense retriever's (cached) query embeddings of ``retriever`` when its model is the one the decider was
    trained with; else the model is loaded."""
    cfg = settings.decide
    if not cfg.enabled:
        return AlwaysAnswer("decision stage off: always answer", chitchat=False)
    from local_rag.modelstore.manifest import resolve_model

    try:
        folder, _ = resolve_model(cfg.model, settings.models_dir, role="decider")
    except ModelError as exc:
        log.log(logging.WARNING if "model" in cfg.model_fields_set else logging.DEBUG,
                "no trained decider (%s): the decision stage passes every turn on to the generator; build one with "
                "`local-rag train decider`", exc)
        return AlwaysAnswer(chitchat=cfg.chitchat)
    meta = json.loads((folder / META).read_text(encoding="utf-8")) if (folder / META).exists() else {}
    if meta.get("use_embedding") and embed is None:
        embed = embedder_function(settings, meta.get("embedder", ""), retriever)
    ce = meta.get("cross_encoder") or {}
    same = (settings.pipeline.cross_encoder and Path(settings.reranker.model).name == Path(ce.get("model", "")).name
            and settings.reranker.unit == ce.get("unit", "passage"))
    return read_decider(folder, cfg, embed, decider_reranker(settings, ce) if ce else None, bool(ce) and not same)


def decider_reranker(settings: Settings, ce: dict[str, Any]) -> Callable[[], Any]:
    """A loader (called once, when first needed) of the cross-encoder a decider was trained with: ``ce`` as
    ``decider.json`` records it; None with a warning when it cannot be loaded."""
    loaded: list[Any] = []

    def load() -> Any:
        if not loaded:
            from local_rag.errors import LocalRagError
            from local_rag.rerank import load_reranker

            config = settings.reranker.model_copy(update={**{k: ce[k] for k in ("model", "backend", "max_length", "candidates",
                                                                                 "prior_weight", "unit") if k in ce}, "fallback": "error"})
            try:
                loaded.append(load_reranker(config, settings.models_dir))
            except LocalRagError as exc:
                log.warning("the decider's cross-encoder %s is unavailable (%s): every turn is answered", ce.get("model"), exc)
                loaded.append(None)
        return loaded[0]

    return load


def embedder_function(settings: Settings, name: str = "", retriever: object = None) -> Embed:
    """``texts -> vectors`` with the embedder ``name`` (default: ``settings.embedder.model``): the dense retriever's
    of ``retriever`` when it is that model (its query cache is reused), else the model loaded once."""
    name = name or settings.embedder.model
    dense = getattr(retriever, "retrievers", {}).get("dense")
    if dense is not None and getattr(dense.embedder, "name", "") == name:
        return dense.embed_queries  # type: ignore[no-any-return]
    from local_rag.embed import load_embedder

    embedder = load_embedder(settings.embedder.model_copy(update={"model": name}), settings.models_dir)
    return lambda texts: embedder.embed(texts, kind="query")

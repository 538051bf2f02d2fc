"""The decision stage's features: a few numbers about the last turn, a few about the evidence, and (optionally) the
MiniLM embedding of the last turn.

Evidence features read only what the retrieval and reranking stages already put on the hits (``Hit.scores``:
``dense:<mode>`` cosines, ``bm25:<mode>`` scores, ``fused``, ``cross-encoder`` when a cross-encoder ran), so they cost
nothing; a signal that is absent (no dense list, no cross-encoder) gives 0 and its ``has_*`` flag 0. The
cross-encoder features (`CE_FEATURES`, over the first `CE_TOP` scored hits) read its probabilities as logits: the
best, the mean of the best three, the gap between the best two, the share above 0.5 and the normalized entropy of
the softmax over them (low: one passage stands out). A model records the features it was trained with
(``decider.json``), so one trained without a cross-encoder never reads these columns. The embedding costs one query
embedding (the dense retriever's cached one when the pipeline passes it in).

Example:
    >>> from local_rag.records import Turn
    >>> extractor = FeatureExtractor(embed=None)
    >>> row = extractor.row(Conversation([Turn("user", "Thanks!")]), [])
    >>> row["chitchat"], row["overlap_top1"]
    (1.0, 0.0)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import numpy as np

from local_rag.decide.turns import (
    chitchat_kind,
    content_words,
    dangling_references,
    earlier_text,
    is_clarification,
    last_agent_turn,
    pronouns,
    words,
)
from local_rag.records import Conversation, Hit

Embed = Callable[[list[str]], np.ndarray]
TOP = 5  # hits the evidence features look at
EVIDENCE_TOP = 10  # hits the ambiguity features look at (the decider's training examples keep 10)
_POSSESSIVE = re.compile(r"['’]s\b")
_DEFINITE = re.compile(r"\bthe\s+([a-z][a-z'-]+)", re.I)
_PROPER = re.compile(r"(?<![.!?]\s)(?<=\s)[A-Z][A-Za-z0-9][\w'-]*")
CE_TOP = 10  # cross-encoder-scored hits the CE features look at

TURN_FEATURES = (
    "log_words", "first_turn", "question_mark", "wh_start", "chitchat", "dangling", "pronouns",
    "pronoun_no_history", "new_words", "after_clarify", "demonstrative",
)
EVIDENCE_FEATURES = (
    "fused_margin", "has_dense", "dense_top1", "dense_max", "dense_top5_mean",
    "dense_margin", "has_bm25", "bm25_top1", "has_ce", "ce_top1", "ce_margin", "ce_top5_mean", "agreement_top1",
    "agreement_top5", "titles_top5", "overlap_top1", "overlap_any", "overlap_best",
)
CE_FEATURES = ("ce_max", "ce_top3_mean", "ce_gap", "ce_above", "ce_entropy")
AMBIGUITY_FEATURES = (
    "titles_top10", "title_named_top1", "titles_named_top5", "title_family", "family_unnamed", "dense_title_gap",
    "definite_new", "proper_names",
)
FEATURES = TURN_FEATURES + EVIDENCE_FEATURES + CE_FEATURES + AMBIGUITY_FEATURES
NO_CE_FEATURES = tuple(f for f in FEATURES if not f.startswith(("ce_", "has_ce")))  # a model trained without one
BASE_FEATURES = tuple(f for f in NO_CE_FEATURES if f not in AMBIGUITY_FEATURES)  # the set before the ambiguity ones


def _scores(hit: Hit, prefix: str) -> list[float]:
    return [v for k, v in hit.scores.items() if k.startswith(prefix)]


def turn_row(conversation: Conversation) -> dict[str, float]:
    """The features of the last user turn in its conversation."""
    text = conversation.last_user_turn
    tokens = words(text)
    before = earlier_text(conversation)
    seen = set(content_words(before))
    content = content_words(text)
    first = not before.strip()
    n_pronouns = pronouns(text)
    return {
        "log_words": math.log1p(len(tokens)),
        "first_turn": float(first),
        "question_mark": float("?" in text),
        "wh_start": float(bool(tokens) and tokens[0] in {"what", "which", "who", "when", "where", "why", "how"}),
        "chitchat": float(chitchat_kind(text) is not None),
        "dangling": float(len(dangling_references(conversation))),
        "pronouns": float(min(n_pronouns, 3)),
        "pronoun_no_history": float(first and n_pronouns > 0),
        "new_words": sum(w not in seen for w in content) / len(content) if content else 0.0,
        "after_clarify": float(is_clarification(last_agent_turn(conversation))),
        "demonstrative": float(any(w in {"this", "that", "these", "those"} for w in tokens)),
    }


def evidence_row(question: str, hits: Sequence[Hit]) -> dict[str, float]:
    """The features of the reranked evidence for ``question`` (the first `TOP` hits count)."""
    top = list(hits[:TOP])
    row = dict.fromkeys(EVIDENCE_FEATURES, 0.0) | ce_row(hits)
    if not top:
        return row
    # relative only: the fused score's scale depends on how many lists were fused and their weights
    fused = [h.scores.get("fused", h.score) if "cross-encoder" in h.scores else h.score for h in top]
    row["fused_margin"] = (fused[0] - fused[1]) / abs(fused[0]) if len(fused) > 1 and fused[0] else 0.0
    dense = [max(_scores(h, "dense:"), default=float("nan")) for h in top]
    if any(not math.isnan(d) for d in dense):
        known = [d for d in dense if not math.isnan(d)]
        row.update(has_dense=1.0, dense_top1=known[0], dense_max=max(known), dense_top5_mean=float(np.mean(known)),
                   dense_margin=sorted(known)[-1] - sorted(known)[-2] if len(known) > 1 else 0.0)
    bm25 = [max(_scores(h, "bm25:"), default=0.0) for h in top]
    if any(bm25):
        row.update(has_bm25=1.0, bm25_top1=math.log1p(max(bm25)))
    ce = [h.scores["cross-encoder"] for h in top if "cross-encoder" in h.scores]
    if ce:
        row.update(has_ce=1.0, ce_top1=ce[0], ce_margin=ce[0] - ce[1] if len(ce) > 1 else 0.0,
                   ce_top5_mean=float(np.mean(ce)))
    lists = {k for h in hits for k in h.scores if ":" in k}
    if lists:
        shares = [sum(k in h.scores for k in lists) / len(lists) for h in top]
        row["agreement_top1"], row["agreement_top5"] = shares[0], float(np.mean(shares))
    row["titles_top5"] = len({(h.title or h.doc_id or h.passage_id).strip().lower() for h in top}) / TOP
    asked = set(content_words(question))
    if asked:
        found = [asked & set(content_words(f"{h.title} {h.text}")) for h in top]
        row["overlap_top1"] = len(found[0]) / len(asked)
        row["overlap_any"] = len(set().union(*found)) / len(asked)
        row["overlap_best"] = max(len(f) for f in found) / len(asked)
    return row


def title_key(hit: Hit) -> str:
    """A hit's title as a comparison key (whitespace and case folded; the document id when it has no title)."""
    return " ".join((hit.title or hit.doc_id or hit.passage_id).split()).lower()


def _words(text: str) -> list[str]:
    """`content_words` with possessives cut ("the hurricane's" meets "Hurricane Katrina")."""
    return content_words(_POSSESSIVE.sub("", text))


def ambiguity_row(conversation: Conversation, hits: Sequence[Hit]) -> dict[str, float]:
    """`AMBIGUITY_FEATURES`: do the top passages show several things the turn does not say which of?

    - ``titles_top10``: distinct titles among the first `EVIDENCE_TOP` hits (share);
    - ``title_named_top1`` / ``titles_named_top5``: the share of the top title's words (mean over the distinct top-5
      titles) that the conversation names (1: the user named the thing the passage is about);
    - ``title_family``: the most distinct titles among the first `EVIDENCE_TOP` that share one word of the turn
      ("the hurricane" -> Hurricane Isaac, Hurricane Gloria, Hurricane Katrina), as a share;
      ``family_unnamed``: of those, the ones with a word the conversation never says (what tells them apart);
    - ``dense_title_gap``: the top hit's dense cosine minus the best one under another title (small: rival things);
    - ``definite_new``: 'the <noun>' phrases of the turn whose noun the conversation never used before;
    - ``proper_names``: capitalized words of the turn past its first word (names the user gave)."""
    text = conversation.last_user_turn
    asked = set(_words(text))
    before = set(_words(earlier_text(conversation)))
    said = asked | before
    row = dict.fromkeys(AMBIGUITY_FEATURES, 0.0)
    row["definite_new"] = float(min(3, sum(1 for m in _DEFINITE.finditer(text)
                                            if (w := _words(m.group(1))) and not set(w) & before)))
    row["proper_names"] = float(min(5, len(_PROPER.findall(text[1:]))))
    top = list(hits[:EVIDENCE_TOP])
    if not top:
        return row
    titles: dict[str, Hit] = {}
    for hit in top:
        titles.setdefault(title_key(hit), hit)
    row["titles_top10"] = len(titles) / EVIDENCE_TOP
    words_of = {t: set(_words(t)) for t in titles}

    def named(title: str) -> float:
        return len(words_of[title] & said) / len(words_of[title]) if words_of[title] else 1.0

    first = list(titles)
    row["title_named_top1"] = named(first[0])
    row["titles_named_top5"] = float(np.mean([named(t) for t in first[:TOP]]))
    families = [[t for t in first if w in words_of[t]] for w in asked]
    family = max(families, key=len, default=[])
    if len(family) > 1:
        row["title_family"] = len(family) / EVIDENCE_TOP
        row["family_unnamed"] = sum(bool(words_of[t] - said) for t in family) / EVIDENCE_TOP
    dense = [(max(_scores(h, "dense:"), default=float("nan")), title_key(h)) for h in top]
    if not math.isnan(dense[0][0]):
        rivals = [d for d, t in dense if t != dense[0][1] and not math.isnan(d)]
        row["dense_title_gap"] = dense[0][0] - max(rivals) if rivals else 1.0
    return row


def _logit(p: float) -> float:
    p = min(max(p, 1e-5), 1 - 1e-5)
    return math.log(p / (1 - p))


def ce_row(hits: Sequence[Hit]) -> dict[str, float]:
    """`CE_FEATURES` of the first `CE_TOP` hits that carry a cross-encoder score (all 0 when none does)."""
    probs = sorted((h.scores["cross-encoder"] for h in hits[:CE_TOP] if "cross-encoder" in h.scores), reverse=True)
    row = dict.fromkeys(CE_FEATURES, 0.0)
    if not probs:
        return row
    logits = np.array([_logit(p) for p in probs])
    soft = np.exp(logits - logits.max())
    soft /= soft.sum()
    entropy = float(-(soft * np.log(soft + 1e-12)).sum() / math.log(len(soft))) if len(soft) > 1 else 0.0
    row.update(ce_max=float(logits[0]), ce_top3_mean=float(logits[:3].mean()),
               ce_gap=float(logits[0] - logits[1]) if len(logits) > 1 else 0.0,
               ce_above=sum(p >= 0.5 for p in probs) / CE_TOP, ce_entropy=entropy)
    return row


class FeatureExtractor:
    """Feature vectors for the decision model: the named features in order, then the turn embedding when ``embed``
    is given.

    ``embed``: ``texts -> L2-normalized vectors`` (MiniLM); None leaves the embedding out. ``use_features``:
    False keeps only the embedding (a variant measured against the others). ``names``: the named features in
    column order (default: all but the cross-encoder's; a saved model gives the ones it was trained with).
    """

    def __init__(self, embed: Embed | None = None, use_embedding: bool = True, use_features: bool = True,
                 names: Sequence[str] = NO_CE_FEATURES) -> None:
        self.embed = embed
        self.use_embedding = use_embedding and embed is not None
        self.use_features = use_features or not self.use_embedding
        unknown = sorted(set(names) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown decider features {unknown}: retrain the decider with `local-rag train decider`")
        self.names = tuple(names)

    def row(self, conversation: Conversation, hits: Sequence[Hit]) -> dict[str, float]:
        """The named features (no embedding)."""
        return turn_row(conversation) | evidence_row(conversation.last_user_turn, hits) | ambiguity_row(conversation, hits)

    def vectors(self, conversations: Sequence[Conversation], evidence: Sequence[Sequence[Hit]]) -> np.ndarray:
        """One row per (conversation, hits): `names`, then the last turn's embedding if enabled."""
        pairs = list(zip(conversations, evidence, strict=True))
        width = len(self.names) if self.use_features else 0
        rows = [self.row(c, h) for c, h in pairs] if self.use_features else [{}] * len(pairs)  # each row once
        named = np.array([[r[f] for f in self.names] for r in rows], dtype=np.float32).reshape(len(pairs), width)
        if not self.use_embedding or not pairs:
            return named
        assert self.embed is not None
        vectors = np.asarray(self.embed([c.last_user_turn for c in conversations]), dtype=np.float32)
        return np.hstack([named, vectors])

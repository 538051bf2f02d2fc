"""Answers that say only what their sources say: each sentence of an answer checked against the passages it cites
(or all given passages when it cites none), by a small trained support classifier.

Features of a (sentence, passage) pair (`pair_features`): MiniLM cosine of sentence and passage, the best cosine
of the sentence with one sentence of the passage, the share of the sentence's content words, word pairs and numbers
found in the passage, and the sentence length. The model is a scikit-learn classifier over them, or over the
lexical ones only (no MiniLM call: milliseconds instead of seconds on a CPU), as ``support.json`` records
(`local-rag train support`).

`SupportChecker.check` returns the answer text and a `SupportReport`: per sentence, the passages it cited, the one
that supports it best and whether it is supported. A sentence whose cited passage does not support it while another
given passage does gets its citation moved there; an unsupported sentence is flagged (counted) or, with
``support.mode: drop``, removed.

Example:
    >>> split_sentences("Cats purr [1]. Dogs bark [2][3]. Fish swim.")
    ['Cats purr [1].', 'Dogs bark [2][3].', 'Fish swim.']
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.decide.saved import read_fitted, save_fitted
from local_rag.decide.turns import content_words, words
from local_rag.errors import ModelError
from local_rag.records import Hit
from local_rag.settings import Settings, SupportConfig
from local_rag.text import CITATION

Embed = Callable[[list[str]], np.ndarray]
PAIR_FEATURES = ("cosine", "best_sentence_cosine", "word_share", "pair_share", "number_share", "has_numbers",
                 "log_words")
EMBEDDING_FEATURES = ("cosine", "best_sentence_cosine")  # the two that need MiniLM (most of the check's time)
META = "support.json"
_SENTENCE = re.compile(r"(?<=[.!?])(?:\s*\[\d+(?:\s*,\s*\d+)*\])*\s+(?=[A-Z0-9\"'(])")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def split_sentences(text: str) -> list[str]:
    """Sentences of an answer, each with the citations that follow it; list lines count as sentences."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        start = 0
        for match in _SENTENCE.finditer(line):
            out.append(line[start : match.end()].strip())
            start = match.end()
        out.append(line[start:].strip())
    return [s for s in out if s]


def passage_text(title: str, text: str) -> str:
    """A passage as the support check reads it, in training and in use: title, newline, text (the text alone
    without a title)."""
    return f"{title}\n{text}" if title else text


def passage_texts(passages: Sequence[Hit]) -> list[str]:
    """The passages as the support check reads them (`passage_text`)."""
    return [passage_text(h.title, h.text) for h in passages]


def cited(sentence: str) -> list[int]:
    """The citation numbers of a sentence, in order."""
    return [int(n) for m in CITATION.finditer(sentence) for n in m.group(1).split(",")]


def _bigrams(tokens: list[str]) -> set[tuple[str, str]]:
    return set(zip(tokens, tokens[1:], strict=False))


def pair_features(sentence: str, passage: str, cosine: float, best_sentence_cosine: float) -> list[float]:
    """`PAIR_FEATURES` of one (sentence, passage) pair, given the two cosines."""
    plain = CITATION.sub("", sentence)
    said, there = content_words(plain), set(content_words(passage))
    pairs = _bigrams(words(plain))
    numbers = set(_NUMBER.findall(plain))
    return [
        cosine,
        best_sentence_cosine,
        sum(w in there for w in said) / len(said) if said else 1.0,
        len(pairs & _bigrams(words(passage))) / len(pairs) if pairs else 1.0,
        len(numbers & set(_NUMBER.findall(passage))) / len(numbers) if numbers else 1.0,
        float(bool(numbers)),
        math.log1p(len(words(plain))),
    ]


def pair_matrix(sentences: Sequence[str], passages: Sequence[str], embed: Embed | None) -> np.ndarray:
    """Features of every (sentence, passage) pair: shape (sentences, passages, features). Without ``embed`` the
    two cosines are 0 (a lexical model does not read them)."""
    if not sentences or not passages:
        return np.zeros((len(sentences), len(passages), len(PAIR_FEATURES)))
    if embed is None:
        return np.array([[pair_features(s, p, 0.0, 0.0) for p in passages] for s in sentences])
    pieces = [split_sentences(p) or [p] for p in passages]
    flat = [s for piece in pieces for s in piece]
    vectors = embed([CITATION.sub("", s) for s in sentences] + list(passages) + flat)
    sv, pv, fv = vectors[: len(sentences)], vectors[len(sentences) : len(sentences) + len(passages)], vectors[len(sentences) + len(passages) :]
    whole = sv @ pv.T
    parts = sv @ fv.T
    out = np.zeros((len(sentences), len(passages), len(PAIR_FEATURES)))
    start = 0
    for j, piece in enumerate(pieces):
        best = parts[:, start : start + len(piece)].max(axis=1)
        start += len(piece)
        for i, sentence in enumerate(sentences):
            out[i, j] = pair_features(sentence, passages[j], float(whole[i, j]), float(best[i]))
    return out


@dataclass
class SentenceSupport:
    text: str
    cited: list[int]
    best: int  # 1-based passage number that supports the sentence best (0: no passage)
    p_best: float
    p_cited: float | None  # the best support among the cited passages (None: no citation)
    supported: bool
    cited_supported: list[bool] = field(default_factory=list)  # per cited passage, before any move
    moved_to: int = 0  # the passage its citation moved to (0: not moved)
    kept: bool = True


@dataclass
class SupportReport:
    """What the support check found in one answer."""

    sentences: list[SentenceSupport] = field(default_factory=list)

    @property
    def supported(self) -> int:
        return sum(s.supported for s in self.sentences)

    @property
    def unsupported(self) -> int:
        return len(self.sentences) - self.supported

    @property
    def moved(self) -> int:
        return sum(bool(s.moved_to) for s in self.sentences)

    def to_json(self) -> dict[str, Any]:
        return {"supported": self.supported, "unsupported": self.unsupported, "moved": self.moved,
                "dropped": sum(not s.kept for s in self.sentences), "sentences": [asdict(s) for s in self.sentences]}


def revision_note(report: dict[str, Any] | None, width: int = 80) -> str:
    """What the support check did to a draft a reader already saw streamed (``report``: `SupportReport.to_json`,
    ``TurnResult.support``), in one line; "" when it changed and flagged nothing.

    Example:
        >>> revision_note({"moved": 1, "sentences": [{"text": "Cats bark [2].", "supported": False, "kept": False}]})
        'checked: removed 1 sentence the passages do not support ("Cats bark [2]."); moved 1 citation to the passage that supports its sentence'
    """
    if not report:
        return ""
    sentences = report.get("sentences") or []

    def quoted(items: list[dict[str, Any]]) -> str:
        return "; ".join(f'"{s["text"] if len(s["text"]) <= width else s["text"][: width - 1] + "…"}"' for s in items)

    parts = []
    dropped = [s for s in sentences if not s.get("kept", True)]
    flagged = [s for s in sentences if s.get("kept", True) and not s.get("supported", True)]
    if dropped:
        parts.append(f"removed {len(dropped)} sentence{'s' if len(dropped) > 1 else ''} the passages do not support "
                     f"({quoted(dropped)})")
    if flagged:
        parts.append(f"the passages do not support {len(flagged)} sentence{'s' if len(flagged) > 1 else ''} "
                     f"({quoted(flagged)})")
    if moved := int(report.get("moved") or 0):
        parts.append(f"moved {moved} citation{'s' if moved > 1 else ''} to the passage that supports "
                     f"{'their sentences' if moved > 1 else 'its sentence'}")
    return "checked: " + "; ".join(parts) if parts else ""


def revised(report: dict[str, Any] | None) -> bool:
    """Whether the support check changed the text of the draft (a sentence removed or a citation moved)."""
    return bool(report and (report.get("dropped") or report.get("moved")))


class SupportChecker:
    """A fitted classifier over `pair_features` and the threshold that calls a pair supported."""

    def __init__(self, model: Any, meta: dict[str, Any], embed: Embed | None, config: SupportConfig | None = None) -> None:
        self.model = model
        self.meta = meta
        self.columns = [PAIR_FEATURES.index(f) for f in meta.get("features") or PAIR_FEATURES]
        self.embed = embed if any(PAIR_FEATURES[c] in EMBEDDING_FEATURES for c in self.columns) else None
        self.config = config or SupportConfig()
        self.threshold = self.config.threshold if self.config.threshold >= 0 else float(meta.get("threshold", 0.5))

    def probabilities(self, sentences: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        """P(supported) of every (sentence, passage) pair: shape (sentences, passages)."""
        x = pair_matrix(sentences, passages, self.embed)
        if x.size == 0:
            return np.zeros((len(sentences), len(passages)))
        p = np.asarray(self.model.predict_proba(x.reshape(-1, x.shape[-1])[:, self.columns]), dtype=np.float64)[:, 1]
        return p.reshape(len(sentences), len(passages))

    def check(self, text: str, passages: Sequence[Hit]) -> tuple[str, SupportReport]:
        """The checked answer text and its report (see the module docstring)."""
        sentences = split_sentences(text)
        p = self.probabilities(sentences, passage_texts(passages))
        report = SupportReport()
        kept = []
        for i, sentence in enumerate(sentences):
            numbers = [n for n in cited(sentence) if 1 <= n <= len(passages)]
            best = int(np.argmax(p[i])) + 1 if len(passages) else 0
            p_best = float(p[i, best - 1]) if best else 0.0
            p_cited = max(float(p[i, n - 1]) for n in numbers) if numbers else None
            supported = (p_cited if p_cited is not None else p_best) >= self.threshold
            item = SentenceSupport(sentence, numbers, best, round(p_best, 4),
                                   None if p_cited is None else round(p_cited, 4), supported,
                                   [bool(p[i, n - 1] >= self.threshold) for n in numbers])
            if not supported and numbers and p_best >= self.threshold and self.config.move_citations:
                plain = CITATION.sub("", sentence).rstrip()
                item.text = re.sub(r"\s*([.!?])$", rf" [{best}]\1", plain) if plain[-1:] in ".!?" else f"{plain} [{best}]"
                item.moved_to, item.supported = best, True
            if not item.supported and self.config.mode == "drop":
                item.kept = False
            else:
                kept.append(item.text)
            report.sentences.append(item)
        return " ".join(kept), report


def save_support(folder: Path, model: Any, meta: dict[str, Any]) -> Path:
    return save_fitted(folder, model, meta, META)


def load_support(folder: Path, embed: Embed | None, config: SupportConfig | None = None) -> SupportChecker:
    """The `SupportChecker` saved in ``folder``."""
    model, meta = read_fitted(folder, META, "support model", "local-rag train support")
    return SupportChecker(model, meta, embed, config)


def load_support_checker(settings: Settings, retriever: object = None) -> SupportChecker | None:
    """The support checker of ``settings.support`` (None, with a warning, when no trained model is present)."""
    import logging

    from local_rag.decide.model import embedder_function
    from local_rag.modelstore.manifest import resolve_model

    try:
        folder, _ = resolve_model(settings.support.model, settings.models_dir, role="support")
    except ModelError as exc:
        logging.getLogger("local_rag.decide").warning(
            "no trained support model (%s): answers are not checked; build one with `local-rag train support`", exc)
        return None
    meta = json.loads((folder / META).read_text(encoding="utf-8")) if (folder / META).exists() else {}
    lexical = not set(meta.get("features") or PAIR_FEATURES) & set(EMBEDDING_FEATURES)
    embed = None if lexical else embedder_function(settings, meta.get("embedder", ""), retriever)
    return load_support(folder, embed, settings.support)

"""RB_alg, the official algorithmic score: ROUGE-L, BERTScore recall and BERT-K-Precision.

As the official ``run_algorithmic.py`` (IBM/mt-rag-benchmark) defines them:

- ``RougeL_stemFalse``: ROUGE-L F-measure of the prediction against the reference answer, no stemming
  (`rouge-score`, the library behind HF ``evaluate``'s ``rouge``).
- ``BertscoreR``: BERTScore recall of the prediction against the reference answer.
- ``BertKPrec``: BERTScore precision of the prediction against each passage in ``contexts`` (one value a passage).
- ``RB_agg`` = harmonic mean of ``(BertscoreR+1)/2``, ``RougeL`` and ``(max BertKPrec+1)/2``; 0 when any of them is
  0, and 0 when the task has no passages.

The official encoder is ``microsoft/deberta-xlarge-mnli`` (layer 40, scores rescaled with bert-score's baseline).
Any other encoder (e.g. all-MiniLM-L6-v2 here) gives figures that are **not comparable** to official ones;
`BertScore.comparable` says which case a run is in, and every report repeats it.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.errors import ModelError

log = logging.getLogger("local_rag.evaluation.generation")

OFFICIAL_ENCODER = "microsoft/deberta-xlarge-mnli"
OFFICIAL_LAYER = 40
OFFICIAL_LOCAL_NAMES = ("deberta-xlarge-mnli", "microsoft-deberta-xlarge-mnli")
FALLBACK_ENCODER = "all-MiniLM-L6-v2"
NOT_COMPARABLE = "not comparable to official figures"


@functools.cache
def _rouge_scorer() -> Any:
    require("rouge_score", "ROUGE-L (the 'eval' extra: pip install 'local-rag[eval]')")
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l(prediction: str, target: str) -> float:
    """ROUGE-L F-measure, no stemming, rouge-score's default tokenizer (lower-cased alphanumeric tokens).

    Example:
        >>> round(rouge_l("the cat sat on the mat", "the cat lay on the mat"), 4)
        0.8333
    """
    return float(_rouge_scorer().score(target, prediction)["rougeL"].fmeasure)


def rb_agg(bert_recall: float | None, rouge: float | None, kprecs: Sequence[float | None]) -> float:
    """The official RB_agg from raw BERTScore recall (in [-1, 1]), ROUGE-L and the per-passage BERT-K-Precisions.

    Example:
        >>> round(rb_agg(0.2, 0.3, [0.1, 0.4]), 4)  # harmonic mean of 0.6, 0.3, 0.7
        0.4667
    """
    if not kprecs:
        return 0.0
    recall = ((bert_recall or 0.0) + 1) / 2
    rouge = rouge or 0.0
    extractiveness = (max(0.0 if k is None else k for k in kprecs) + 1) / 2
    return harmonic_mean([recall, rouge, extractiveness]) or 0.0


def harmonic_mean(values: Sequence[float | None]) -> float | None:
    """Harmonic mean; 0 when any value is 0 (or below), ``None`` when any is missing or there are none.

    Example:
        >>> harmonic_mean([0.5, 1.0, 1.0])
        0.75
    """
    if not values or any(v is None for v in values):
        return None
    vals = [float(v) for v in values if v is not None]
    if any(v <= 0 for v in vals):
        return 0.0
    return len(vals) / sum(1 / v for v in vals)


@dataclass(frozen=True)
class EncoderChoice:
    """Which BERTScore encoder a run uses, and whether its figures compare with official ones."""

    name: str
    folder: Path
    layer: int
    baseline: Path | None

    @property
    def comparable(self) -> bool:
        return self.name in OFFICIAL_LOCAL_NAMES and self.layer == OFFICIAL_LAYER and self.baseline is not None

    def describe(self) -> str:
        rescale = "rescaled with the official baseline" if self.baseline else "raw (no rescaling baseline)"
        note = "official encoder" if self.comparable else NOT_COMPARABLE
        return f"BERTScore: {self.name} layer {self.layer}, {rescale}; {note}"


def choose_encoder(name: str, layers: int, models_dir: str | Path) -> EncoderChoice:
    """Resolve ``gen_eval.bertscore_model`` (``auto`` = DeBERTa-xlarge-MNLI when imported, else MiniLM).

    Raises:
        ModelError: the named model is not on disk.
    """
    from local_rag.modelstore import resolve_model

    if name == "auto":
        for candidate in OFFICIAL_LOCAL_NAMES:
            folder = Path(models_dir) / candidate
            if (folder / "config.json").exists():
                name = candidate
                break
        else:
            name = FALLBACK_ENCODER
    folder, _ = resolve_model(name, models_dir)
    if not (Path(folder) / "config.json").exists():
        raise ModelError(f"BERTScore encoder {name!r}: {folder} is not a transformers model folder (no config.json)")
    official = Path(folder).name in OFFICIAL_LOCAL_NAMES or name in OFFICIAL_LOCAL_NAMES
    config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    n_layers = int(config.get("num_hidden_layers", 0)) or 1
    layer = layers or (OFFICIAL_LAYER if official else n_layers)
    if layer > n_layers:
        raise ModelError(f"BERTScore encoder {name!r} has {n_layers} layers; gen_eval.bertscore_layers={layer}")
    baseline = None
    if official:
        bert_score = require("bert_score", "BERTScore (the 'eval' extra: pip install 'local-rag[eval]')")
        path = Path(str(bert_score.__file__)).parent / "rescale_baseline" / "en" / f"{OFFICIAL_ENCODER}.tsv"
        baseline = path if path.exists() else None
    return EncoderChoice(Path(folder).name if official else name, Path(folder), layer, baseline)


class BertScore:
    """BERTScore with bert-score on a local model folder (offline; no idf, as the official metric).

    Example:
        >>> scorer = BertScore(choose_encoder("auto", 0, "models"))  # doctest: +SKIP
        >>> p, r, f = scorer.score(["a cat sat"], ["the cat sat down"])[0]  # doctest: +SKIP
    """

    def __init__(self, encoder: EncoderChoice, batch_size: int = 16, device: str = "cpu") -> None:
        from local_rag.device import enforce_offline

        enforce_offline()
        bert_score = require("bert_score", "BERTScore (the 'eval' extra: pip install 'local-rag[eval]')")
        self.encoder = encoder
        self.batch_size = batch_size
        try:
            self._scorer = bert_score.BERTScorer(
                model_type=str(encoder.folder), num_layers=encoder.layer, lang="en", idf=False,
                rescale_with_baseline=encoder.baseline is not None,
                baseline_path=str(encoder.baseline) if encoder.baseline else None, device=device,
            )
        except (OSError, ValueError) as exc:
            raise ModelError(f"BERTScore could not load {encoder.folder}: {exc}") from exc
        self._baseline = self._scorer.baseline_vals.tolist() if encoder.baseline is not None else None

    @property
    def comparable(self) -> bool:
        return self.encoder.comparable

    def _empty(self) -> tuple[float, float, float]:
        # bert-score sets the raw scores of an empty sentence to 0 (then rescales); its own code path for empty
        # strings breaks on transformers 5, so empty pairs never reach it
        if self._baseline is None:
            return (0.0, 0.0, 0.0)
        p, r, f = ((0.0 - b) / (1 - b) for b in self._baseline)
        return (p, r, f)

    def score(self, candidates: Sequence[str], references: Sequence[str]) -> list[tuple[float, float, float]]:
        """``(precision, recall, F1)`` for each candidate/reference pair."""
        if len(candidates) != len(references):
            raise ValueError("candidates and references differ in length")
        out: list[tuple[float, float, float] | None] = [None] * len(candidates)
        todo = [i for i, (c, r) in enumerate(zip(candidates, references, strict=True)) if c.strip() and r.strip()]
        for i in set(range(len(candidates))) - set(todo):
            out[i] = self._empty()
        if todo:
            p, r, f = self._scorer.score(
                [candidates[i] for i in todo], [references[i] for i in todo], batch_size=self.batch_size,
                verbose=False,
            )
            for j, i in enumerate(todo):
                out[i] = (float(p[j]), float(r[j]), float(f[j]))
        return [x if x is not None else (0.0, 0.0, 0.0) for x in out]


def algorithmic_metrics(
    prediction: str, targets: Sequence[str], passages: Sequence[str], bert: BertScore
) -> dict[str, list[float]]:
    """The official per-task algorithmic metrics (lists, as the official output holds them).

    Returns ``RougeL_stemFalse``, ``BertscoreP``, ``BertscoreR`` and ``BertscoreF1`` per target, ``BertKPrec``
    per passage (absent with no passages, as officially) and ``RB_agg``.
    """
    pairs_c = [prediction] * (len(targets) + len(passages))
    pairs_r = list(targets) + list(passages)
    scores = bert.score(pairs_c, pairs_r) if pairs_r else []
    tscores, pscores = scores[: len(targets)], scores[len(targets):]
    metrics: dict[str, list[float]] = {
        "RougeL_stemFalse": [rouge_l(prediction, t) for t in targets],
        "BertscoreP": [s[0] for s in tscores],
        "BertscoreR": [s[1] for s in tscores],
        "BertscoreF1": [s[2] for s in tscores],
    }
    if passages:
        metrics["BertKPrec"] = [s[0] for s in pscores]
    recall = metrics["BertscoreR"][0] if targets else None
    rouge = metrics["RougeL_stemFalse"][0] if targets else None
    metrics["RB_agg"] = [rb_agg(recall, rouge, metrics.get("BertKPrec", []))]
    return metrics

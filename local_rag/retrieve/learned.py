"""Learned fusion: a small trained model scores every candidate of the ranked lists from where it stands in each
list (and where its document stands), instead of reciprocal rank fusion's fixed formula.

Reciprocal rank fusion gives every list the same say. A conversation's lists do not deserve it: the list of the
last turn alone misses what the turn leaves implicit, the list of the previous answer finds the document the
conversation is about but not the passage asked for now. A model over a few features per list learns
how much each list is worth and how a document that several lists agree on should lift its passages: a linear score
trained listwise (a softmax over each turn's candidates) on labelled turns (`local-rag train fusion`: MTRAG's train
split). It scores a turn's candidates in well under a millisecond.

A trained fusion model is a folder holding ``fusion.json``: the list keys it reads, the depth, the feature names, the
standardisation and weights of its linear score, how it was trained and its figures; registered in
``models/manifest.json`` with role ``fusion``.

Example:
    >>> fusion = read_fusion(folder)  # doctest: +SKIP
    >>> fusion.fuse({"bm25:lastturn": bm25_hits, "dense:lastturn": dense_hits}, top_k=10)  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any  # Any: JSON metadata

import numpy as np

from local_rag.errors import ModelError
from local_rag.records import Hit
from local_rag.retrieve.fusion import merge_hits

META = "fusion.json"
# per list: 1/rank, 1/(60+rank) (RRF's term), the score (cosine for dense lists, share of the list's best otherwise),
# 1/rank of the best passage of the same document, and whether the list exists for this turn at all
PER_LIST = ("rr", "rrf", "score", "doc_rr", "listed")


def feature_names(keys: Sequence[str]) -> list[str]:
    """Column names of `candidate_features` for the list ``keys`` (``retriever:mode``)."""
    return [f"{key}.{name}" for key in keys for name in PER_LIST]


@dataclass
class Candidates:
    """The candidates of one turn (the union of each list's top ``depth``, sorted by id) and their feature rows."""

    ids: list[str]
    features: np.ndarray  # (len(ids), len(feature_names(keys))), float32


def candidate_features(lists: Mapping[str, Sequence[Hit]], keys: Sequence[str], depth: int) -> Candidates:
    """Feature rows for the union of the top ``depth`` hits of the lists named in ``keys``; a key with no list (the
    first turn has no previous answer) gives zeros and ``listed`` 0. Lists not in ``keys`` are ignored.

    Example:
        >>> lists = {"bm25:lastturn": [Hit("a", 4.0), Hit("b", 2.0)], "dense:lastturn": [Hit("b", 0.8)]}
        >>> c = candidate_features(lists, ["bm25:lastturn", "dense:lastturn"], depth=10)
        >>> c.ids, c.features[:, 0].tolist()  # 1/rank in the BM25 list
        (['a', 'b'], [1.0, 0.5])
    """
    heads = {key: list(lists.get(key, ()))[:depth] for key in keys}
    ids = sorted({h.passage_id for hits in heads.values() for h in hits})
    row = {pid: i for i, pid in enumerate(ids)}
    out = np.zeros((len(ids), len(keys) * len(PER_LIST)), dtype=np.float32)
    docs = {h.passage_id: h.doc_id or h.passage_id for hits in heads.values() for h in hits}
    for k, key in enumerate(keys):
        hits = heads[key]
        if not hits:
            continue
        col = k * len(PER_LIST)
        dense = key.split(":", 1)[0] == "dense"
        top = max(h.score for h in hits)
        floor = min(h.score for h in hits)
        if dense:  # a passage outside the list scored below its last one
            out[:, col + 2] = floor - 0.05
        best_of_doc: dict[str, int] = {}
        for rank, hit in enumerate(hits, start=1):
            best_of_doc.setdefault(hit.doc_id or hit.passage_id, rank)
        for rank, hit in enumerate(hits, start=1):
            i = row[hit.passage_id]
            if out[i, col] > 0:  # a passage listed twice (two chunks): its best rank counts
                continue
            out[i, col] = 1.0 / rank
            out[i, col + 1] = 1.0 / (60 + rank)
            out[i, col + 2] = hit.score if dense else (hit.score / top if top > 0 else 0.0)
        for pid, i in row.items():
            doc_rank = best_of_doc.get(docs[pid])
            out[i, col + 3] = 1.0 / doc_rank if doc_rank else 0.0
        out[:, col + 4] = 1.0
    return Candidates(ids, out)


class LearnedFusion:
    """A linear scorer over standardised `candidate_features`: fused score = ``((x - mean) / scale) @ weights``.

    ``meta`` holds ``keys`` (the lists it reads, in column order), ``depth``, ``features`` (names, to refuse another
    layout) and the three vectors. The model is plain numbers in JSON: loading it runs no pickled code and needs no
    scikit-learn.
    """

    def __init__(self, meta: Mapping[str, Any]) -> None:
        self.meta = dict(meta)
        self.keys: list[str] = list(meta["keys"])
        self.depth = int(meta.get("depth", 50))
        expected = feature_names(self.keys)
        if list(meta.get("features", expected)) != expected:
            raise ModelError("this fusion model was trained with another feature layout; rebuild it with `local-rag train fusion`")
        self.mean = np.asarray(meta["mean"], dtype=np.float64)
        self.scale = np.asarray(meta["scale"], dtype=np.float64)
        self.weights = np.asarray(meta["weights"], dtype=np.float64)
        if not (self.mean.shape == self.scale.shape == self.weights.shape == (len(expected),)):
            raise ModelError(f"this fusion model's vectors do not match its {len(expected)} features; rebuild it with `local-rag train fusion`")

    @property
    def modes(self) -> list[str]:
        """The query modes the model reads lists of, in first-use order."""
        return list(dict.fromkeys(key.split(":", 1)[1].split("#", 1)[0] for key in self.keys))

    def decision_function(self, features: np.ndarray) -> np.ndarray:
        """The model's score of each feature row (higher is better)."""
        return np.asarray(((features - self.mean) / self.scale) @ self.weights, dtype=float)

    def fuse(self, lists: Mapping[str, list[Hit]], top_k: int = 10) -> list[Hit]:
        """The ``top_k`` candidates by the model's score, as `local_rag.retrieve.fusion.rrf` returns them."""
        candidates = candidate_features(lists, self.keys, self.depth)
        scores = self.decision_function(candidates.features) if candidates.ids else np.zeros(0)
        return merge_hits(lists, dict(zip(candidates.ids, scores.tolist(), strict=True)), "learned", top_k)


def save_fusion(folder: Path, meta: Mapping[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / META).write_text(json.dumps(dict(meta), indent=2) + "\n", encoding="utf-8")


def read_fusion(folder: Path) -> LearnedFusion:
    """The `LearnedFusion` saved in ``folder``.

    Raises:
        ModelError: the folder cannot be read or holds another feature layout.
    """
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
        return LearnedFusion(meta)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"the fusion model in {folder} cannot be read ({exc}); rebuild it with `local-rag train fusion`") from exc


def load_fusion(name: str, models_dir: str | Path) -> LearnedFusion:
    """The fusion model ``name`` (a ``models/`` name with role ``fusion``, or a folder).

    Raises:
        ModelError: unknown, missing or unreadable model.
    """
    from local_rag.modelstore.manifest import resolve_model

    if not name:
        raise ModelError("fusion.method is 'learned' but fusion.model names no model; train one with `local-rag train fusion`")
    folder, _ = resolve_model(name, models_dir, role="fusion")
    return read_fusion(folder)

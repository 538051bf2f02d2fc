"""Cross-validation for ``local-rag train adapt``: every written query measured once, by a model that was not trained
on its document.

The documents are split into ``folds`` groups (`local_rag.train.synth.document_folds`). For each group, the embedder
is fine-tuned on the kept queries of the other groups' documents, and the held-out group's queries (all of them,
kept by the consistency filter or not) are ranked by the first stage and with that model re-scoring it. Pooled over
the groups, every query counts once: a small collection's check rests on all its queries instead of a fifth of them
(session 44: 35 held-out queries could not tell +0.017 MRR@10 from no change).

A fold's ranks are saved in ``<work>/cv/fold-<i>.json`` with a key of what made them (base model, training settings,
data, the group's documents and queries, the re-scorer's settings): a rerun or a resumed run reuses them. The fold's model lives
in ``<work>/cv/models`` only while it is measured.

Example:
    >>> result = cross_validate(measured, examples, queries, training, work, folds=5)  # doctest: +SKIP
    >>> result.ranks["+ adapted"][:3], result.folds[0]["queries"]  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from local_rag.settings import Settings
from local_rag.train.data import Example, document_of
from local_rag.train.embedder import EmbedderTraining
from local_rag.train.synth import SynthQuery

ADAPTED = "+ adapted"  # the row of the fold models' pooled ranks


@dataclass
class CrossValidation:
    """Pooled ranks of every measured query (rows ``first stage`` and `ADAPTED`, in the order of ``positions``: the
    measured queries' places in the list given, all but a skipped fold's), and a record per fold."""

    ranks: dict[str, list[int]]
    positions: list[int]
    folds: list[dict[str, Any]] = field(default_factory=list)


def cross_validate(measured: Settings, examples: Sequence[Example], queries: Sequence[SynthQuery],
                   training: EmbedderTraining, work: Path, folds: int, data_sha256: str = "",
                   progress: bool = True) -> CrossValidation:
    """Fine-tune ``measured.embedder.model`` once per fold on ``examples`` outside the fold, and rank the fold's
    ``queries`` with it as ``measured.reranker`` (a bi-encoder re-scorer). A fold with no example left to train on
    is skipped (its queries are not measured; its record says so).

    Raises:
        BadInputError: too few folds, or queries from a single document (`document_folds`).
    """
    from tqdm import tqdm

    from local_rag.train.embedder import train_embedder
    from local_rag.train.store import base_folder
    from local_rag.train.synth import document_folds
    from local_rag.train.synth_run import heldout_ranks

    groups = document_folds(queries, folds)
    base = str(base_folder(measured.embedder.model, measured.models_dir))
    cv = work / "cv"
    cv.mkdir(parents=True, exist_ok=True)
    first: dict[int, int] = {}
    adapted: dict[int, int] = {}
    records = []
    bar = tqdm(groups, desc="cross-validation", unit="fold", disable=not progress)
    for i, docs in enumerate(bar, 1):
        positions = [n for n, q in enumerate(queries) if document_of(q.passage_id) in docs]
        train = [ex for ex in examples if document_of(ex.positive_id) not in docs]
        key = _key(measured, training, data_sha256, docs, [queries[n] for n in positions])
        path = cv / f"fold-{i}.json"
        record = _load(path, key)
        if record is None:
            record = {"fold": i, "key": key, "documents": len(docs), "queries": len(positions), "examples": len(train)}
            if not any(len(ex.negatives) >= training.negatives for ex in train):
                record["skipped"] = "no kept query outside this fold's documents to train on"
            else:
                models = cv / "models"
                shutil.rmtree(models, ignore_errors=True)
                folder = train_embedder(train, base, f"fold-{i}", models, training,
                                        {"sha256": data_sha256, "fold": i}, progress=False)
                trained = json.loads((folder / "training.json").read_text(encoding="utf-8"))
                ranks = heldout_ranks(measured, [queries[n] for n in positions], "chunk", [str(folder)], depth=20,
                                      progress=False, models_dir=models)
                record.update(train_seconds=trained["train_seconds"], steps=trained["steps"],
                              first=ranks["first stage"], adapted=ranks[f"+ {folder.name}"])
                shutil.rmtree(models, ignore_errors=True)
            path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        if "skipped" not in record:
            first.update(zip(positions, record["first"], strict=True))
            adapted.update(zip(positions, record["adapted"], strict=True))
        bar.set_postfix(queries=len(first))
        records.append({k: v for k, v in record.items() if k not in ("first", "adapted", "key")})
    measured_positions = sorted(first)
    return CrossValidation({"first stage": [first[n] for n in measured_positions],
                            ADAPTED: [adapted[n] for n in measured_positions]}, measured_positions, records)


def _key(measured: Settings, training: EmbedderTraining, data_sha256: str, docs: set[str],
         held: Sequence[SynthQuery]) -> str:
    what = {"base": measured.embedder.model, "training": asdict(training), "data": data_sha256,
            "documents": sorted(docs), "index": measured.index, "queries": [(q.passage_id, q.kind, q.text) for q in held],
            "reranker": measured.reranker.model_dump(include={"candidates", "prior_weight", "max_length"})}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()


def _load(path: Path, key: str) -> dict[str, Any] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("key") == key else None

"""Learned-fusion variants by 5-fold cross-validation by conversation on the MTRAG TRAIN split only (issue 23).

Reads the lists cached by `local-rag train fusion --work runs/i23/fusion` (no retrieval); writes
docs/benchmarks/i23/fusion-variants.json. Run from the repository root:

    python docs/benchmarks/i23/fusion_variants.py

Variants: the query modes whose lists the model reads; extra global features (how many lists hold the candidate,
its best rank and document rank over lists); no document-rank feature; and a pointwise logistic regression
(scikit-learn, balanced classes) of the same features instead of the listwise fit.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

import local_rag.retrieve.learned as learned
import local_rag.train.fusion as fusion
from local_rag.settings import load_settings

WORK = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/i23/fusion")
turns = []
for path in sorted(WORK.glob("lists-train-*.jsonl")):
    turns += [fusion._turn_from_json(json.loads(line)) for line in path.read_text().splitlines()[1:] if line.strip()]
labelled = [t for t in turns if t.gold]
base = learned.candidate_features
n = len(learned.PER_LIST)


def with_globals(lists, keys, depth):  # type: ignore[no-untyped-def]
    c = base(lists, keys, depth)
    rr, doc = c.features[:, 0::n], c.features[:, 3::n]
    extra = np.stack([(rr > 0).sum(1), rr.max(1), doc.max(1), doc.sum(1)], axis=1).astype(np.float32)
    return learned.Candidates(c.ids, np.hstack([c.features, extra]))


def without_doc(lists, keys, depth):  # type: ignore[no-untyped-def]
    c = base(lists, keys, depth)
    return learned.Candidates(c.ids, c.features[:, [i for i in range(c.features.shape[1]) if i % n != 3]])


def cv_with(features: Callable, keys: list[str], grid=(0.001, 0.01)) -> dict[str, float]:  # type: ignore[type-arg]
    fusion.candidate_features = features
    width = features(labelled[0].lists, keys, 50).features.shape[1]
    names = fusion.feature_names
    fusion.feature_names = lambda k: [f"f{i}" for i in range(width)]  # type: ignore[assignment]
    learned.feature_names = fusion.feature_names
    try:
        cv = fusion.cross_validate(labelled, keys, 50, grid=grid)
    finally:
        fusion.candidate_features, fusion.feature_names, learned.feature_names = base, names, names
    return {p: v["ndcg_cut_5"] for p, v in cv["by_penalty"].items()}


def pointwise_cv(keys: list[str], c: float = 0.3) -> float:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    groups = [t.conversation for t in labelled]
    run: dict[str, dict[str, float]] = {}
    for fit_idx, held_idx in GroupKFold(n_splits=5).split(labelled, groups=groups):
        data = fusion.design([labelled[i] for i in fit_idx], keys, 50)
        x = np.vstack([g[0] for g in data.groups])
        y = np.concatenate([(g[1] > 0).astype(int) for g in data.groups])
        model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=5000, class_weight="balanced")).fit(x, y)
        for i in held_idx:
            cands = base(labelled[i].lists, keys, 50)
            s = model.decision_function(cands.features) if cands.ids else np.zeros(0)
            run[labelled[i].id] = {cands.ids[j]: float(s[j]) for j in np.argsort(-s)[:10]}
    return fusion.ndcg5(run, labelled)["ndcg_cut_5"]


out: dict[str, object] = {"turns": len(labelled), "folds": "5, by conversation", "metric": "out-of-fold nDCG@5"}
keys3 = fusion.list_keys(["bm25", "dense"], ["lastturn", "lasttwo", "lastanswer"])
out["rrf lastturn"] = fusion.ndcg5(fusion.rrf_run(labelled, fusion.list_keys(["bm25", "dense"], ["lastturn"]), load_settings("cpu-test")), labelled)["ndcg_cut_5"]
out["modes"] = {"+".join(m): cv_with(base, fusion.list_keys(["bm25", "dense"], m)) for m in
                (["lastturn"], ["lastturn", "lastanswer"], ["lastturn", "lasttwo"], ["lastturn", "lasttwo", "lastanswer"])}
out["features"] = {"per-list": out["modes"]["lastturn+lasttwo+lastanswer"], "+ global": cv_with(with_globals, keys3),  # type: ignore[index]
                   "- document rank": cv_with(without_doc, keys3)}
out["pointwise logistic regression (C 0.3)"] = pointwise_cv(keys3)
Path("docs/benchmarks/i23/fusion-variants.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
print(json.dumps(out, indent=2))

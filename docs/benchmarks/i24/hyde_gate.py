"""Issue 24, session 33: is the HyDE passage a decline signal? On the train sample of session 27's IDK gate (all 45
UNANSWERABLE train tasks, 60 answerable in sha1 order; docs/benchmarks/decider-pidk/score-train-cpu), and on its test
subset (10 / 40), the AUC (UNANSWERABLE against ANSWERABLE + PARTIAL) of retrieval-side scores with and without the
1.5B's pseudo-answer, beside the gate's own P(IDK) of session 27 (idk_score, recorded in the same files).

Signals (higher = more likely unanswerable, so each is negated where a high score means "found"):
  dense top-1 cosine of the own rewrite; dense top-1 cosine of the HyDE passage; their max; the mean of the HyDE
  passage's cosine with the first 5 fused passages (rewrite + HyDE, profile cpu-hyde); BM25 top-1 of each.

The rewrites and passages are cached (--llm-cache, default runs/i23/rewrites.jsonl, the session 32-33 cache) so a
second run makes no LLM call. Run it alone (LLM):  flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/i24/hyde_gate.py
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from local_rag.embed import load_embedder
from local_rag.evaluation.generation.official import answerability
from local_rag.llm import load_llm
from local_rag.llm.pipeline import LLMQueries, conversations_by_id
from local_rag.mtrag import default_mtrag_dir, load_generation_tasks, task_domain
from local_rag.records import Query
from local_rag.retrieve.stack import open_retriever
from local_rag.settings import load_settings

SETS = {"train": "docs/benchmarks/decider-pidk/score-train-cpu/answers.jsonl",
        "test": "docs/benchmarks/decider-pidk/score-test-cpu/answers.jsonl"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="train,test")
    ap.add_argument("--llm-cache", default="runs/i23/rewrites.jsonl")
    ap.add_argument("--out", default="docs/benchmarks/i24/hyde_gate.json")
    args = ap.parse_args()
    settings = load_settings("cpu-hyde")
    tasks_file = default_mtrag_dir() / "generation_tasks" / "mtrag_tasks.jsonl"
    tasks = {t["task_id"]: t for t in load_generation_tasks(tasks_file)}
    conversations = conversations_by_id(tasks_file)
    llm = load_llm(settings.llm, settings.models_dir)
    # the rewrites and passages as the Task A rows of sessions 32-33 made them (profile cpu-qwen: their cache keys)
    queries = LLMQueries(llm, load_settings("cpu-qwen"), ["rewrite", "hyde"], args.llm_cache)
    embedder = load_embedder(settings.embedder, settings.models_dir)
    retrievers = {}
    report: dict = {}
    data: dict = {}
    for name in args.sets.split(","):
        rows = [json.loads(line) for line in Path(SETS[name]).read_text().splitlines() if line.strip()]
        labels, feats, ids = [], [], []
        started = time.perf_counter()
        for i, row in enumerate(rows):
            task = tasks[row["task_id"]]
            label = answerability(task)
            if label not in ("UNANSWERABLE", "ANSWERABLE", "PARTIAL"):
                continue
            domain = task_domain(task)
            if domain not in retrievers:
                s = settings.model_copy(deep=True)
                s.index = f"mtrag-{domain}"
                retrievers[domain] = open_retriever(s, embedder)
            hybrid = retrievers[domain]
            q = queries(conversations[row["task_id"]])
            rw, hy = q["rewrite"][0], q["hyde"][0]
            dense, bm25 = hybrid.retrievers["dense"], hybrid.retrievers["bm25"]
            d_rw, d_hy = (dense.search([t], k=1)[0] for t in (rw, hy))
            b_rw, b_hy = (bm25.search([t], k=1)[0] for t in (rw, hy))
            fused = hybrid.search([Query(rw, "rewrite"), Query(hy, "hyde")], top_k=5)
            hv = embedder.embed([hy], kind="query")[0]
            pv = embedder.embed([h.text or "" for h in fused], kind="passage") if fused else np.zeros((1, len(hv)))
            top = lambda hits: hits[0].score if hits else 0.0  # noqa: E731
            feats.append({"dense_rewrite": -top(d_rw), "dense_hyde": -top(d_hy), "dense_max": -max(top(d_rw), top(d_hy)),
                          "hyde_vs_top5": -float(np.mean(pv @ hv)), "bm25_rewrite": -top(b_rw), "bm25_hyde": -top(b_hy),
                          "idk_score": row["prediction"].get("idk_score", 0.0)})
            labels.append(int(label == "UNANSWERABLE"))
            ids.append(row["task_id"])
            print(f"\r{name}: {i + 1}/{len(rows)}", end="", flush=True)
        print(f" ({time.perf_counter() - started:.0f} s)")
        y = np.array(labels)
        aucs = {k: round(float(roc_auc_score(y, [f[k] for f in feats])), 3) for k in feats[0]}
        report[name] = {"unanswerable": int(y.sum()), "answerable": int(len(y) - y.sum()), "auc": aucs}
        print(name, report[name])
        data[name] = (ids, y, feats)
    if "train" in data and "test" in data:
        report["combined"] = combined(data["train"], data["test"])
        print("combined", report["combined"])
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    with Path(args.out).with_suffix(".features.jsonl").open("w") as fh:  # ids, labels, features: no MTRAG text
        for name, (ids, y, feats) in data.items():
            for task_id, label, f in zip(ids, y.tolist(), feats, strict=True):
                fh.write(json.dumps({"set": name, "task_id": task_id, "unanswerable": label, **f}) + "\n")


COMBINED = ("dense_hyde", "dense_rewrite", "idk_score")


def combined(train: tuple, test: tuple, budget: float = 0.10) -> dict:
    """Logistic regression over `COMBINED` (standardised): out-of-fold AUC on train (5 folds by conversation), and the
    share of UNANSWERABLE declined at the threshold that declines at most ``budget`` of the answerable train turns
    (out of fold), then the same threshold on test."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def matrix(feats: list) -> np.ndarray:
        return np.array([[f[k] for k in COMBINED] for f in feats])

    ids, y, feats = train
    groups = [i.split("<::>")[0] for i in ids]
    model = make_pipeline(StandardScaler(), LogisticRegression())
    oof = cross_val_predict(model, matrix(feats), y, groups=groups, cv=GroupKFold(5), method="predict_proba")[:, 1]
    threshold = float(np.quantile(oof[y == 0], 1 - budget))
    model.fit(matrix(feats), y)
    t_ids, t_y, t_feats = test
    p = model.predict_proba(matrix(t_feats))[:, 1]
    rate = lambda s, yy, cls: round(float(np.mean(s[yy == cls] > threshold)), 3)  # noqa: E731
    return {"features": list(COMBINED), "train_oof_auc": round(float(roc_auc_score(y, oof)), 3),
            "train_declined_unanswerable": rate(oof, y, 1), "train_declined_answerable": rate(oof, y, 0),
            "test_auc": round(float(roc_auc_score(t_y, p)), 3),
            "test_declined_unanswerable": rate(p, t_y, 1), "test_declined_answerable": rate(p, t_y, 0)}


if __name__ == "__main__":
    main()

"""`local-rag train fusion`: fit the learned fusion (`local_rag.retrieve.learned`) on labelled turns.

1. Lists: every retriever x query mode list of each MTRAG task of the split (``lastturn``, ``lasttwo``,
   ``lastanswer``; ``rewrite`` from a cache of the system's own rewrites), cached in the work folder so a rerun
   retrieves nothing twice.
2. A linear score is fitted listwise (`fit_listwise`); cross-validation by conversation picks its L2 penalty by
   out-of-fold nDCG@5, reported beside reciprocal rank fusion of the same lists and of the last turn's lists alone.
3. The model fitted on every labelled turn is saved to ``models/<name>/fusion.json`` and recorded in the manifest
   with role ``fusion``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any  # Any: JSON reports

import numpy as np

from local_rag.errors import BadInputError
from local_rag.evaluation.metrics import mean_metrics, run_scores, score_run
from local_rag.records import Hit, Query
from local_rag.retrieve.fusion import fuse
from local_rag.retrieve.learned import LearnedFusion, candidate_features, feature_names
from local_rag.settings import Settings

DEFAULT_MODES = ("lastturn", "lasttwo", "lastanswer")
MODES = ("lastturn", "lasttwo", "lastanswer", "questions", "rewrite")  # rewrite: our own, from the LLM cache
PENALTIES = (0.0001, 0.001, 0.01)


@dataclass
class LabelledTurn:
    """One task: its per-list hits (``retriever:mode`` keys), the gold passages, and its conversation (the fold)."""

    id: str
    domain: str
    lists: dict[str, list[Hit]]
    gold: dict[str, int]

    @property
    def conversation(self) -> str:
        return self.id.split("<::>", 1)[0]


def _hit_json(hit: Hit) -> list[Any]:
    return [hit.passage_id, round(float(hit.score), 6), hit.doc_id]


def _turn_json(turn: LabelledTurn) -> dict[str, Any]:
    return {"id": turn.id, "domain": turn.domain, "gold": turn.gold,
            "lists": {k: [_hit_json(h) for h in hits] for k, hits in turn.lists.items()}}


def _turn_from_json(data: Mapping[str, Any]) -> LabelledTurn:
    lists = {k: [Hit(pid, score, rank=i + 1, doc_id=doc) for i, (pid, score, doc) in enumerate(hits)]
             for k, hits in data["lists"].items()}
    return LabelledTurn(str(data["id"]), str(data["domain"]), lists, {str(k): int(v) for k, v in data["gold"].items()})


def cache_key(settings: Settings, modes: Sequence[str], depth: int, index: str) -> str:
    """What the cached lists depend on: retrievers, their settings, modes, depth and the index (its manifest
    checksum: a rebuilt index is another index)."""
    manifest = Path(settings.indexes_dir) / index / "manifest.json"
    built = json.loads(manifest.read_text(encoding="utf-8")).get("checksum", "") if manifest.exists() else ""
    parts = [settings.retrieval.retrievers, list(modes), depth, index, built, settings.sparse.model_dump(),
             settings.embedder.model, settings.dense.model_dump()]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def collect_lists(
    search_lists: Callable[[list[list[Query]]], list[dict[str, list[Hit]]]],
    turns: Sequence[tuple[str, str, list[Query], dict[str, int]]],
    cache: Path | None = None,
    key: str = "",
    batch: int = 32,
    progress: Callable[[Iterable[int]], Iterable[int]] | None = None,
) -> list[LabelledTurn]:
    """The lists of every ``(id, domain, queries, gold)`` turn, read from ``cache`` when it holds them under
    ``key`` and appended to it as they are retrieved (an interrupted run resumes)."""
    done: dict[str, LabelledTurn] = {}
    if cache is not None and cache.exists():
        lines = cache.read_text(encoding="utf-8").splitlines()
        if lines and json.loads(lines[0]).get("key") == key:
            for line in lines[1:]:
                if line.strip():
                    turn = _turn_from_json(json.loads(line))
                    done[turn.id] = turn
        else:
            cache.unlink()
    todo = [t for t in turns if t[0] not in done]
    fh = None
    if cache is not None and todo:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fresh = not cache.exists()
        fh = cache.open("a", encoding="utf-8")
        if fresh:
            fh.write(json.dumps({"key": key}) + "\n")
    try:
        starts: Iterable[int] = range(0, len(todo), batch)
        for start in progress(starts) if progress else starts:
            chunk = todo[start : start + batch]
            for (tid, domain, _, gold), lists in zip(chunk, search_lists([list(t[2]) for t in chunk]), strict=True):
                turn = LabelledTurn(tid, domain, lists, gold)
                done[tid] = turn
                if fh is not None:
                    fh.write(json.dumps(_turn_json(turn)) + "\n")
    finally:
        if fh is not None:
            fh.close()
    return [done[t[0]] for t in turns]


def list_keys(retrievers: Sequence[str], modes: Sequence[str]) -> list[str]:
    """The ``retriever:mode`` keys a model over these retrievers and modes reads, mode by mode."""
    return [f"{r}:{m}" for m in modes for r in retrievers]


@dataclass
class Design:
    """Each labelled turn's candidate features and target distribution (its gold passages share 1)."""

    groups: list[tuple[np.ndarray, np.ndarray]]
    rows: int
    positives: int


def design(turns: Sequence[LabelledTurn], keys: Sequence[str], depth: int) -> Design:
    groups, rows, positives = [], 0, 0
    for turn in turns:
        cands = candidate_features(turn.lists, keys, depth)
        y = np.array([1.0 if turn.gold.get(pid, 0) > 0 else 0.0 for pid in cands.ids])
        if not y.any():  # no gold passage among the candidates: nothing to learn from this turn
            continue
        groups.append((cands.features.astype(np.float64), y / y.sum()))
        rows += len(y)
        positives += int(y.sum())
    if not groups:
        raise BadInputError("no training turn has a gold passage among its candidates: check the split, the index and the qrels")
    return Design(groups, rows, positives)


def fit_listwise(data: Design, penalty: float) -> dict[str, list[float]]:
    """A linear score trained listwise: maximise the softmax probability of each turn's gold passages among its
    candidates (ListNet with one-hot targets; a conditional logit), with an L2 penalty on the standardised weights.

    A pointwise classifier of the same features lost to plain RRF on the test split (docs/benchmarks.md): it spends
    its fit on telling rank-40 candidates apart, while only each turn's order matters. scipy's L-BFGS does the fit.
    """
    from scipy.optimize import minimize

    stacked = np.vstack([x for x, _ in data.groups])
    mean = stacked.mean(axis=0)
    scale = stacked.std(axis=0)
    scale[scale < 1e-9] = 1.0  # a constant feature (a list never present) stays out of the score
    groups = [((x - mean) / scale, y) for x, y in data.groups]
    n = len(groups)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.0, np.zeros_like(w)
        for x, y in groups:
            s = x @ w
            top = s.max()
            e = np.exp(s - top)
            log_z = np.log(e.sum())
            total -= float(y @ (s - top - log_z))
            grad -= x.T @ (y - e / e.sum())
        return total / n + penalty * float(w @ w), grad / n + 2 * penalty * w

    result = minimize(loss, np.zeros(stacked.shape[1]), jac=True, method="L-BFGS-B")
    return {"mean": mean.tolist(), "scale": scale.tolist(), "weights": result.x.tolist()}


def fusion_of(vectors: Mapping[str, list[float]], keys: Sequence[str], depth: int) -> LearnedFusion:
    return LearnedFusion({"keys": list(keys), "depth": depth, "features": feature_names(keys), **vectors})


def ranked(model: LearnedFusion, turns: Sequence[LabelledTurn], top_k: int = 10) -> dict[str, dict[str, float]]:
    """Run (id -> {passage: score}, top ``top_k``) of ``model`` on ``turns``."""
    return {turn.id: {h.passage_id: h.score for h in model.fuse(turn.lists, top_k)} for turn in turns}


def rrf_run(turns: Sequence[LabelledTurn], keys: Sequence[str], settings: Settings, top_k: int = 10) -> dict[str, dict[str, float]]:
    """Reciprocal rank fusion (the settings' k and weights) of the lists ``keys`` of each turn."""
    cfg = settings.fusion
    run = {}
    for t in turns:
        hits = fuse({k: v for k, v in t.lists.items() if k in keys}, "rrf", cfg.k, cfg.weights, top_k)
        run[t.id] = dict(zip([h.passage_id for h in hits], run_scores([h.score for h in hits]), strict=True))
    return run


def ndcg5(run: Mapping[str, Mapping[str, float]], turns: Sequence[LabelledTurn]) -> dict[str, float]:
    """Mean nDCG@5 and recall@10 of ``run`` over the turns with gold passages."""
    qrels = {t.id: t.gold for t in turns if t.gold}
    means = mean_metrics(score_run({q: dict(run.get(q, {})) for q in qrels}, qrels))
    return {"ndcg_cut_5": round(means["ndcg_cut_5"], 4), "recall_10": round(means["recall_10"], 4), "queries": len(qrels)}


def cross_validate(turns: Sequence[LabelledTurn], keys: Sequence[str], depth: int, grid: Sequence[float] = PENALTIES,
                   folds: int = 5) -> dict[str, Any]:
    """Out-of-fold nDCG@5 for each L2 penalty (folds by conversation), and the penalty that scores best."""
    from sklearn.model_selection import GroupKFold

    labelled = [t for t in turns if t.gold]
    groups = [t.conversation for t in labelled]
    splitter = GroupKFold(n_splits=min(folds, len(set(groups))))
    result: dict[str, Any] = {"folds": splitter.get_n_splits(), "by_penalty": {}}
    for penalty in grid:
        run: dict[str, dict[str, float]] = {}
        for fit_idx, held_idx in splitter.split(labelled, groups=groups):
            vectors = fit_listwise(design([labelled[i] for i in fit_idx], keys, depth), penalty)
            run.update(ranked(fusion_of(vectors, keys, depth), [labelled[i] for i in held_idx]))
        result["by_penalty"][str(penalty)] = ndcg5(run, labelled)
    result["best_penalty"] = max(grid, key=lambda p: result["by_penalty"][str(p)]["ndcg_cut_5"])
    return result


def fit(turns: Sequence[LabelledTurn], keys: Sequence[str], depth: int, penalty: float) -> tuple[LearnedFusion, dict[str, Any]]:
    """The model fitted on every labelled turn, and what it was fitted on."""
    data = design([t for t in turns if t.gold], keys, depth)
    started = time.perf_counter()
    model = fusion_of(fit_listwise(data, penalty), keys, depth)
    return model, {"rows": data.rows, "positives": data.positives, "turns": len(data.groups),
                   "fit_seconds": round(time.perf_counter() - started, 2)}


def coefficients(model: LearnedFusion) -> dict[str, float]:
    """The weight of each standardised feature (what each list is worth), largest first."""
    pairs = zip(feature_names(model.keys), model.weights.tolist(), strict=True)
    return dict(sorted(((n, round(float(w), 4)) for n, w in pairs), key=lambda kv: -abs(kv[1])))


def split_turns(mtrag_dir: Path, split: str, domain: str, modes: Sequence[str], own: Mapping[str, str]
                ) -> list[tuple[str, str, list[Query], dict[str, int]]]:
    """``(id, domain, queries, gold)`` for the retrieval tasks of ``domain`` in MTRAG split ``split``: the query
    texts of ``modes`` computed from each task's conversation, ``rewrite`` from ``own`` (task id -> own rewrite)."""
    from local_rag.evaluation.retrieval import items_from_task_files, queries_for
    from local_rag.evaluation.splits import keep_split, load_split
    from local_rag.llm.pipeline import conversations_by_id

    keep = load_split(mtrag_dir, split)
    file_modes = ["lastturn", *(["questions"] if "questions" in modes else [])]  # never the organizers' rewrite file
    items, qrels = items_from_task_files(Path(mtrag_dir) / "retrieval_tasks", domain, file_modes)
    items = keep_split(items, keep, lambda i: i.id)
    conversations = conversations_by_id(Path(mtrag_dir) / "generation_tasks" / "mtrag_tasks.jsonl")
    plain = [m for m in modes if m != "rewrite"]
    out = []
    for item in items:
        item.conversation = conversations.get(item.id)
        queries = queries_for(item, plain, None)
        if "rewrite" in modes and own.get(item.id, "").strip():
            queries.append(Query(own[item.id].strip(), "rewrite"))
        out.append((item.id, domain, queries, qrels.get(item.id, {})))
    return out


def train_fusion(settings: Settings, mtrag_dir: Path, name: str, domains: Sequence[str], modes: Sequence[str],
                 index_prefix: str, depth: int, own: Mapping[str, str], work: Path, split: str = "train",
                 progress: Callable[[Iterable[int]], Iterable[int]] | None = None) -> dict[str, Any]:
    """Collect the lists of the split's turns, cross-validate, fit, save ``models/<name>``; return the report."""
    from local_rag.modelstore.manifest import record_folder
    from local_rag.retrieve.learned import save_fusion
    from local_rag.retrieve.stack import open_retriever
    from local_rag.train.store import install_folder

    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise BadInputError(f"--mode: unknown {', '.join(map(repr, unknown)) or '(none given)'}; valid: {', '.join(MODES)}")
    started = time.perf_counter()
    turns: list[LabelledTurn] = []
    embedder = None
    for domain in domains:
        settings.index = f"{index_prefix}{domain}"
        retriever = open_retriever(settings, embedder)
        embedder = next((r.embedder for r in retriever.retrievers.values() if hasattr(r, "embedder")), embedder)
        key = cache_key(settings, modes, depth, settings.index)
        turns += collect_lists(functools.partial(retriever.lists, depth=depth), split_turns(mtrag_dir, split, domain, modes, own),
                               work / f"lists-{split}-{domain}.jsonl", key, progress=progress)
    collect_seconds = time.perf_counter() - started
    keys = list_keys(settings.retrieval.retrievers, modes)
    cv = cross_validate(turns, keys, depth)
    model, fitted = fit(turns, keys, depth, cv["best_penalty"])
    labelled = [t for t in turns if t.gold]
    report: dict[str, Any] = {
        "name": name, "split": split, "domains": list(domains), "modes": list(modes), "keys": keys, "depth": depth,
        "turns": len(turns), "labelled": len(labelled), "own_rewrites": sum(1 for t in turns if t.id in own),
        "cross_validation": cv, "fitted": fitted,
        "rrf": {"lastturn": ndcg5(rrf_run(labelled, list_keys(settings.retrieval.retrievers, ["lastturn"]), settings), labelled),
                "same lists": ndcg5(rrf_run(labelled, keys, settings), labelled)},
        "seconds": {"lists": round(collect_seconds, 1), "total": round(time.perf_counter() - started, 1)},
    }
    meta = {**report, **model.meta, "coefficients": coefficients(model), "retrievers": list(settings.retrieval.retrievers),
            "index_prefix": index_prefix, "embedder": settings.embedder.model}
    folder = settings.models_dir / name
    staging = settings.models_dir / f".{name}.staging"
    save_fusion(staging, meta)
    install_folder(staging, folder)
    record_folder(folder, settings.models_dir, "fusion", f"learned fusion of {', '.join(keys)} (local-rag train fusion)",
                  "linear", source="trained: local-rag train fusion")
    report["folder"] = str(folder)
    report["coefficients"] = dict(list(meta["coefficients"].items())[:8])
    return report

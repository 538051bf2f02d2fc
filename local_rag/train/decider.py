"""`local-rag train decider`: build the examples, measure every variant, keep the best, save it, write the report.

Protocol (nothing learned from an MTRAG test conversation):
- pool = MTRAG train-split tasks + synthetic underspecified turns made from them + MTRAG-UN development tasks
  (those stitched onto a test conversation left out);
- variant pick and thresholds: cross-validation by conversation over the pool (``--pick real``: the pick counts
  its real turns only, since the synthetic ones are easy to recall; the thresholds hold ``--decline-budget`` and
  ``--clarify-budget`` of its answerable turns);
- MTRAG test figures: the variant fitted on the whole pool, on the test-split tasks;
- MTRAG-UN figures: 5-fold cross-validation by conversation over the development tasks, each fold's model fitted on
  the MTRAG train tasks, the synthetic turns and the other folds, with thresholds from the pool's out-of-fold
  probabilities of those rows (no inner cross-validation: a CPU budget; those probabilities come from models that
  saw the held-out fold, a small leak into the thresholds only);
- latency: `TrainedDecider.decide` timed on every test task (features, turn embedding, model), and with
  cross-encoder features, the decider scoring the passages itself on 60 of them.

Example:
    >>> report = train_decider(settings, Path("../shared/mtrag"), Path("docs/benchmarks/decider"))  # doctest: +SKIP

Training the decision stage: model variants, thresholds set on out-of-fold predictions, the pick by
cross-validation, and the folder written to ``models/`` with its manifest entry.

Variants (all scikit-learn, all run in milliseconds): logistic regression or gradient boosting over the named
features (`local_rag.decide.features.FEATURES`), logistic regression over the MiniLM embedding of the last turn,
and logistic regression over both. Thresholds: P(decline) and P(clarify) at the quantile of the answerable
examples' out-of-fold probabilities that declines at most ``decline_budget`` and clarifies at most
``clarify_budget`` of them. The variant kept is the one with the best mean of decline recall (UNANSWERABLE) and
clarify recall (UNDERSPECIFIED) at those thresholds, in cross-validation by conversation over the training pool.

Example:
    >>> report = train_decider(settings, Path("../shared/mtrag"), Path("docs/benchmarks/decider"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.decide.features import AMBIGUITY_FEATURES, FEATURES, NO_CE_FEATURES, FeatureExtractor
from local_rag.decide.model import embedder_function, read_decider, save_decider
from local_rag.decide.turns import is_clarification, last_agent_turn
from local_rag.evaluation.generation.kinds import kind_metrics, targets_met
from local_rag.evaluation.splits import load_split
from local_rag.modelstore.manifest import record_folder
from local_rag.settings import Settings
from local_rag.train.decider_data import (
    EVIDENCE,
    Example,
    attach_evidence,
    mtrag_examples,
    mtragun_examples,
    synthetic_examples,
)
from local_rag.train.decider_report import confusion_markdown, latency, plot_confusions

VARIANTS = ("lr-features", "gbm-features", "lr-embedding", "lr-features+embedding", "lr-features-base", "gbm-features-base")
ANSWERABLE = ("ANSWERABLE", "PARTIAL")
BUDGETS = (0.08, 0.04)  # shares of answerable training turns the thresholds may decline, clarify (under the targets' 0.10, 0.05)
PICKS = ("pool", "real")  # the turns the variant pick counts: the whole pool, or its real (not synthetic) turns


@dataclass
class Thresholds:
    decline: float
    clarify: float

    def to_json(self) -> dict[str, float]:
        return {"decline": round(self.decline, 4), "clarify": round(self.clarify, 4)}


def variant_names(variant: str, names: Sequence[str]) -> list[str]:
    """The named features a variant reads: all of ``names``, or for a ``-base`` variant those before the ambiguity
    features (`AMBIGUITY_FEATURES`, the set measured in sessions 13-14)."""
    return [n for n in names if n not in AMBIGUITY_FEATURES] if variant.endswith("-base") else list(names)


def columns(variant: str, x_named: np.ndarray, x_embedding: np.ndarray | None, names: Sequence[str] = ()) -> np.ndarray:
    """The design matrix of ``variant``: named features (``names``: the columns of ``x_named``, cut to
    `variant_names`), embedding, or both."""
    parts = []
    if "features" in variant:
        keep = variant_names(variant, names)
        parts.append(x_named[:, [i for i, n in enumerate(names) if n in keep]] if names else x_named)
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
        return HistGradientBoostingClassifier(max_iter=100, learning_rate=0.06, max_leaf_nodes=15, l2_regularization=1.0,
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


def set_thresholds(p: np.ndarray, examples: Sequence[Example], decline_budget: float = BUDGETS[0],
                   clarify_budget: float = BUDGETS[1]) -> Thresholds:
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


def decider_meta(variant: str, thresholds: Thresholds, embedder: str, extra: dict[str, Any],
                 cross_encoder: dict[str, Any] | None = None) -> dict[str, Any]:
    """What ``decider.json`` records beside the model: the features in column order (the cross-encoder's only
    when ``cross_encoder``, the reranker the scores came from, is given)."""
    names = variant_names(variant, FEATURES if cross_encoder else NO_CE_FEATURES)
    return {
        "variant": variant,
        "classes": list(CLASSES),
        "features": names if "features" in variant else [],
        "cross_encoder": cross_encoder if "features" in variant else None,
        "use_features": "features" in variant,
        "use_embedding": "embedding" in variant,
        "embedder": embedder if "embedding" in variant else "",
        "thresholds": thresholds.to_json(),
        **extra,
    }


log = logging.getLogger("local_rag.decide")


def load_examples(mtrag: Path, synthetic: int, domains: Sequence[str], seed: int = 0,
                  synthetic_the: int = 0) -> dict[str, list[Example]]:
    """``train``, ``synthetic`` ("this <thing>" turns, then ``synthetic_the`` "the <thing>" ones), ``dev`` and
    ``test`` examples of ``domains``."""
    tasks = mtrag / "generation_tasks" / "mtrag_tasks.jsonl"
    train = mtrag_examples(tasks, load_split(mtrag, "train"), "mtrag-train")
    test = mtrag_examples(tasks, load_split(mtrag, "test"), "mtrag-test")
    dev = mtragun_examples(mtrag / "mtragun-dev" / "generation_tasks" / "mtragun_dev_tasks.jsonl", avoid=test)
    made = synthetic_examples(train, synthetic, seed) + (synthetic_examples(train, synthetic_the, seed, "the") if synthetic_the else [])
    sets = {"train": train, "synthetic": made, "dev": dev, "test": test}
    return {k: [e for e in v if e.domain in domains] for k, v in sets.items()}


def evidence_cache_key(settings: Settings, depth: int) -> str:
    """What the cached first-stage hits depend on (the cross-encoder's scores are cached apart, `with_cross_encoder`)."""
    s = settings
    return json.dumps([s.retrieval.retrievers, s.retrieval.query_modes, s.fusion.model_dump(), depth], sort_keys=True)


def read_cache(cache: Path, key: str, field: str) -> dict[str, Any]:
    """``{id: row[field]}`` of the rows of a JSONL cache written with ``key`` (a line cut short is skipped)."""
    stored: dict[str, Any] = {}
    if cache.exists():
        for line in cache.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by an interruption
            if row.get("key") == key:
                stored[row["id"]] = row[field]
    return stored


def with_evidence(sets: dict[str, list[Example]], settings: Settings, index_prefix: str, dev_index_prefix: str,
                  cache: Path) -> None:
    """Attach the first-stage hits (as many as the cross-encoder reranks) to every example, reusing ``cache`` (a
    JSONL of hits per example and retrieval setting, appended as each example is retrieved: an interrupted run
    resumes)."""
    from local_rag.records import Hit

    depth = max(EVIDENCE, settings.reranker.candidates)
    key = evidence_cache_key(settings, depth)
    stored = read_cache(cache, key, "hits")
    todo = []
    for examples in sets.values():
        for e in examples:
            if e.id in stored:
                e.hits = [Hit(**h) for h in stored[e.id]]
            else:
                todo.append(e)
    if not todo:
        return
    retrieval = settings.model_copy(update={"pipeline": settings.pipeline.model_copy(update={"rewrite": False, "cross_encoder": False})})
    cache.parent.mkdir(parents=True, exist_ok=True)
    with cache.open("a", encoding="utf-8") as fh:
        def done(e: Example) -> None:
            fh.write(json.dumps({"key": key, "id": e.id, "hits": [h.to_json() for h in e.hits]}) + "\n")
            fh.flush()

        attach_evidence(todo, retrieval, lambda e: f"{dev_index_prefix if e.source == 'mtragun-dev' else index_prefix}{e.domain}",
                        keep=depth, done=done)


def with_cross_encoder(sets: dict[str, list[Example]], settings: Settings, cache: Path) -> dict[str, Any] | None:
    """Rerank every example's hits with the cross-encoder of ``settings.reranker`` against its last turn (the
    scores cached in ``cache``, appended as they come) when ``settings.pipeline.cross_encoder`` is on, and keep
    the first `EVIDENCE`. Returns what the decider records of the cross-encoder (None when off)."""
    examples = [e for v in sets.values() for e in v]
    cfg = settings.reranker
    if not settings.pipeline.cross_encoder:
        for e in examples:
            e.hits = e.hits[:EVIDENCE]
        return None
    from tqdm import tqdm

    from local_rag.rerank import load_reranker
    from local_rag.rerank.base import with_scores

    record = {"model": str(cfg.model), "backend": cfg.backend, "max_length": cfg.max_length,
              "candidates": cfg.candidates, "prior_weight": cfg.prior_weight}
    if cfg.unit != "passage":  # (the cache keys of passage-unit runs stay as they were)
        record["unit"] = cfg.unit
    key = json.dumps(record, sort_keys=True)
    stored = read_cache(cache, key, "scores")
    reranker = None
    cache.parent.mkdir(parents=True, exist_ok=True)
    with cache.open("a", encoding="utf-8") as fh:
        for e in tqdm(examples, desc="cross-encoder", unit="turn"):
            head = e.hits[: cfg.candidates]
            scores = stored.get(e.id)
            if scores is None or len(scores) != len(head):
                reranker = reranker or load_reranker(cfg.model_copy(update={"fallback": "error"}), settings.models_dir)
                scores = reranker.score_hits(e.conversation.last_user_turn, head) if head else []
                fh.write(json.dumps({"key": key, "id": e.id, "scores": scores}) + "\n")
                fh.flush()
            e.hits = with_scores(e.hits, scores, cfg)[:EVIDENCE]
    return record


def matrices(examples: Sequence[Example], embed: Any, names: Sequence[str] = FEATURES) -> tuple[np.ndarray, np.ndarray | None]:
    """Named features (``names``) and turn embeddings of ``examples`` (None without ``embed``)."""
    named = FeatureExtractor(None, names=names).vectors([e.conversation for e in examples], [e.hits for e in examples])
    if embed is None:
        return named, None
    return named, np.asarray(embed([e.conversation.last_user_turn for e in examples]), dtype=np.float32)


def after_clarify(examples: Sequence[Example]) -> np.ndarray:
    return np.array([is_clarification(last_agent_turn(e.conversation)) for e in examples])


def measure(variant: str, pool: list[Example], test: list[Example], dev: list[Example], mats: dict[str, Any],
            folds: int, seed: int, budgets: tuple[float, float] = BUDGETS, pick: str = "pool") -> dict[str, Any]:
    """Pool cross-validation, test and development cross-validation figures of one variant (``mats``: the named
    features and embeddings of ``pool`` and ``test``, and ``names``, the named columns; ``budgets``: the shares of
    answerable turns the thresholds may decline and clarify; ``pick``: the pool's turns the pick score counts,
    ``pool`` all or ``real`` those not synthetic)."""
    x_pool = columns(variant, mats["pool"][0], mats["pool"][1], mats["names"])
    oof = out_of_fold(variant, x_pool, pool, folds, seed)
    thresholds = set_thresholds(oof, pool, *budgets)
    pool_kinds = choose_kinds(oof, thresholds, after_clarify(pool))
    model = fit(variant, x_pool, pool, seed)
    p_test = proba_frame(model, columns(variant, mats["test"][0], mats["test"][1], mats["names"]), CLASSES)
    test_kinds = choose_kinds(p_test, thresholds, after_clarify(test))
    # development tasks, cross-validated by conversation: each fold learns from the rest of the pool
    from sklearn.model_selection import GroupKFold

    dev_kinds = ["answer"] * len(dev)
    dev_p = np.zeros((len(dev), len(CLASSES)))
    in_pool = {e.id for e in dev}
    rest = [i for i, e in enumerate(pool) if e.id not in in_pool]
    dev_rows = {e.id: i for i, e in enumerate(pool)}
    groups = np.array([e.group for e in dev])
    for train_dev, held in GroupKFold(n_splits=min(folds, len(set(groups)))).split(np.zeros(len(dev)), groups=groups):
        rows = rest + [dev_rows[dev[i].id] for i in train_dev]
        part = [pool[i] for i in rows]
        x_part = x_pool[rows]
        inner = set_thresholds(oof[rows], part, *budgets)  # the pool's out-of-fold probabilities of the rows kept
        fold_model = fit(variant, x_part, part, seed)
        x_held = x_pool[[dev_rows[dev[i].id] for i in held]]
        p = proba_frame(fold_model, x_held, CLASSES)
        dev_p[held] = p
        for i, k in zip(held, choose_kinds(p, inner, after_clarify([dev[i] for i in held])), strict=True):
            dev_kinds[i] = k
    score = kind_metrics([e.gold for e in pool], pool_kinds)
    real = [i for i, e in enumerate(pool) if e.source != "synthetic"]
    real_score = kind_metrics([pool[i].gold for i in real], [pool_kinds[i] for i in real])
    aucs = {"pool_cv": separability(oof, pool), "test": separability(p_test, test), "dev_cv": separability(dev_p, dev)}
    counted = real_score if pick == "real" else score
    pick_score = np.mean([counted["decline_unanswerable"] or 0.0, counted["clarify_underspecified"] or 0.0])
    return {
        "variant": variant, "thresholds": thresholds.to_json(), "pick_score": round(float(pick_score), 4),
        "pool_cv": score, "pool_cv_real": real_score, "test": kind_metrics([e.gold for e in test], test_kinds),
        "dev_cv": kind_metrics([e.gold for e in dev], dev_kinds), "auc": aucs,
        "_kinds": {"test": test_kinds, "dev": dev_kinds}, "_p": {"test": p_test, "dev": dev_p},
    }


def auc(positive: np.ndarray, score: np.ndarray) -> float | None:
    """ROC AUC of ``score`` for ``positive`` (None when one class is absent)."""
    from sklearn.metrics import roc_auc_score

    if positive.all() or not positive.any():
        return None
    return round(float(roc_auc_score(positive, score)), 4)


def separability(p: np.ndarray, examples: Sequence[Example]) -> dict[str, float | None]:
    """AUC of P(decline) for UNANSWERABLE vs answerable turns and of P(clarify) for UNDERSPECIFIED vs answerable."""
    gold = np.array([e.gold for e in examples])
    out = {}
    for name, cls, col in (("decline", "UNANSWERABLE", 1), ("clarify", "UNDERSPECIFIED", 2)):
        keep = np.isin(gold, (cls, *ANSWERABLE))
        out[name] = auc(gold[keep] == cls, p[keep, col]) if keep.any() else None
    return out


def feature_separability(x: np.ndarray, names: Sequence[str], examples: Sequence[Example]) -> dict[str, Any]:
    """The single named feature that best separates UNANSWERABLE (resp. UNDERSPECIFIED) from answerable turns:
    its name and AUC (either direction)."""
    gold = np.array([e.gold for e in examples])
    out: dict[str, Any] = {}
    for name, cls in (("decline", "UNANSWERABLE"), ("clarify", "UNDERSPECIFIED")):
        keep = np.isin(gold, (cls, *ANSWERABLE))
        scored = [(max(a, 1 - a), f) for j, f in enumerate(names)
                  if (a := auc(gold[keep] == cls, x[keep, j])) is not None]
        best = max(scored, default=(None, None))
        out[name] = {"feature": best[1], "auc": best[0], "top5": sorted(scored, reverse=True)[:5]}
    return out


def train_decider(settings: Settings, mtrag: Path, report_dir: Path, name: str = "decider",
                  index_prefix: str = "mtrag-", dev_index_prefix: str = "i24-mtrag-", synthetic: int = 150,
                  domains: Sequence[str] = ("clapnq", "cloud", "fiqa", "govt"), folds: int = 5, seed: int = 0,
                  work: Path = Path("runs/decider"), variants: Sequence[str] = VARIANTS,
                  synthetic_the: int = 0, budgets: tuple[float, float] = BUDGETS, pick: str = "pool") -> dict[str, Any]:
    """Measure `VARIANTS`, save the best under ``models/<name>`` and write ``report.json``/``report.md``, the
    confusion plot and the per-task predictions into ``report_dir``. Returns the report. ``budgets``: the shares of
    answerable training turns the thresholds may decline and clarify; ``pick`` (`PICKS`): the pool's turns whose
    cross-validated recall picks the variant (``real``: the synthetic turns, easy to recall, left out)."""
    from local_rag.errors import BadInputError

    if pick not in PICKS:
        raise BadInputError(f"--pick must be one of {', '.join(PICKS)}, not {pick!r}")
    if not all(0 < b < 1 for b in budgets):
        raise BadInputError(f"the decline and clarify budgets are shares of answerable turns, between 0 and 1: {budgets}")
    started = time.perf_counter()
    sets = load_examples(mtrag, synthetic, domains, seed, synthetic_the)
    with_evidence(sets, settings, index_prefix, dev_index_prefix, work / "evidence.jsonl")
    cross_encoder = with_cross_encoder(sets, settings, work / "cross-encoder.jsonl")
    names = FEATURES if cross_encoder else NO_CE_FEATURES
    embed = embedder_function(settings) if any("embedding" in v for v in variants) else None
    pool = sets["train"] + sets["synthetic"] + sets["dev"]
    mats: dict[str, Any] = {k: matrices(v, embed, names) for k, v in (("pool", pool), ("test", sets["test"]))}
    mats["names"] = names
    results = [measure(v, pool, sets["test"], sets["dev"], mats, folds, seed, budgets, pick) for v in variants]
    best = max(results, key=lambda r: r["pick_score"])
    variant = best["variant"]

    model = fit(variant, columns(variant, mats["pool"][0], mats["pool"][1], names), pool, seed)
    folder = Path(settings.models_dir) / name
    counts = {k: len(v) for k, v in sets.items()}
    meta = decider_meta(variant, Thresholds(**best["thresholds"]), settings.embedder.model,
                        {"trained_on": counts, "pick_score": best["pick_score"]}, cross_encoder)
    save_decider(folder, model, meta)
    record_folder(folder, settings.models_dir, "decider", f"decision stage ({variant}), local-rag train decider",
                  "sklearn", source="trained: local-rag train decider")

    decider = read_decider(folder, settings.decide, embed)
    times = []
    for e in sets["test"]:
        t = time.perf_counter()
        decider.decide(e.conversation, e.hits)
        times.append(time.perf_counter() - t)
    own_ce = {}
    if cross_encoder and meta["cross_encoder"]:  # the decider scoring the passages itself (no cross-encoder stage)
        from local_rag.decide.model import decider_reranker
        from local_rag.records import Hit

        alone = read_decider(folder, settings.decide, embed, decider_reranker(settings, cross_encoder), rescore=True)
        alone.decide(sets["test"][0].conversation, sets["test"][0].hits)  # loads the cross-encoder
        own = []
        for e in sets["test"][:60]:
            bare = [Hit(**{**h.to_json(), "scores": {k: v for k, v in h.scores.items() if k != "cross-encoder"}}) for h in e.hits]
            t = time.perf_counter()
            alone.decide(e.conversation, bare)
            own.append(time.perf_counter() - t)
        own_ce = {"latency_scoring_itself": latency(own)}
    baseline = {s: kind_metrics([e.gold for e in sets[s]], ["answer"] * len(sets[s])) for s in ("test", "dev")}
    report = {
        "command": f"local-rag train decider --name {name} --report {report_dir} --index-prefix {index_prefix} "
                   f"--dev-index-prefix {dev_index_prefix} --variants {','.join(variants)}"
                   + (f" --synthetic-the {synthetic_the}" if synthetic_the else "")
                   + (f" --decline-budget {budgets[0]} --clarify-budget {budgets[1]}" if tuple(budgets) != BUDGETS else "")
                   + (f" --pick {pick}" if pick != "pool" else "")
                   + (f" --cross-encoder --reranker {cross_encoder['model']} --reranker-backend {cross_encoder['backend']}"
                      if cross_encoder else ""),
        "machine": {"cpu": platform.processor() or platform.machine(), "python": platform.python_version()},
        "embedder": settings.embedder.model, "retrieval": evidence_cache_key(settings, max(EVIDENCE, settings.reranker.candidates)),
        "cross_encoder": cross_encoder, "features": meta["features"],
        "examples": counts, "chosen": variant, "latency": latency(times), **own_ce,
        "wall_s": round(time.perf_counter() - started, 1),
        "baseline_always_answer": baseline,
        "variants": [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
        "best_single_feature": {"pool": feature_separability(mats["pool"][0], names, pool),
                                "test": feature_separability(mats["test"][0], names, sets["test"]),
                                "dev": feature_separability(mats["pool"][0][[i for i, e in enumerate(pool) if e.source == "mtragun-dev"]],
                                                            names, sets["dev"])},
        "targets_met": {"test": targets_met(best["test"]), "dev_cv": targets_met(best["dev_cv"])},
    }
    write_report(report, best, sets, report_dir)
    return report


def write_report(report: dict[str, Any], best: dict[str, Any], sets: dict[str, list[Example]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    with (out / "predictions.jsonl").open("w", encoding="utf-8") as fh:
        for split in ("test", "dev"):
            for e, kind, p in zip(sets[split], best["_kinds"][split], best["_p"][split], strict=True):
                fh.write(json.dumps({"split": split, "task_id": e.id, "gold": e.gold, "kind": kind,
                                     "p": dict(zip(CLASSES, np.round(p, 4).tolist(), strict=True))}) + "\n")
    plot_confusions({f"MTRAG test ({best['variant']})": best["test"]["confusion"],
                     f"MTRAG-UN dev, 5-fold CV ({best['variant']})": best["dev_cv"]["confusion"]}, out / "confusion.png")
    lines = [f"# Decision stage: {report['chosen']} chosen", "", f"Command: `{report['command']}`", "",
             f"Examples: {report['examples']}; latency {report['latency']}; wall {report['wall_s']} s", "",
             "| variant | set | decline UNANSWERABLE | decline answerable | clarify UNDERSPECIFIED | clarify answerable |",
             "|---|---|---:|---:|---:|---:|"]
    for r in report["variants"]:
        for split in ("pool_cv", "pool_cv_real", "test", "dev_cv"):
            if split not in r:  # (reports written before the real-turn figures)
                continue
            m = r[split]
            lines.append(f"| {r['variant']} | {split} | {m['decline_unanswerable']} | {m['decline_answerable']} | "
                         f"{m['clarify_underspecified']} | {m['clarify_answerable']} |")
    for split, m in report["baseline_always_answer"].items():
        lines.append(f"| always answer (baseline) | {split} | {m['decline_unanswerable']} | {m['decline_answerable']} | "
                     f"{m['clarify_underspecified']} | {m['clarify_answerable']} |")
    lines += ["", "AUC (UNANSWERABLE vs answerable by P(decline); UNDERSPECIFIED vs answerable by P(clarify)):", "",
              "| variant | pool CV decline | pool CV clarify | test decline | dev CV decline | dev CV clarify |",
              "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['variant']} | {r['auc']['pool_cv']['decline']} | {r['auc']['pool_cv']['clarify']} | "
              f"{r['auc']['test']['decline']} | {r['auc']['dev_cv']['decline']} | {r['auc']['dev_cv']['clarify']} |"
              for r in report["variants"]]
    single = report["best_single_feature"]
    lines += ["", f"Best single feature (AUC either direction): pool decline {single['pool']['decline']['feature']} "
              f"{single['pool']['decline']['auc']}, pool clarify {single['pool']['clarify']['feature']} "
              f"{single['pool']['clarify']['auc']}, test decline {single['test']['decline']['feature']} "
              f"{single['test']['decline']['auc']}, MTRAG-UN dev clarify {single['dev']['clarify']['feature']} "
              f"{single['dev']['clarify']['auc']} (top 5: {single['dev']['clarify']['top5']})"]
    lines += ["", "## Confusion, MTRAG test", "", confusion_markdown(best["test"]["confusion"]), "",
              "## Confusion, MTRAG-UN dev (cross-validated)", "", confusion_markdown(best["dev_cv"]["confusion"]), ""]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")


"""`local-rag train support`: the support classifier of `local_rag.decide.support`, and its figures.

Pairs (sentence, passage) from the reference answers of MTRAG answerable tasks:
- supported: a reference sentence and the gold passage that shares most of its words;
- not supported: the same sentence and a gold passage of another conversation of the domain; the sentence with its
  numbers changed, or a name swapped for one from another passage, against its own passage (the made-up facts that
  small generators cite: "The latest version of Carthage is 1.3.2 [1]").
Train split for learning (threshold from cross-validation by conversation), test split for the figures. Then the
checker is run on committed answers (``docs/benchmarks/gen-eval/*/answers.jsonl``): the share of sentences
supported and the citation precision, before and after the citations are moved.

Example:
    >>> report = train_support(settings, Path("../shared/mtrag"), Path("docs/benchmarks/support"))  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.decide.model import embedder_function
from local_rag.decide.support import (
    PAIR_FEATURES,
    SupportChecker,
    load_support,
    pair_matrix,
    save_support,
    split_sentences,
)
from local_rag.decide.turns import content_words
from local_rag.evaluation.generation.official import answerability
from local_rag.modelstore.manifest import record_folder
from local_rag.mtrag import load_generation_tasks, read_jsonl, task_domain
from local_rag.records import Hit
from local_rag.settings import Settings

_NUM = re.compile(r"\d+")
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")


@dataclass
class Pair:
    sentence: str
    passage: str
    label: int
    group: str  # conversation
    kind: str  # gold | other | numbers | name


def _rng(key: str) -> random.Random:
    return random.Random(int(hashlib.sha1(key.encode()).hexdigest()[:12], 16))


def corrupt_numbers(sentence: str, rng: random.Random) -> str | None:
    if not _NUM.search(sentence):
        return None
    return _NUM.sub(lambda m: str(int(m.group(0)) + rng.randint(1, 9) * (1 + int(m.group(0)) // 10)), sentence)


def build_pairs(tasks: Sequence[dict[str, Any]], conversations: set[str]) -> list[Pair]:
    """Support pairs from the answerable tasks of ``conversations`` (see the module docstring)."""
    keep = [t for t in tasks if str(t.get("conversation_id")) in conversations
            and answerability(t) in ("ANSWERABLE", "PARTIAL") and t.get("contexts") and t.get("targets")]
    by_domain: dict[str, list[dict[str, Any]]] = {}
    for t in keep:
        by_domain.setdefault(task_domain(t), []).append(t)
    pairs: list[Pair] = []
    for task in keep:
        group = str(task["conversation_id"])
        rng = _rng(str(task["task_id"]))
        passages = [f"{c.get('title', '')}\n{c['text']}" for c in task["contexts"]]
        others = [t for t in by_domain[task_domain(task)] if str(t["conversation_id"]) != group]
        for sentence in split_sentences(task["targets"][0]["text"]):
            said = set(content_words(sentence))
            if len(said) < 3:
                continue
            share = [len(said & set(content_words(p))) / len(said) for p in passages]
            best = passages[int(np.argmax(share))]
            if max(share) < 0.4:
                continue  # the reference says more than its passages: not a clean positive
            pairs.append(Pair(sentence, best, 1, group, "gold"))
            if others:
                other = rng.choice(others)["contexts"]
                pairs.append(Pair(sentence, f"{other[0].get('title', '')}\n{other[0]['text']}", 0, group, "other"))
            changed = corrupt_numbers(sentence, rng)
            if changed and changed != sentence:
                pairs.append(Pair(changed, best, 0, group, "numbers"))
            names = [m.group(0) for m in _NAME.finditer(sentence) if m.start() > 0 and m.group(0) in best]
            if names and others:
                foreign = [n for n in _NAME.findall(rng.choice(others)["contexts"][0]["text"]) if n not in best]
                if foreign:
                    pairs.append(Pair(sentence.replace(rng.choice(names), rng.choice(foreign)), best, 0, group, "name"))
    return pairs


def cached_embed(embed: Any) -> Any:
    cache: dict[str, np.ndarray] = {}

    def run(texts: list[str]) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in cache))
        if todo:
            for t, v in zip(todo, embed(todo), strict=True):
                cache[t] = v
        return np.stack([cache[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)

    return run


def features(pairs: Sequence[Pair], embed: Any) -> np.ndarray:
    return np.vstack([pair_matrix([p.sentence], [p.passage], embed)[0, 0] for p in pairs]) if pairs else np.zeros((0, len(PAIR_FEATURES)))


def make_model() -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, class_weight="balanced", max_iter=2000))


def best_threshold(p: np.ndarray, y: np.ndarray) -> float:
    """The threshold with the best balanced accuracy."""
    grid = np.linspace(0.05, 0.95, 91)
    scores = [((p >= t)[y == 1].mean() + (p < t)[y == 0].mean()) / 2 for t in grid]
    return float(grid[int(np.argmax(scores))])


def pair_figures(p: np.ndarray, y: np.ndarray, kinds: Sequence[str], threshold: float) -> dict[str, Any]:
    from sklearn.metrics import roc_auc_score

    kinds_arr = np.array(kinds)
    return {"n": len(y), "auc": round(float(roc_auc_score(y, p)), 4),
            "balanced_accuracy": round(float(((p >= threshold)[y == 1].mean() + (p < threshold)[y == 0].mean()) / 2), 4),
            "caught_by_kind": {k: round(float((p[kinds_arr == k] < threshold).mean()), 3) for k in sorted(set(kinds)) if k != "gold"},
            "kept_gold": round(float((p[kinds_arr == "gold"] >= threshold).mean()), 3)}


def answer_figures(checker: SupportChecker, answers: Path, corpus: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Support figures of committed answers (their first 5 contexts, as generation saw them): the share of
    sentences supported and the citation precision (the share of citations whose passage supports their
    sentence), before and after the check moves citations."""
    n = before = after = cites = cites_ok = moved = 0
    for record in read_jsonl(answers):
        pred = record.get("prediction") or {}
        if pred.get("kind", "answer") not in ("answer",):
            continue
        hits = [Hit(c["document_id"], 0.0, title=corpus.get(c["document_id"], {}).get("title", ""),
                    text=corpus.get(c["document_id"], {}).get("text", "")) for c in record.get("contexts", [])[:5]]
        if not hits or not all(h.text for h in hits):
            continue
        _, report = checker.check(record["text"], hits)
        for s in report.sentences:
            n += 1
            before += (s.p_cited if s.p_cited is not None else s.p_best) >= checker.threshold
            after += s.supported
            moved += bool(s.moved_to)
            cites += len(s.cited)
            cites_ok += sum(s.cited_supported)
    cites_after_ok = cites_ok + moved  # a moved citation points at a passage that supports its sentence
    return {"answers": str(answers), "sentences": n, "citations": cites, "citations_moved": moved,
            "supported_before": round(before / max(1, n), 3), "supported_after": round(after / max(1, n), 3),
            "citation_precision_before": round(cites_ok / max(1, cites), 3),
            "citation_precision_after": round(min(cites, cites_after_ok) / max(1, cites), 3)}


def read_corpus(mtrag: Path, ids: set[str]) -> dict[str, dict[str, str]]:
    """``{passage id: {title, text}}`` of the pool passages in ``ids`` (read from the shared data, not copied)."""
    out: dict[str, dict[str, str]] = {}
    for path in sorted((mtrag / "corpora" / "pool").glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row.get("_id") in ids:
                    out[row["_id"]] = {"title": row.get("title", ""), "text": row.get("text", "")}
    return out


def sample(pairs: list[Pair], limit: int) -> list[Pair]:
    """At most ``limit`` pairs, the same ones on every run (sha1 order of sentence and kind)."""
    if len(pairs) <= limit:
        return pairs
    return sorted(pairs, key=lambda p: hashlib.sha1(f"{p.kind}:{p.sentence}:{p.passage[:50]}".encode()).hexdigest())[:limit]


def train_support(settings: Settings, mtrag: Path, report_dir: Path, name: str = "support",
                  answers: Sequence[Path] = (), limit: int = 2500) -> dict[str, Any]:
    """Fit the support classifier on train-split pairs, measure it on test-split pairs, save it under
    ``models/<name>``, run it on the committed ``answers``; writes ``report_dir/report.json`` and returns it.
    ``limit``: pairs taken from each split (a fixed sample), to bound the embedding time on a CPU."""
    from sklearn.model_selection import GroupKFold

    from local_rag.train.decider_data import read_split

    started = time.perf_counter()
    tasks = load_generation_tasks(mtrag / "generation_tasks" / "mtrag_tasks.jsonl")
    train = sample(build_pairs(tasks, read_split(mtrag / "splits" / "mtrag_train_conversations.txt")), limit)
    test = sample(build_pairs(tasks, read_split(mtrag / "splits" / "mtrag_test_conversations.txt")), limit // 2)
    embed = cached_embed(embedder_function(settings))
    x, y = features(train, embed), np.array([p.label for p in train])
    groups = np.array([p.group for p in train])
    oof = np.zeros(len(train))
    for fit_rows, held in GroupKFold(n_splits=5).split(x, y, groups):
        oof[held] = make_model().fit(x[fit_rows], y[fit_rows]).predict_proba(x[held])[:, 1]
    threshold = best_threshold(oof, y)
    model = make_model().fit(x, y)
    p_test = model.predict_proba(features(test, embed))[:, 1]
    folder = Path(settings.models_dir) / name
    meta = {"features": list(PAIR_FEATURES), "threshold": round(threshold, 3), "embedder": settings.embedder.model,
            "pairs": {"train": len(train), "test": len(test)}}
    save_support(folder, model, meta)
    record_folder(folder, settings.models_dir, "support", "support classifier, local-rag train support", "sklearn",
                  source="trained: local-rag train support")
    report: dict[str, Any] = {
        "command": f"local-rag train support --name {name} --report {report_dir}",
        "threshold": meta["threshold"], "pairs": meta["pairs"],
        "train_cv": pair_figures(oof, y, [p.kind for p in train], threshold),
        "test": pair_figures(p_test, np.array([p.label for p in test]), [p.kind for p in test], threshold),
    }
    checker = load_support(folder, embed, settings.support)
    if answers:
        ids = {c["document_id"] for path in answers for r in read_jsonl(path) for c in r.get("contexts", [])[:5]}
        corpus = read_corpus(mtrag, ids)
        report["answers"] = [answer_figures(checker, Path(path), corpus) for path in answers]
    report["wall_s"] = round(time.perf_counter() - started, 1)
    report_dir.mkdir(parents=True, exist_ok=True)
    (report_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report

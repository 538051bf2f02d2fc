"""Two Task A runs on the same queries, compared with a paired bootstrap (``local-rag eval compare`` on two folders
of ``local-rag eval retrieval``).

A retrieval row of 50-70 queries moves by 0.01-0.02 of nDCG@5 when a handful of queries change, so a gain of that
size needs its interval beside it. Each run's ``run-<domain>.jsonl`` files are scored per query against the MTRAG
qrels, in the order the run lists its passages (as `local_rag.evaluation.metrics.run_scores` writes them); the
queries both runs hold are resampled with replacement, the same resample on both sides, and the difference B − A of
each mean is read at the 2.5th and 97.5th percentiles. Pooled over domains, a mean over all queries is the
query-weighted average the scores file reports.

Example:
    >>> a = {"q1": {"nDCG@5": 0.5}, "q2": {"nDCG@5": 0.0}}
    >>> b = {"q1": {"nDCG@5": 1.0}, "q2": {"nDCG@5": 0.0}}
    >>> result = compare_per_query(a, b, ["nDCG@5"], resamples=200)
    >>> (result.tasks, result.rows[0].diff)
    (2, 0.25)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from local_rag.errors import BadInputError
from local_rag.evaluation.generation.compare import Comparison, Difference
from local_rag.evaluation.metrics import run_scores, score_run

#: the official metric names and how the table shows them
METRICS = {"ndcg_cut_1": "nDCG@1", "ndcg_cut_3": "nDCG@3", "ndcg_cut_5": "nDCG@5", "ndcg_cut_10": "nDCG@10",
           "recall_5": "R@5", "recall_10": "R@10"}


def is_retrieval_run(path: Path) -> bool:
    """Whether ``path`` is a folder of ``local-rag eval retrieval`` (it holds ``run-<domain>.jsonl`` files)."""
    return path.is_dir() and any(path.glob("run-*.jsonl"))


def read_runs(folder: Path, domains: Sequence[str] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    """The run of each domain in ``folder`` (``run-<domain>.jsonl``): task id → document id → score, the scores made
    strictly decreasing in the listed order.

    Raises:
        BadInputError: no run file there (of the named domains).
    """
    from local_rag.mtrag import read_jsonl

    files = sorted(folder.glob("run-*.jsonl"))
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for path in files:
        domain = path.stem.removeprefix("run-")
        if domains and domain not in domains:
            continue
        run: dict[str, dict[str, float]] = {}
        for n, record in enumerate(read_jsonl(path), 1):
            try:
                contexts = [c for c in record.get("contexts") or [] if c.get("document_id")]
                scores = run_scores([float(c.get("score", 0.0)) for c in contexts])
                run[str(record["task_id"])] = {c["document_id"]: s for c, s in zip(contexts, scores, strict=True)}
            except (AttributeError, KeyError, TypeError, ValueError) as exc:
                raise BadInputError(f"{path}: record {n} is not in the official run shape "
                                    f"(task_id, contexts of document_id and score): {exc!r}") from None
        runs[domain] = run
    if not runs:
        which = f" of {', '.join(domains)}" if domains else ""
        raise BadInputError(f"{folder}: no run-<domain>.jsonl{which} (a folder of `local-rag eval retrieval`)")
    return runs


def per_query(runs: Mapping[str, Mapping[str, Mapping[str, float]]],
              qrels: Mapping[str, Mapping[str, Mapping[str, int]]]) -> dict[str, dict[str, float]]:
    """Per-query metrics (display names of `METRICS`) of the queries the runs hold, against each domain's ``qrels``."""
    out: dict[str, dict[str, float]] = {}
    for domain, run in runs.items():
        held = {q: qrels[domain][q] for q in run if q in qrels[domain]}
        for qid, metrics in score_run(run, held).items():
            out[qid] = {shown: metrics[name] for name, shown in METRICS.items()}
    return out


def compare_per_query(a: Mapping[str, Mapping[str, float]], b: Mapping[str, Mapping[str, float]],
                      metrics: Sequence[str], resamples: int = 2000, seed: int = 0) -> Comparison:
    """B − A of the mean of each metric over the queries both hold, with a paired-bootstrap 95% interval.

    Raises:
        BadInputError: no query in both, or fewer than 1 resample.
    """
    import numpy as np

    if resamples < 1:
        raise BadInputError("resamples must be at least 1")
    common = [q for q in a if q in b]
    if not common:
        raise BadInputError("the two runs have no scored query in common")
    va = np.array([[a[q][m] for m in metrics] for q in common])
    vb = np.array([[b[q][m] for m in metrics] for q in common])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(common), (resamples, len(common)))
    diffs = vb[picks].mean(axis=1) - va[picks].mean(axis=1)  # resamples x metrics
    rows = []
    for j, metric in enumerate(metrics):
        mean_a, mean_b = float(va[:, j].mean()), float(vb[:, j].mean())
        rows.append(Difference(metric, round(mean_a, 4), round(mean_b, 4), round(mean_b - mean_a, 4),
                               round(float(np.percentile(diffs[:, j], 2.5)), 4),
                               round(float(np.percentile(diffs[:, j], 97.5)), 4),
                               round(float((diffs[:, j] >= 0).mean()), 3)))
    return Comparison(len(common), len(a) - len(common), len(b) - len(common), resamples, seed, rows, unit="queries")


def tasks_of(folder: Path) -> str:
    """The generation-tasks file a run of ``eval retrieval --generation-tasks`` was made from (its ``scores.json``
    records it); "" for a run of the retrieval tasks, or one written before the record was kept."""
    import json

    scores = folder / "scores.json"
    try:
        settings = json.loads(scores.read_text(encoding="utf-8")).get("settings") or {}
    except (OSError, ValueError, AttributeError):
        return ""
    return str(settings.get("generation_tasks") or "")


def compare_runs(folder_a: Path, folder_b: Path, tasks_root: Path | None = None, domains: Sequence[str] | None = None,
                 resamples: int = 2000, seed: int = 0, generation_tasks: Path | None = None) -> Comparison:
    """Compare two folders of ``local-rag eval retrieval`` on the queries (of ``domains``) both ran, scored against
    the qrels of ``tasks_root`` (``<domain>/qrels/dev.tsv``), or against the gold contexts of ``generation_tasks``.
    With neither, against what both runs were made from (`tasks_of`): the generation-tasks file they name, else
    MTRAG's ``retrieval_tasks``.

    Raises:
        BadInputError: both gold sources given; or, with neither, one run made from generation tasks and the other
            not, or from another file.
    """
    from local_rag.mtrag import default_mtrag_dir, generation_qrels, load_qrels

    if tasks_root is not None and generation_tasks is not None:
        raise BadInputError("give either --tasks-root or --generation-tasks, not both")
    runs_a, runs_b = read_runs(folder_a, domains), read_runs(folder_b, domains)
    if generation_tasks is None and tasks_root is None:
        made_a, made_b = tasks_of(folder_a), tasks_of(folder_b)
        if made_a != made_b:
            raise BadInputError(f"{folder_a} was made from {made_a or 'the retrieval tasks'} and {folder_b} from "
                                f"{made_b or 'the retrieval tasks'}: name the gold to score both with --generation-tasks "
                                "FILE or --tasks-root DIR")
        generation_tasks = Path(made_a) if made_a else None
    if generation_tasks is not None:
        gold = generation_qrels(generation_tasks)
        qrels = {d: gold.get(d, {}) for d in sorted({*runs_a, *runs_b})}
    else:
        root = Path(tasks_root) if tasks_root is not None else default_mtrag_dir() / "retrieval_tasks"
        qrels = {d: load_qrels(root / d / "qrels" / "dev.tsv") for d in sorted({*runs_a, *runs_b})}
    a, b = per_query(runs_a, qrels), per_query(runs_b, qrels)
    return compare_per_query(a, b, list(METRICS.values()), resamples=resamples, seed=seed)

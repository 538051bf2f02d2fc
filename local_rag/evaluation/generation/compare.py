"""Two scored generation runs on the same tasks, compared with a paired bootstrap (``local-rag eval compare``).

A difference of 0.02-0.05 in harmonic mean between two runs of 20-24 tasks is often one task's worth, so "within
0.02" or "equal quality" needs its uncertainty beside it. The tasks both runs scored are resampled with replacement
(the same resample on both sides: a paired bootstrap), each side's means and harmonic mean are computed as the report
computes them (`local_rag.evaluation.generation.report.group_stats`: a metric missing on a task is left out of its
mean), and the difference B − A is read at the 2.5th and 97.5th percentiles.

Example:
    >>> a = [{"task_id": str(i), "metrics": {"RB_agg_idk": [0.4], "RL_F_idk": [0.8], "RB_llm_idk": [0.6]}} for i in range(4)]
    >>> result = paired_bootstrap(a, a, resamples=200)
    >>> (result.tasks, result.rows[-1].diff, result.rows[-1].low, result.rows[-1].high)
    (4, 0.0, 0.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError
from local_rag.evaluation.generation.conditioning import FINAL_COMPONENTS, final_score
from local_rag.evaluation.generation.report import LABELS, mean_present, metric_value

METRICS = (*FINAL_COMPONENTS, "final")


@dataclass(frozen=True, slots=True)
class Difference:
    """One metric of both runs on the paired tasks, and B − A with its bootstrap interval."""

    metric: str
    a: float | None
    b: float | None
    diff: float | None
    low: float | None
    high: float | None
    #: share of resamples in which B scored at least as high as A
    b_at_least_a: float | None


@dataclass(frozen=True, slots=True)
class Comparison:
    tasks: int
    only_a: int
    only_b: int
    resamples: int
    seed: int
    rows: list[Difference]
    unit: str = "tasks"  # what was resampled: tasks (generation) or queries (retrieval)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def markdown(self, name_a: str = "A", name_b: str = "B") -> str:
        lines = [f"{self.tasks} {self.unit} scored in both runs ({self.only_a} only in {name_a}, {self.only_b} only in "
                 f"{name_b}); paired bootstrap, {self.resamples} resamples, seed {self.seed}.", "",
                 f"| metric | {name_a} | {name_b} | B − A | 95% interval | resamples with B ≥ A |",
                 "|---|---:|---:|---:|---|---:|"]
        for r in self.rows:
            label = LABELS.get(r.metric, r.metric)
            label = f"**{label}**" if r.metric == "final" else label
            lines.append(f"| {label} | {_fmt(r.a)} | {_fmt(r.b)} | {_fmt(r.diff, sign=True)} | "
                         f"{_fmt(r.low, sign=True)} … {_fmt(r.high, sign=True)} | {_fmt(r.b_at_least_a, digits=2)} |")
        return "\n".join(lines) + "\n"


def _fmt(value: float | None, sign: bool = False, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _stats(columns: list[list[float | None]], picks: Sequence[int]) -> dict[str, float | None]:
    """The conditioned means over the tasks ``picks`` (repeats count) and their harmonic mean, as the report has them."""
    means = {name: mean_present([column[i] for i in picks])
             for name, column in zip(FINAL_COMPONENTS, columns, strict=True)}
    means["final"] = final_score(means)
    return means


def paired_bootstrap(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]], resamples: int = 2000,
                     seed: int = 0) -> Comparison:
    """Compare scored records ``a`` and ``b`` (``scored.jsonl`` or ``answers.jsonl`` records) on their common tasks.

    Raises:
        BadInputError: no task scored in both, or fewer than 1 resample.
    """
    import numpy as np

    if resamples < 1:
        raise BadInputError("resamples must be at least 1")
    by_a = {str(r.get("task_id")): r for r in a}
    by_b = {str(r.get("task_id")): r for r in b}
    common = [t for t in by_a if t in by_b]
    if not common:
        raise BadInputError("the two runs have no task in common")
    cols_a = [[metric_value(by_a[t], m) for t in common] for m in FINAL_COMPONENTS]
    cols_b = [[metric_value(by_b[t], m) for t in common] for m in FINAL_COMPONENTS]
    everything = range(len(common))
    whole_a, whole_b = _stats(cols_a, everything), _stats(cols_b, everything)
    rng = np.random.default_rng(seed)
    diffs: dict[str, list[float]] = {m: [] for m in METRICS}
    for _ in range(resamples):
        picks = rng.integers(0, len(common), len(common)).tolist()
        sa, sb = _stats(cols_a, picks), _stats(cols_b, picks)
        for m in METRICS:
            va, vb = sa[m], sb[m]
            if va is not None and vb is not None:
                diffs[m].append(vb - va)
    rows = []
    for m in METRICS:
        d = diffs[m]
        wa, wb = whole_a[m], whole_b[m]
        whole = wb - wa if wa is not None and wb is not None else None
        rows.append(Difference(
            m, _round(whole_a[m]), _round(whole_b[m]), _round(whole),
            _round(float(np.percentile(d, 2.5))) if d else None, _round(float(np.percentile(d, 97.5))) if d else None,
            round(sum(x >= 0 for x in d) / len(d), 3) if d else None))
    return Comparison(len(common), len(by_a) - len(common), len(by_b) - len(common), resamples, seed, rows)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def only_domains(records: Sequence[dict[str, Any]], domains: Sequence[str], path: Path) -> list[dict[str, Any]]:
    """The records of ``domains``, by the domain `eval generation` records with each answer (``local_rag.domain``).

    Raises:
        BadInputError: a record without its domain, or a domain with no record in the run.
    """
    def domain(record: dict[str, Any]) -> str:
        extra = record.get("local_rag")
        return str(extra.get("domain") or "") if isinstance(extra, dict) else ""

    found = {domain(r) for r in records}
    if "" in found:
        raise BadInputError(f"{path}: records without their domain (local_rag.domain, as `local-rag eval generation` "
                            "writes it): --domains cannot choose among them")
    unknown = [d for d in domains if d not in found]
    if unknown:
        raise BadInputError(f"--domains: no task of {', '.join(unknown)} in {path} (there: {', '.join(sorted(found))})")
    return [r for r in records if domain(r) in domains]


def read_scored(path: Path) -> list[dict[str, Any]]:
    """The scored records of a run: a run folder (``scored.jsonl``, else the checkpoint's ``answers.jsonl``) or a
    JSONL file of scored records.

    Raises:
        BadInputError: nothing there, or records without metrics.
    """
    from local_rag.mtrag import read_jsonl

    if path.is_dir():
        found = [p for p in (path / "scored.jsonl", path / "answers.jsonl") if p.is_file()]
        if not found:
            raise BadInputError(f"{path}: no scored.jsonl or answers.jsonl (a run folder of `local-rag eval generation`)")
        path = found[0]
    elif not path.is_file():
        raise BadInputError(f"{path}: no such run folder or file")
    records = read_jsonl(path)
    if not records or not any(isinstance(r.get("metrics"), dict) for r in records):
        raise BadInputError(f"{path}: no scored records (they carry 'metrics'; score the predictions first)")
    return records

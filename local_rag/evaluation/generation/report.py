"""Aggregated generation scores: overall, per domain, per answerability class, per turn position; Markdown, JSON and
PNG charts.

Every group reports its task count, the means of the raw and conditioned metrics (a metric missing on a task, e.g.
RL_F of an answer without claims, is left out of that mean, as pandas does officially), the final harmonic mean of
the conditioned means, the IDK rate, and the judges' seconds per task. When the BERTScore encoder is not the
official one, every report carries the line "not comparable to official figures".

Example:
    >>> summary = summarize(scored, info)  # doctest: +SKIP
    >>> write_reports(summary, Path("runs/gen"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from local_rag.evaluation.generation.algorithmic import NOT_COMPARABLE
from local_rag.evaluation.generation.conditioning import FINAL_COMPONENTS, final_score
from local_rag.evaluation.generation.kinds import kind_metrics
from local_rag.evaluation.generation.official import ANSWERABILITY_CLASSES, DECLINE_CLASSES

RAW = ("RougeL_stemFalse", "BertscoreR", "RB_agg", "RL_F", "RB_llm")
CONDITIONED = FINAL_COMPONENTS
LABELS = {"RB_agg_idk": "RB_alg", "RL_F_idk": "RL_F", "RB_llm_idk": "RB_llm", "final": "harmonic mean"}
GROUPINGS = ("domain", "answerability", "turn")
TIMINGS = ("rb_alg_s", "idk_s", "rl_f_s", "rb_llm_s", "total_s")


def turn_bucket(turn: int) -> str:
    """Turn position label: ``1`` ... ``7``, then ``8+`` (few conversations are longer)."""
    return "8+" if turn >= 8 else str(turn) if turn >= 1 else "?"


def metric_value(record: dict[str, Any], name: str) -> float | None:
    """A scored record's value of metric ``name`` (the official files keep each as a one-item list); ``None`` when it
    is missing or NaN."""
    value = record.get("metrics", {}).get(name)
    value = value[0] if isinstance(value, list) and value else value
    return float(value) if isinstance(value, int | float) and value == value else None


def mean_present(values: Sequence[float | None]) -> float | None:
    """The mean of the values that are there (``None`` left out, as pandas does officially); ``None`` for none."""
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def group_stats(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means of one group of scored records."""
    stats: dict[str, Any] = {"tasks": len(records)}
    for name in RAW + CONDITIONED:
        stats[name] = mean_present([metric_value(r, name) for r in records])
    stats["final"] = final_score({k: stats[k] for k in CONDITIONED})
    idk = [metric_value(r, "idk_eval") for r in records]
    stats["idk_rate"] = mean_present([1.0 if v == 1 else 0.0 for v in idk if v is not None])
    stats["rl_f_missing"] = sum(1 for r in records if r.get("local_rag", {}).get("judged") and metric_value(r, "RL_F") is None)
    stats["judged"] = sum(1 for r in records if r.get("local_rag", {}).get("judged"))
    for key in TIMINGS:
        stats[key] = mean_present([r.get("local_rag", {}).get("timings", {}).get(key) for r in records])
    citations = [c for r in records for p in (r.get("predictions") or [])[:1] if isinstance(p, dict)
                 for c in (p.get("citations") or []) if isinstance(c, dict) and "valid" in c]
    if citations:
        stats["citations"] = len(citations)
        stats["citation_validity"] = sum(1 for c in citations if c["valid"]) / len(citations)
    return stats


def _by(records: Sequence[dict[str, Any]], key: Callable[[dict[str, Any]], str], order: Sequence[str] = ()) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        groups[key(r)].append(r)
    names = [n for n in order if n in groups] + sorted(n for n in groups if n not in order)
    return {n: group_stats(groups[n]) for n in names}


def summarize(scored: Sequence[dict[str, Any]], info: dict[str, Any]) -> dict[str, Any]:
    """Overall and grouped statistics of scored records; ``info`` (encoder, judge, setting...) is kept beside them."""

    def meta(r: dict[str, Any]) -> dict[str, Any]:
        return dict(r.get("local_rag") or {})

    answerable = [r for r in scored if meta(r).get("answerability") not in (*DECLINE_CLASSES, "UNDERSPECIFIED")]
    unanswerable = [r for r in scored if meta(r).get("answerability") == "UNANSWERABLE"]
    summary = {
        "info": info,
        "overall": group_stats(scored),
        "idk_rate_unanswerable": group_stats(unanswerable)["idk_rate"] if unanswerable else None,
        "idk_rate_answerable": group_stats(answerable)["idk_rate"] if answerable else None,
        "domain": _by(scored, lambda r: str(meta(r).get("domain", "?")), ("clapnq", "cloud", "fiqa", "govt")),
        "answerability": _by(scored, lambda r: str(meta(r).get("answerability", "?")), ANSWERABILITY_CLASSES),
        "turn": _by(scored, lambda r: turn_bucket(int(meta(r).get("turn") or 0)), [str(i) for i in range(1, 8)] + ["8+"]),
    }
    kinds = [next((p.get("kind") for p in (r.get("predictions") or [])[:1] if isinstance(p, dict)), None) for r in scored]
    if scored and all(kinds):
        summary["kinds"] = kind_metrics([str(meta(r).get("answerability", "?")) for r in scored], [str(k) for k in kinds])
    return summary


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def _table(rows: dict[str, dict[str, Any]], title: str, column: str) -> list[str]:
    cols = ["RB_agg_idk", "RL_F_idk", "RB_llm_idk", "final", "idk_rate", "RougeL_stemFalse", "BertscoreR", "RB_agg",
            "RL_F", "RB_llm"]
    head = ["RB_alg", "RL_F", "RB_llm", "**HM**", "IDK rate", "ROUGE-L", "BERT-R", "RB_alg raw", "RL_F raw", "RB_llm raw"]
    lines = [f"### {title}", "", f"| {column} | tasks | " + " | ".join(head) + " |",
             "|" + "---|" * (len(cols) + 2)]
    for name, stats in rows.items():
        lines.append(f"| {name} | {stats['tasks']} | " + " | ".join(_fmt(stats.get(c)) for c in cols) + " |")
    return lines + [""]


def markdown(summary: dict[str, Any], title: str = "MTRAG generation scores") -> str:
    info = summary["info"]
    overall = summary["overall"]
    lines = [f"## {title}", ""]
    if not info.get("comparable"):
        lines += [f"> **{NOT_COMPARABLE.capitalize()}**: {info.get('bertscore', '')}. RB_alg (and so the harmonic "
                  "mean) uses a different BERTScore encoder than the official scorer; the LLM judges are local models, "
                  "not the official GPT-4o-mini judge.", ""]
    lines += [
        f"- setting: {info.get('setting', '?')}; predictions: `{info.get('predictions', '?')}`; tasks: {overall['tasks']}",
        *([f"- generated here by {info['generator']} with the `{info.get('prompt')}` prompt ({info.get('mode')} mode)"]
          if info.get("generator") else []),
        f"- {info.get('bertscore', '')}",
        f"- IDK judge: {info.get('idk_judge')}; LLM judges (RL_F, RB_llm): "
        + (f"{info.get('judge_model')}" + (" (skipped where conditioning decides the score)"
                                           if info.get("skip_decided") else "") if info.get("llm_judges") else "not run"),
        f"- **harmonic mean (RB_alg, RL_F, RB_llm; conditioned)**: {_fmt(overall['final'])}",
        f"- IDK rate on UNANSWERABLE: {_fmt(summary.get('idk_rate_unanswerable'))}; on answerable: "
        f"{_fmt(summary.get('idk_rate_answerable'))}",
    ]
    if summary.get("kinds"):
        k = summary["kinds"]
        lines.append(f"- kind: declines on UNANSWERABLE {_fmt(k['decline_unanswerable'])}, on answerable "
                     f"{_fmt(k['decline_answerable'])}; clarifications on UNDERSPECIFIED {_fmt(k['clarify_underspecified'])}, "
                     f"on answerable {_fmt(k['clarify_answerable'])}; accuracy by class {k['accuracy_by_class']}")
    if overall.get("citations"):
        lines.append(f"- citation validity: {_fmt(overall['citation_validity'])} of {overall['citations']} citations")
    timing = ", ".join(f"{k[:-2]} {overall[k]:.2f}" for k in TIMINGS if overall.get(k) is not None)
    lines += [f"- seconds per task: {timing}", ""]
    lines += _table({"all": overall}, "Overall", "set")
    for grouping in GROUPINGS:
        lines += _table(summary[grouping], f"By {grouping}", grouping)
    lines.append("Columns RB_alg, RL_F, RB_llm are conditioned on answerability (the official `*_idk` scores); "
                 "HM is their harmonic mean; the raw columns are before conditioning.")
    return "\n".join(lines) + "\n"


def charts(summary: dict[str, Any], out_dir: Path) -> list[Path]:
    """One bar chart per grouping (conditioned RB_alg, RL_F, RB_llm and the harmonic mean); PNG files written."""
    from local_rag._optional import require

    matplotlib = require("matplotlib", "report charts")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    note = "" if summary["info"].get("comparable") else f"\n({summary['info'].get('bertscore_model')} BERTScore: {NOT_COMPARABLE})"
    paths = []
    keys = list(CONDITIONED) + ["final"]
    for grouping in GROUPINGS:
        groups = summary[grouping]
        names = list(groups)
        fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(names) + 2), 4.2))
        width = 0.8 / len(keys)
        for j, key in enumerate(keys):
            values = [groups[n][key] if groups[n].get(key) is not None else float("nan") for n in names]
            ax.bar([i + j * width for i in range(len(names))], values, width, label=LABELS[key])
        ax.set_xticks([i + width * (len(keys) - 1) / 2 for i in range(len(names))])
        ax.set_xticklabels([f"{n}\n(n={groups[n]['tasks']})" for n in names], fontsize=8)
        ax.set_ylim(0, 1.15)
        ax.set_ylabel("score")
        ax.set_title(f"MTRAG generation scores by {grouping}{note}", fontsize=9)
        ax.legend(fontsize=8, ncols=4, loc="upper center")
        fig.tight_layout()
        path = out_dir / f"scores_by_{grouping}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def write_reports(summary: dict[str, Any], out_dir: Path, title: str = "MTRAG generation scores",
                  with_charts: bool = True) -> list[Path]:
    """``scores.json``, ``scores.md`` and (with matplotlib) ``scores_by_<grouping>.png`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "scores.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out_dir / "scores.md").write_text(markdown(summary, title), encoding="utf-8")
    written = [out_dir / "scores.json", out_dir / "scores.md"]
    if with_charts:
        written += charts(summary, out_dir)
    return written

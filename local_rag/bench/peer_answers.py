"""The answers of a side-by-side run (`scripts/bench_peer.py`, ``peer.json``) as official prediction records, one
file a row, so that ``local-rag eval generation --setting rag --predictions`` scores both sides with the same judges
(RL_F, RB_llm, the harmonic mean) instead of ROUGE-L alone.

Each record is the MTRAG task with the row's answer and, as ``contexts``, the whole corpus passages the row retrieved
(the peer's chunks and our compressed evidence both come from them), in rank order.

Example:
    >>> paths = write_row_predictions(Path("docs/benchmarks/peer-levers"), Path("runs/peer-levers"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError
from local_rag.evaluation.generation.official import prediction_record, write_records
from local_rag.mtrag import default_mtrag_dir, load_generation_tasks, read_jsonl


def row_predictions(report: dict[str, Any], tasks: list[dict[str, Any]], corpus: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Official ``rag`` prediction records of every row of ``report`` (a ``peer.json``), by row name.

    Raises:
        BadInputError: a turn's task or passage is not in ``tasks`` or ``corpus``.
    """
    by_task = {str(t["task_id"]): t for t in tasks}
    passages = {str(p["_id"]): p for p in corpus}
    out: dict[str, list[dict[str, Any]]] = {}
    for row, turns in report.get("turns", {}).items():
        records = []
        for turn in turns:
            task = by_task.get(str(turn["task_id"]))
            missing = [p for p in turn["passages"] if str(p) not in passages]
            if task is None or missing:
                raise BadInputError(f"{row}: task {turn['task_id']} " + (f"passage {missing[0]} is not in the corpus"
                                    if task else "is not among the MTRAG generation tasks"))
            contexts = [{"document_id": str(p), "title": str(passages[str(p)].get("title") or ""),
                         "text": str(passages[str(p)]["text"]), "url": "", "score": 1.0 / rank}
                        for rank, p in enumerate(turn["passages"], start=1)]
            records.append(prediction_record(task, {"text": turn["answer"], "kind": turn.get("kind", "answer")},
                                             "rag", contexts))
        out[row] = records
    return out


def write_row_predictions(run: Path, dest: Path, root: Path = Path("."), mtrag: Path | None = None) -> list[Path]:
    """``<dest>/predictions-<row>.jsonl`` for each row of ``<run>/peer.json``; the corpus path it names is read
    relative to ``root`` (the checkout). ``dest`` belongs outside git (``runs/``): the records carry MTRAG texts.
    Returns the files written."""
    try:
        report = json.loads((run / "peer.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInputError(f"{run}/peer.json cannot be read ({exc})") from exc
    corpus_path = Path(report["corpus"]["path"])
    corpus = read_jsonl(corpus_path if corpus_path.is_absolute() else root / corpus_path)
    tasks = load_generation_tasks((mtrag or default_mtrag_dir()) / "generation_tasks" / "mtrag_tasks.jsonl")
    paths = []
    for row, records in row_predictions(report, tasks, corpus).items():
        path = dest / f"predictions-{row}.jsonl"
        write_records(path, records)
        paths.append(path)
    return paths

"""The official MTRAG generation shapes: task fields, prediction records, and the official format rules.

A prediction record is the task record plus ``predictions: [{"text": ...}]``; in the ``rag`` setting (Task C) its
``contexts`` are the passages the system retrieved (at most 10), in the ``reference`` setting (Task B) the gold ones.
`validate_record` applies the rules of the official format checker (``scripts/evaluation/format_checker.py`` in
IBM/mt-rag-benchmark): required fields per task type, list types, ``document_id`` (string) and numeric ``score`` on
every context, at most 10 contexts, a string ``text`` on every prediction.

Example:
    >>> task = {"task_id": "c<::>1", "input": [{"speaker": "user", "text": "hi?"}], "contexts": []}
    >>> record = prediction_record(task, "Hello.", setting="reference")
    >>> validate_record(record, "reference")
    []
"""

from __future__ import annotations

import ast
import copy
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from local_rag.errors import BadInputError
from local_rag.mtrag import DOMAINS, task_domain

Setting = Literal["reference", "rag"]
SETTINGS: tuple[Setting, ...] = ("reference", "rag")
MAX_CONTEXTS = 10
DECLINE_CLASSES = ("UNANSWERABLE", "CONVERSATIONAL")  # a correct answer to these declines
ANSWERABILITY_CLASSES = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "CONVERSATIONAL", "UNDERSPECIFIED")
UNKNOWN = "UNKNOWN"

# official checker: required top-level fields per mode (generation_taskb, rag_taskc)
REQUIRED_FIELDS: dict[Setting, tuple[str, ...]] = {
    "reference": ("task_id", "input", "contexts", "predictions"),
    "rag": ("task_id", "Collection", "input", "contexts", "predictions"),
}


def _listish(value: Any) -> Any:
    """Official files sometimes hold lists as Python-literal strings (``"['ANSWERABLE']"``); decode those."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return value
    return value


def answerability(task: dict[str, Any]) -> str:
    """The task's answerability label (``ANSWERABLE``, ``PARTIAL``, ``UNANSWERABLE``, ``CONVERSATIONAL``), read as
    the official scorer does (``answerability`` then ``Answerability``, first item of a list); `UNKNOWN` if absent."""
    for key in ("answerability", "Answerability"):
        value = _listish(task.get(key))
        if isinstance(value, list):
            value = value[0] if value else None
        if isinstance(value, str) and value:
            return value.upper()
    return UNKNOWN


def turn_number(task: dict[str, Any]) -> int:
    """1-based user turn: the ``turn`` field, else the ``<::>k`` / ``::k`` suffix of the task id; 0 when unknown."""
    value = task.get("turn")
    if isinstance(value, int | float) and value == value:  # not NaN
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    match = re.search(r"::>?(\d+)$", str(task.get("task_id", "")))
    return int(match.group(1)) if match else 0


def domain_of(task: dict[str, Any]) -> str:
    """The MTRAG domain (``clapnq``, ``cloud``, ``fiqa``, ``govt``) from ``domain`` or the collection name; unlike
    `task_domain`, a collection name that merely contains a domain is accepted, and an unknown one gives ``unknown``."""
    try:
        return task_domain(task)
    except BadInputError:
        pass
    collection = task.get("Collection") or task.get("collection")
    for domain in DOMAINS:  # e.g. "mt-rag-ibmcloud-..." or a custom collection name containing the domain
        if isinstance(collection, str) and (domain in collection or (domain == "cloud" and "ibmcloud" in collection)):
            return domain
    return UNKNOWN.lower()


def contexts_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    value = _listish(record.get("contexts"))
    return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []


def targets_of(record: dict[str, Any]) -> list[str]:
    value = _listish(record.get("targets"))
    if not isinstance(value, list):
        return []
    return [t["text"] for t in value if isinstance(t, dict) and isinstance(t.get("text"), str)]


def prediction_text(record: dict[str, Any]) -> str:
    """The first prediction's text (the official scorers read ``predictions[0].text``)."""
    preds = _listish(record.get("predictions"))
    if not isinstance(preds, list) or not preds or not isinstance(preds[0], dict):
        raise BadInputError(f"task {record.get('task_id')}: no predictions[0]")
    text = preds[0].get("text")
    if not isinstance(text, str):
        raise BadInputError(f"task {record.get('task_id')}: predictions[0].text must be a string")
    return text


def messages_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    value = _listish(record.get("input"))
    if not isinstance(value, list):
        raise BadInputError(f"task {record.get('task_id')}: 'input' must be a list of messages")
    return value


def official_context(context: dict[str, Any], rank: int) -> dict[str, Any]:
    """A context as the official checker wants it: string ``document_id`` and a numeric ``score``."""
    out = dict(context)
    out["document_id"] = str(out.get("document_id") or out.get("passage_id") or out.get("_id") or "")
    if not isinstance(out.get("score"), int | float) or isinstance(out.get("score"), bool):
        out["score"] = float(MAX_CONTEXTS - rank) if rank < MAX_CONTEXTS else 0.0  # rank order, best first
    return out


def prediction_record(
    task: dict[str, Any],
    prediction: str | dict[str, Any],
    setting: Setting,
    contexts: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The official prediction record for ``task``: a copy of the task with ``predictions`` (and ``contexts``).

    Args:
        task: the generation task record.
        prediction: the answer text, or a prediction dict with ``text`` (extra keys, e.g. ``citations``, are kept).
        setting: ``reference`` keeps the gold contexts; ``rag`` needs the retrieved ``contexts``.
        contexts: the retrieved passages (``document_id``, ``text``, ``title``, ``url``, ``score``), best first.
    """
    if setting not in SETTINGS:
        raise BadInputError(f"unknown setting {setting!r}; valid: {', '.join(SETTINGS)}")
    record = copy.deepcopy(task)
    pred = {"text": prediction} if isinstance(prediction, str) else dict(prediction)
    if not isinstance(pred.get("text"), str):
        raise BadInputError(f"task {task.get('task_id')}: the generator returned no 'text'")
    record["predictions"] = [pred]
    if setting == "rag":
        if contexts is None:
            raise BadInputError(f"task {task.get('task_id')}: the rag setting needs the retrieved contexts")
        chosen = list(contexts)[:MAX_CONTEXTS]
    else:
        chosen = contexts_of(task) if contexts is None else list(contexts)
    record["contexts"] = [official_context(c, i) for i, c in enumerate(chosen)]
    if "Collection" not in record and isinstance(record.get("collection"), str):
        record["Collection"] = record["collection"]
    return record


def check_predictions(records: list[dict[str, Any]], path: str | Path) -> list[dict[str, Any]]:
    """``records`` when each is a prediction record the scorer and `eval recheck` can read (a ``task_id`` and
    ``predictions[0].text``).

    Raises:
        BadInputError: no record, or the first that is not one, in one line; a run's ``answers.jsonl`` (the committed
        form of a run, without task texts) is named as such.
    """
    for i, record in enumerate(records, start=1):
        preds = record.get("predictions") if isinstance(record, dict) else None
        if not (isinstance(record, dict) and "task_id" in record and isinstance(preds, list) and preds
                and isinstance(preds[0], dict) and isinstance(preds[0].get("text"), str)):
            answers = isinstance(record, dict) and "prediction" in record and "predictions" not in record
            hint = ("; this is a run's answers.jsonl (the answers without the task texts): give the run's "
                    "predictions.jsonl, which `eval generation` writes and a committed run's script restores") if answers else ""
            raise BadInputError(f"{path}, line {i}: not a prediction record (a task_id and predictions[0].text){hint}")
    if not records:
        raise BadInputError(f"{path}: no prediction record")
    return records


def validate_record(record: Any, setting: Setting, where: str = "") -> list[str]:
    """The official format checker's complaints about one record (empty when it passes)."""
    at = f"{where}: " if where else ""
    if not isinstance(record, dict):
        return [f"{at}a record must be a JSON object"]
    errors = [f"{at}missing required field {f!r}" for f in REQUIRED_FIELDS[setting] if f not in record]
    types = {"task_id": str, "Collection": str, "input": list, "contexts": list, "predictions": list}
    for key, kind in types.items():
        if key in record and not isinstance(record[key], kind):
            errors.append(f"{at}{key!r} must be a {kind.__name__}")
    contexts = record.get("contexts")
    if isinstance(contexts, list):
        if len(contexts) > MAX_CONTEXTS:
            errors.append(f"{at}too many contexts ({len(contexts)}); at most {MAX_CONTEXTS}")
        for i, ctx in enumerate(contexts):
            if not isinstance(ctx, dict):
                errors.append(f"{at}contexts[{i}] must be an object")
                continue
            if not isinstance(ctx.get("document_id"), str):
                errors.append(f"{at}contexts[{i}] needs a string 'document_id'")
            score = ctx.get("score")
            if not isinstance(score, int | float) or isinstance(score, bool):
                errors.append(f"{at}contexts[{i}] needs a numeric 'score'")
    preds = record.get("predictions")
    if isinstance(preds, list):
        for i, pred in enumerate(preds):
            if not isinstance(pred, dict):
                errors.append(f"{at}predictions[{i}] must be an object")
            elif not isinstance(pred.get("text"), str):
                errors.append(f"{at}predictions[{i}] needs a string 'text'")
    return errors


def validate_records(
    records: Iterable[dict[str, Any]], setting: Setting, task_ids: Sequence[str] | None = None
) -> list[str]:
    """Every record's complaints, plus (given the task ids) missing, extra and duplicated task ids."""
    errors: list[str] = []
    seen: list[str] = []
    for i, record in enumerate(records, start=1):
        errors += validate_record(record, setting, where=f"line {i}")
        if isinstance(record, dict) and isinstance(record.get("task_id"), str):
            seen.append(record["task_id"])
    dupes = sorted({t for t in seen if seen.count(t) > 1})
    errors += [f"task_id {t!r} appears more than once" for t in dupes]
    if task_ids is not None:
        expected, got = set(task_ids), set(seen)
        errors += [f"missing task_id {t!r}" for t in sorted(expected - got)]
        errors += [f"task_id {t!r} is not among the tasks" for t in sorted(got - expected)]
    return errors


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """JSON objects, one a line (``NaN`` accepted, as in the official sample files: `json.loads` takes it)."""
    from local_rag.mtrag import read_jsonl

    return read_jsonl(path)


def write_record(fh: Any, record: dict[str, Any]) -> None:
    """One JSON line, flushed, so an interrupted run keeps every finished record."""
    fh.write(json.dumps(record, ensure_ascii=False, default=_json_default) + "\n")
    fh.flush()


def write_records(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """``records`` as the whole JSONL file ``path``: written beside it, then moved into place, so an interruption
    leaves the old file or the new one, never part of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            write_record(fh, record)
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")

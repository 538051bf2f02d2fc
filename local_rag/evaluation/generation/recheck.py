"""The stages after generation, applied to committed answers (``local-rag eval recheck``).

A run's answers cost hours of LLM time on two CPU cores; the support check (`local_rag.decide.support`) and the
decision stage's choices change only some of them. `recheck_record` rewrites one official prediction record as the
pipeline would have with those stages on, without calling the generator:

- ``decisions``: a decider's choice per task (``task_id`` -> ``kind``, e.g. the ``predictions.jsonl`` of
  ``local-rag train decider --report``). A task it declines, clarifies or treats as small talk gets the reply the
  pipeline gives then (`local_rag.decide.reply_text`, the clarifying question built from the record's contexts);
- ``gate``: the draft gate (`local_rag.decide.draft`) on each remaining answer, with the decider's P(decline) of the
  task; a draft it declines becomes the IDK sentence;
- ``checker``: the support check on each answer against the contexts the generator saw, with the pipeline's own
  `local_rag.pipeline.support_checked` (citations moved, unsupported sentences flagged or dropped, the IDK sentence
  when nothing is left).

Each rewritten prediction keeps the official shape (``text``, ``kind``, ``citations``) and says what changed
(``recheck``: the decision applied, the support report). Scored with ``eval generation --reuse <earlier run>``, only
the answers that changed meet the LLM judges again.

Example:
    >>> rechecked = recheck_record(record, checker=checker, decisions={}, settings=settings)  # doctest: +SKIP
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError
from local_rag.evaluation.generation.official import contexts_of, prediction_text
from local_rag.mtrag import parse_conversation, read_jsonl
from local_rag.pipeline import support_checked
from local_rag.records import Answer, Citation, Decision, Hit, Kind
from local_rag.settings import Settings

KINDS: tuple[Kind, ...] = ("answer", "decline", "clarify", "chitchat")


def context_hits(record: dict[str, Any]) -> list[Hit]:
    """The record's contexts as the passages the generator saw, best first."""
    return [Hit(passage_id=str(c.get("document_id", i)), score=float(c.get("score") or 0.0), rank=i + 1,
                title=str(c.get("title") or ""), text=str(c.get("text") or ""), url=str(c.get("url") or ""))
            for i, c in enumerate(contexts_of(record))]


def answer_of(record: dict[str, Any], passages: list[Hit]) -> Answer:
    """The record's first prediction as an `Answer` (its ``kind`` and valid ``citations``)."""
    pred = record["predictions"][0]
    kind = pred.get("kind") or "answer"
    citations = [Citation(int(c["n"]), passages[int(c["n"]) - 1].passage_id, passages[int(c["n"]) - 1].title,
                          passages[int(c["n"]) - 1].url)
                 for c in pred.get("citations") or []
                 if c.get("valid") and isinstance(c.get("n"), int) and 1 <= c["n"] <= len(passages)]
    invalid = sum(1 for c in pred.get("citations") or [] if not c.get("valid"))
    return Answer(prediction_text(record), kind if kind in KINDS else "answer", citations, invalid, passages)


def prediction_of(answer: Answer) -> dict[str, Any]:
    """The official ``predictions[0]`` of an answer: text, kind and its citations (valid ones, then invalid ones)."""
    cited = [{"n": c.n, "document_id": c.passage_id, "valid": True} for c in answer.citations]
    cited += [{"valid": False}] * answer.invalid_citations
    out = {"text": answer.text, "kind": answer.kind, "citations": cited}
    return out | ({"idk_score": answer.idk_score} if answer.idk_score is not None else {})


def read_decision_file(path: str | Path, *, declines: bool = False) -> tuple[dict[str, Kind], dict[str, float]]:
    """One pass over a JSONL file of decisions (one object a line with ``task_id`` and ``kind``): ``task_id`` ->
    ``kind``, and with ``declines`` also ``task_id`` -> P(decline), which every row must then carry as a decider's
    ``predictions.jsonl`` does (``{"task_id", "kind", "p": {"decline": ...}}``); without it, an empty dict."""
    kinds: dict[str, Kind] = {}
    probabilities: dict[str, float] = {}
    for i, row in enumerate(read_jsonl(path), start=1):
        kind = row.get("kind")
        if not isinstance(row.get("task_id"), str) or kind not in KINDS:
            raise BadInputError(f"{path}, line {i}: a decision needs a 'task_id' and a 'kind' among {', '.join(KINDS)}")
        kinds[row["task_id"]] = kind
        if declines:
            try:
                probabilities[row["task_id"]] = float(row["p"]["decline"])
            except (KeyError, TypeError, ValueError) as exc:
                raise BadInputError(f"{path}, line {i}: no p.decline ({exc}): give a decider's predictions.jsonl") from exc
    return kinds, probabilities


def read_decisions(path: str | Path) -> dict[str, Kind]:
    """``task_id`` -> ``kind`` (`read_decision_file`)."""
    return read_decision_file(path)[0]


@dataclass
class RecheckTally:
    """What a recheck changed, over all records."""

    records: int = 0
    changed: int = 0
    decided: Counter[str] = field(default_factory=Counter)  # the decision applied (not "answer"), by kind
    checked: int = 0  # answers the support check saw
    sentences: int = 0
    unsupported: int = 0
    moved: int = 0
    dropped: int = 0
    emptied: int = 0  # answers with no sentence left: the IDK sentence

    def add(self, before: str, after: dict[str, Any]) -> None:
        self.records += 1
        self.changed += after["predictions"][0]["text"] != before
        recheck = after["predictions"][0].get("recheck") or {}
        if recheck.get("decision"):
            self.decided[recheck["decision"]] += 1
        report = recheck.get("support")
        if report:
            self.checked += 1
            self.sentences += len(report["sentences"])
            self.unsupported += report["unsupported"]
            self.moved += report["moved"]
            self.dropped += report["dropped"]
            self.emptied += after["predictions"][0]["kind"] == "decline"

    def to_json(self) -> dict[str, Any]:
        return {"records": self.records, "changed": self.changed, "decided": dict(self.decided),
                "checked": self.checked, "sentences": self.sentences, "unsupported": self.unsupported,
                "moved": self.moved, "dropped": self.dropped, "emptied": self.emptied}


def recheck_record(record: dict[str, Any], *, checker: Any, decisions: dict[str, Kind],
                   settings: Settings, gate: Any = None, declines: dict[str, float] | None = None) -> dict[str, Any]:
    """A copy of ``record`` with its prediction rewritten (see the module docstring). ``checker``: a
    `SupportChecker` or None (no support check); ``decisions``: task id -> kind (a task not in it keeps its kind);
    ``gate``: a `local_rag.decide.draft.DraftGate` (or None), which reads ``declines`` (task id -> the decider's
    P(decline)) and, as in the pipeline, looks at the draft before the support check does."""
    from local_rag.decide import reply_text

    out = copy.deepcopy(record)
    passages = context_hits(record)
    answer = answer_of(record, passages)
    note: dict[str, Any] = {}
    kind = decisions.get(str(record.get("task_id")), "answer")
    if kind != "answer":
        conversation = parse_conversation(record.get("input"), where=f"task {record.get('task_id')}")
        answer = Answer(reply_text(Decision(kind, reason="decisions file"), conversation, passages, settings), kind,
                        passages=passages)
        note["decision"] = kind
    elif answer.kind == "answer" and passages:
        if gate is not None:
            declined, p = gate.check(answer.text, passages, (declines or {}).get(str(record.get("task_id"))))
            note["draft_gate"] = round(p, 4)
            if declined:
                answer = Answer(settings.generate.idk_answer, "decline", passages=passages)
                note["decision"] = "decline"
        if checker is not None and answer.kind == "answer":
            answer, note["support"] = support_checked(checker, answer, passages, settings.generate)
    prediction = prediction_of(answer)
    if note:
        prediction["recheck"] = note
    out["predictions"] = [prediction]
    return out

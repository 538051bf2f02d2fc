"""Resumable runs: generate predictions for tasks, score them, one JSON line per finished task.

Both steps append each finished task to their JSONL file at once (flushed), and on a rerun skip the task ids already
there, so an interrupted run continues where it stopped and no task is generated or scored twice. A line cut short
by the interruption is dropped on resume.

The generator is any ``generate(task) -> prediction`` callable: the prediction is a dict with ``text`` (extra keys,
e.g. ``citations``, are kept in ``predictions[0]``) and, in the ``rag`` setting, the retrieved ``contexts``. In the
``reference`` setting (Task B) the generator answers from the task's gold ``contexts``. The conversational pipeline
plugs in through `pipeline_generator`.

Example:
    >>> scored = score_predictions(records, scorer, Path("runs/gen/scored.jsonl"))  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError
from local_rag.evaluation.generation.official import (
    Setting,
    answerability,
    contexts_of,
    domain_of,
    prediction_record,
    prediction_text,
    targets_of,
    validate_record,
    write_record,
    write_records,
)
from local_rag.mtrag import load_done
from local_rag.records import Hit
from local_rag.settings import Settings
from local_rag.subset import stratified

log = logging.getLogger("local_rag.evaluation.generation")

Generate = Callable[[dict[str, Any]], dict[str, Any]]


def _progress(items: Sequence[Any], desc: str, enabled: bool) -> Any:
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc, unit="task", dynamic_ncols=True)


def generate_predictions(
    tasks: Iterable[dict[str, Any]],
    generate: Generate,
    setting: Setting,
    out_path: Path,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Official prediction records for ``tasks`` (in task order), generating only those not yet in ``out_path``.

    Raises:
        BadInputError: the generator returned a prediction the official format rules reject.
    """
    tasks = list(tasks)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    done = load_done(out_path)
    todo = [t for t in tasks if str(t["task_id"]) not in done]
    with out_path.open("a", encoding="utf-8") as fh:
        for task in _progress(todo, f"generate ({setting})", progress):
            prediction = dict(generate(task))
            contexts = prediction.pop("contexts", None)
            record = prediction_record(task, prediction, setting, contexts)
            errors = validate_record(record, setting, where=f"task {task['task_id']}")
            if errors:
                raise BadInputError("the generated prediction breaks the official format: " + "; ".join(errors[:3]))
            write_record(fh, record)
            done[str(task["task_id"])] = record
    return [done[str(t["task_id"])] for t in tasks]


def score_predictions(
    records: Iterable[dict[str, Any]],
    scorer: Any,
    out_path: Path,
    progress: bool = True,
    reuse: dict[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Scored records (in input order), scoring only task ids not yet in ``out_path``.

    ``scorer`` is a `GenerationScorer` (anything with ``score(record) -> record``). ``reuse``: scored records of an
    earlier run by task id (`reusable_scores`); a task whose answer and contexts are the same there takes its scores
    from it (``local_rag.reused``) instead of meeting the judges again.
    """
    records = list(records)
    ids = [str(r.get("task_id")) for r in records]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise BadInputError(f"task ids appear more than once in the predictions: {', '.join(dupes[:5])}")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    done = load_done(out_path)
    if done and hasattr(scorer, "relabel"):
        done = relabel_done(done, scorer, out_path)
    todo = [r for r in records if str(r["task_id"]) not in done]
    if done and todo:
        log.info("%s: %d tasks already scored, %d to go", out_path, len(records) - len(todo), len(todo))
    with out_path.open("a", encoding="utf-8") as fh:
        for record in _progress(todo, "score", progress):
            earlier = (reuse or {}).get(str(record["task_id"]))
            if earlier is not None and same_answer(record, earlier):
                scored = dict(record, metrics=earlier["metrics"], local_rag={**earlier["local_rag"], "reused": True})
            else:
                scored = scorer.score(record)
            write_record(fh, scored)
            done[str(record["task_id"])] = scored
    return [done[i] for i in ids]


SCORED_WITH = ("bertscore_model", "bertscore_layer", "idk_judge", "idk_sentence", "llm_judges", "judge_model",
               "skip_decided")  # what must match for an earlier run's scores to be reused


def reusable_scores(run: Path, scorer_info: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The scored records of the finished run folder ``run`` by task id, for `score_predictions` (``reuse``).

    Raises:
        BadInputError: ``run`` holds no finished run, or it was scored with other models or rules than
            ``scorer_info`` (`GenerationScorer.describe`) names.
    """
    import json

    try:
        info = json.loads((run / "scores.json").read_text(encoding="utf-8"))["info"]
    except (OSError, ValueError, KeyError) as exc:
        raise BadInputError(f"--reuse {run}: no finished run there (scores.json cannot be read: {exc})") from exc
    differ = [f"{k} {info.get(k)!r} there, {scorer_info.get(k)!r} here" for k in SCORED_WITH
              if info.get(k) != scorer_info.get(k)]
    if differ:
        raise BadInputError(f"--reuse {run}: scored with other settings ({'; '.join(differ)})")
    return load_done(run / "scored.jsonl")


def same_answer(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Do two records hold the same task, answer text and contexts (so the same scores)?"""
    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        contexts = [(c.get("document_id"), c.get("text")) for c in contexts_of(r)]
        return same_task(r.get("task_id")), prediction_text(r), contexts, targets_of(r), answerability(r)

    return key(a) == key(b)


def relabel_done(done: dict[str, dict[str, Any]], scorer: Any, out_path: Path) -> dict[str, dict[str, Any]]:
    """Already scored records brought up to the scorer's current IDK rules (``scorer.relabel``). When a label
    changed, ``out_path`` is rewritten (a new file moved into place, so an interruption loses nothing); a task whose
    new label needs the LLM judges is dropped from it, to be scored again."""
    kept: dict[str, dict[str, Any]] = {}
    changed = dropped = 0
    for task_id, record in done.items():
        new = scorer.relabel(record)
        if new is None:
            dropped += 1
            continue
        changed += new is not record
        kept[task_id] = new
    if changed or dropped:
        write_records(out_path, kept.values())
        log.warning("%s: the IDK rules changed the label of %d scored task(s); %d of them will be scored again",
                    out_path, changed + dropped, dropped)
    return kept


def stratified_subset(tasks: Sequence[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """A fixed subset of ``n`` tasks, stratified by (domain, answerability), in the original order.

    Each stratum gets its proportional share (at least one task), taken in sha1(task_id) order, so the same tasks
    are chosen on every machine and every run (`local_rag.subset.stratified`).
    """
    return stratified(tasks, n, lambda t: (domain_of(t), answerability(t)))


def merge_predictions(
    tasks: Sequence[dict[str, Any]], predictions: Sequence[dict[str, Any]], setting: Setting
) -> tuple[list[dict[str, Any]], list[str]]:
    """Task records with the predictions' ``predictions`` (and, for ``rag``, ``contexts``), joined on task id.

    The task file carries what scoring needs (``targets``, ``answerability``); a submission file may not. Returns the
    merged records, in prediction order, and the ids of tasks without a prediction.
    """
    by_id = {same_task(t["task_id"]): t for t in tasks}
    merged = []
    for pred in predictions:
        task_id = same_task(pred.get("task_id"))
        if task_id not in by_id:
            raise BadInputError(f"prediction for task {pred.get('task_id')!r}, which is not among the tasks")
        record = dict(by_id[task_id])
        record["predictions"] = pred.get("predictions")
        if setting == "rag" or "contexts" not in record:
            record["contexts"] = pred.get("contexts", [])
        merged.append(record)
    seen = {same_task(p.get("task_id")) for p in predictions}
    return merged, [str(t["task_id"]) for k, t in by_id.items() if k not in seen]


def same_task(task_id: Any) -> str:
    """Task ids compared across official releases, which write the turn separator as ``<::>`` or ``::``."""
    return str(task_id).replace("<::>", "::")


def context_hits(task: dict[str, Any]) -> list[Hit]:
    """The task's gold ``contexts`` as passages, in their order (MTRAG's field names)."""
    return [Hit(passage_id=str(c.get("document_id", i)), score=1.0, rank=i + 1, title=str(c.get("title") or ""),
                text=str(c.get("text") or ""), url=str(c.get("url") or ""))
            for i, c in enumerate(contexts_of(task))]


class TaskPipelines:
    """``pipelines(task) -> Pipeline`` over the index of the task's domain (``settings.index`` when it was set
    explicitly, else ``<index_prefix><domain>``), built once per index. One LLM (`llm`, loaded on first use unless
    given) is shared by every domain's pipeline, and so is the rewrite cache (``rewrite_cache``: a JSONL file of query
    rewrites by task id, `LLMQueries`), so that each conversation is rewritten once."""

    def __init__(self, settings: Settings, index_prefix: str = "mtrag-", llm: Any = None, retriever: Any = None,
                 rewrite_cache: Path | None = None) -> None:
        self.settings = settings
        self.index_prefix = index_prefix
        self.retriever = retriever
        self.rewrite_cache = rewrite_cache
        self._llm = llm
        self._rewrites: Any = None
        self._pipelines: dict[str, Any] = {}
        self._explicit_index = "index" in settings.model_fields_set

    def llm(self) -> Any:
        if self._llm is None:
            from local_rag.llm import load_llm

            self._llm = load_llm(self.settings.llm, self.settings.models_dir)
        return self._llm

    def __call__(self, task: dict[str, Any]) -> Any:
        from local_rag.modes import make_pipeline
        from local_rag.mtrag import task_domain

        settings = self.settings
        index = settings.index if self._explicit_index else f"{self.index_prefix}{task_domain(task)}"
        if index not in self._pipelines:
            if self._rewrites is None and self.rewrite_cache is not None and settings.pipeline.rewrite:
                from local_rag.llm.pipeline import LLMQueries

                self._rewrites = LLMQueries(self.llm(), settings, cache=self.rewrite_cache)
            self._pipelines[index] = make_pipeline(settings.model_copy(update={"index": index}), llm=self.llm(),
                                                   retriever=self.retriever, rewrites=self._rewrites)
        return self._pipelines[index]


def pipeline_generator(
    settings: Settings, setting: Setting, index_prefix: str = "mtrag-", llm: Any = None, retriever: Any = None,
    rewrite_cache: Path | None = None,
) -> Generate:
    """``generate(task) -> {"text", "citations", "kind", "contexts"?}`` with the conversational pipeline.

    ``reference`` (Task B): the generator answers the task's conversation from its gold ``contexts`` only (no
    retrieval, no rerank). ``rag`` (Task C): the full pipeline of ``settings`` over the index of the task's domain
    (`TaskPipelines`), returning its passages (at most 10) as ``contexts``. One LLM is loaded and shared by every
    domain's pipeline (``llm``/``retriever``: prebuilt stages, e.g. for tests). ``rewrite_cache``: a JSONL file of
    query rewrites by task id (`LLMQueries`), shared with ``eval retrieval`` and with other runs, so that runs
    differing only in the prompt retrieve with the same rewrites, and each conversation is rewritten once.
    """
    from local_rag.evaluation.generation.recheck import prediction_of
    from local_rag.llm.generate import Generator
    from local_rag.mtrag import parse_conversation

    pipelines = TaskPipelines(settings, index_prefix, llm, retriever, rewrite_cache)
    state: dict[str, Generator] = {}

    def reference(task: dict[str, Any]) -> dict[str, Any]:
        conversation = parse_conversation(task.get("input"), where=f"task {task.get('task_id')}")
        hits = context_hits(task)
        if "generator" not in state:
            state["generator"] = Generator(pipelines.llm(), settings.generate)
        answer = state["generator"].answer(conversation, hits) if hits else Generator.idk(settings.generate)
        return prediction_of(answer)

    def rag(task: dict[str, Any]) -> dict[str, Any]:
        conversation = parse_conversation(task.get("input"), where=f"task {task.get('task_id')}")
        conversation.id = str(task.get("task_id") or "")
        result = pipelines(task).answer(conversation)
        contexts = [{"document_id": h.passage_id, "text": h.text, "title": h.title, "url": h.url, "score": h.score}
                    for h in result.passages[:10]]
        return prediction_of(result.answer) | {"contexts": contexts}

    return reference if setting == "reference" else rag

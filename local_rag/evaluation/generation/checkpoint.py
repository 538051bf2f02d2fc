"""Carry unfinished `local-rag eval generation` runs across machines, without MTRAG texts in the repository
(``scripts/gen_eval_checkpoint.py``).

A run folder (`runs/gen-<setting>-<profile>-<prompt>/`) is ignored by git, so a fresh checkout loses the hours of
generation and scoring it holds. `save` writes each generated task of a run to
`docs/benchmarks/gen-eval/<run>/answers.jsonl`: the task id, the answer, its other prediction fields (kind,
citations), the retrieved contexts as ids, titles, urls, scores and the sha256 of their text, and, once scored, the
metrics. The task texts and passage texts stay out. `restore` rebuilds the run's `predictions.jsonl` and
`scored.jsonl` from that file, the MTRAG task file and the chunks of the `mtrag-<domain>` indexes (each context's text
is found again by its sha256; a task whose contexts cannot all be found is left out, to be generated again).
It also carries the shared rewrite cache (`runs/llm-cache.jsonl`), so both prompts keep retrieving with the same
rewrites. Both commands only add what is missing, so they are safe to run again:

    .venv/bin/python scripts/gen_eval_checkpoint.py save      # before the machine goes away
    .venv/bin/python scripts/gen_eval_checkpoint.py restore   # on the fresh checkout, after building the indexes
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from local_rag.evaluation.generation.official import Setting, write_records

RAG_RUNS = [f"runs/gen-rag-cpu-qwen-{prompt}" for prompt in ("answer", "answer_plain")]
CACHE = "llm-cache.jsonl"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The complete JSON lines of ``path`` (a torn last line, left by an interrupted writer, is skipped)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.endswith("\n") and line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return out


def answer_line(record: dict[str, Any]) -> dict[str, Any]:
    """A prediction or scored record without the task's texts and the passages' texts."""
    prediction = dict((record.get("predictions") or [{}])[0])
    line: dict[str, Any] = {"task_id": record["task_id"], "text": prediction.pop("text", "")}
    line["prediction"] = prediction
    line["contexts"] = [{k: v for k, v in c.items() if k != "text"} | {"text_sha256": sha256(str(c.get("text", "")))}
                        for c in record.get("contexts") or []]
    for key in ("metrics", "local_rag"):
        if key in record:
            line[key] = record[key]
    return line


def save(run: Path, dest: Path) -> int:
    """Write ``dest/answers.jsonl`` from the run's scored and generated tasks (scored first wins); their number."""
    by_id: dict[str, dict[str, Any]] = {}
    for record in read_lines(run / "scored.jsonl") + read_lines(run / "predictions.jsonl"):
        by_id.setdefault(str(record["task_id"]), answer_line(record))
    if by_id:
        write_records(dest / "answers.jsonl", list(by_id.values()))
    return len(by_id)


def save_cache(cache: Path, dest: Path) -> int:
    """Add the rewrite-cache lines not yet in ``dest``; their number."""
    kept = read_lines(dest)
    keys = {line["key"] for line in kept}
    new = [line for line in read_lines(cache) if line["key"] not in keys]
    if new:
        write_records(dest, kept + new)
    return len(new)


class ChunkTexts:
    """Chunk texts of the ``<prefix><domain>`` indexes, by passage id, loaded once a domain."""

    def __init__(self, indexes: Path, prefix: str) -> None:
        self.indexes, self.prefix = indexes, prefix
        self.by_domain: dict[str, dict[str, list[str]]] = {}

    def find(self, domain: str, passage_id: str, digest: str) -> str | None:
        if domain not in self.by_domain:
            from local_rag.index.folder import read_chunks

            texts: dict[str, list[str]] = {}
            for chunk in read_chunks(self.indexes / f"{self.prefix}{domain}"):
                texts.setdefault(chunk.passage_id, []).append(chunk.text)
            self.by_domain[domain] = texts
        return next((t for t in self.by_domain[domain].get(passage_id, []) if sha256(t) == digest), None)


def restore(dest: Path, run: Path, tasks: dict[str, dict[str, Any]], chunks: ChunkTexts) -> tuple[int, int, list[str]] | None:
    """Add to the run's files the tasks of ``dest/answers.jsonl`` they lack: (predictions added, scored added,
    task ids left out); None when there is no checkpoint. The Task B files predate checkpoints: their lines hold the
    answer text and metrics but no ``prediction`` (kind, citations), so a Task B run comes back without citations."""
    from local_rag.evaluation.generation.official import prediction_record
    from local_rag.mtrag import task_domain

    setting: Setting = "reference" if run.name.startswith("gen-reference-") else "rag"  # judged-*, gen-test-*: rag
    lines = read_lines(dest / "answers.jsonl")
    if not lines or (setting == "rag" and "prediction" not in lines[0]):
        return None
    have = {"predictions.jsonl": {str(r["task_id"]) for r in read_lines(run / "predictions.jsonl")},
            "scored.jsonl": {str(r["task_id"]) for r in read_lines(run / "scored.jsonl")}}
    new: dict[str, list[dict[str, Any]]] = {"predictions.jsonl": [], "scored.jsonl": []}
    left_out = []
    for line in lines:
        task_id = str(line["task_id"])
        task = tasks.get(task_id)
        if task is None:
            left_out.append(task_id)
            continue
        contexts = None
        if setting == "rag":
            contexts, domain = [], task_domain(task)
            for c in line["contexts"]:
                text = chunks.find(domain, str(c["document_id"]), c["text_sha256"])
                if text is None:
                    break
                # the original key order: document_id, text, then title, url, score
                rest = {k: v for k, v in c.items() if k not in ("document_id", "text_sha256")}
                contexts.append({"document_id": c["document_id"], "text": text, **rest})
            if len(contexts) < len(line["contexts"]):
                left_out.append(task_id)
                continue
        record = prediction_record(task, {"text": line["text"], **line.get("prediction", {})}, setting, contexts)
        if task_id not in have["predictions.jsonl"]:
            new["predictions.jsonl"].append(record)
        if "metrics" in line and task_id not in have["scored.jsonl"]:
            new["scored.jsonl"].append(record | {"metrics": line["metrics"], "local_rag": line["local_rag"]})
    run.mkdir(parents=True, exist_ok=True)
    for name, records in new.items():
        if records:
            with (run / name).open("a", encoding="utf-8") as fh:
                fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    if not left_out:  # a finished run comes back finished: `eval generation --reuse` reads its scores.json
        for name in ("scores.json", "scores.md"):
            if (dest / name).exists() and not (run / name).exists():
                shutil.copyfile(dest / name, run / name)
    return len(new["predictions.jsonl"]), len(new["scored.jsonl"]), left_out


def save_runs(root: Path, runs: list[str], dest: Path) -> None:
    """`save` each run folder (relative to the checkout ``root``) and the shared rewrite cache into ``dest``."""
    for name in runs:
        run = root / name
        print(f"{run.name}: {save(run, dest / run.name)} tasks saved")
    print(f"{CACHE}: {save_cache(root / 'runs' / CACHE, dest / CACHE)} rewrites added")


def restore_runs(root: Path, runs: list[str], dest: Path, tasks_file: Path | None, indexes: Path, index_prefix: str) -> None:
    """`restore` each run folder (relative to the checkout ``root``) and the rewrite cache from ``dest``."""
    from local_rag.evaluation.generation.official import read_records
    from local_rag.mtrag import default_mtrag_dir

    tasks_file = tasks_file or default_mtrag_dir() / "generation_tasks" / "mtrag_tasks.jsonl"
    tasks = {str(t["task_id"]): t for t in read_records(tasks_file)}
    chunks = ChunkTexts(indexes, index_prefix)
    added = save_cache(dest / CACHE, root / "runs" / CACHE)
    print(f"{CACHE}: {added} rewrites restored")
    for name in runs:
        run = root / name
        restored = restore(dest / run.name, run, tasks, chunks)
        if restored is None:
            print(f"{run.name}: no checkpoint to restore")
            continue
        predicted, scored, left_out = restored
        print(f"{run.name}: {predicted} predictions and {scored} scores restored"
              + (f"; left out (to generate again): {', '.join(left_out)}" if left_out else ""))

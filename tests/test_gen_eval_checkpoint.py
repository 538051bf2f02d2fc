"""local_rag.evaluation.generation.checkpoint (scripts/gen_eval_checkpoint.py): a Task C run saved without MTRAG texts comes back byte for byte from a real index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from local_rag.evaluation.generation import checkpoint as script
from local_rag.evaluation.generation.runner import generate_predictions, pipeline_generator, score_predictions
from local_rag.index import build_index, open_index
from local_rag.retrieve import HybridRetriever
from local_rag.settings import Settings

from .conftest import HashEmbedder
from .llm_fixtures import ScriptedLLM

QUESTIONS = ["how long does a cat sleep", "what does a dog fetch", "what is reciprocal rank fusion"]


def task(i: int) -> dict[str, Any]:
    return {"task_id": f"conv{i}<::>1", "Collection": "mt-rag-clapnq-elser-512-100-20240503", "answerability": ["ANSWERABLE"],
            "input": [{"speaker": "user", "text": QUESTIONS[i]}],
            "targets": [{"speaker": "agent", "text": "SECRET REFERENCE"}]}


class MetricScorer:
    def score(self, record: dict[str, Any]) -> dict[str, Any]:
        return record | {"metrics": {"RB_agg": [0.5]}, "local_rag": {"domain": "clapnq", "judged": True}}


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_saved_rag_run_is_restored_exactly_and_only_once(
    tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path
) -> None:
    settings = fake_settings.model_copy(update={"index": "mtrag-clapnq"})
    build_index(settings, corpus_file, embedder=hash_embedder, progress=False)  # several chunks a passage
    retriever = HybridRetriever(open_index(settings), settings, hash_embedder)

    def reply(messages, schema):  # type: ignore[no-untyped-def]
        return '{"query": "cat sleep hours"}' if schema is not None else "It is in the first passage [1]."

    generate = pipeline_generator(settings, "rag", llm=ScriptedLLM(reply), retriever=retriever)
    tasks = [task(i) for i in range(3)]
    run = tmp_path / "runs" / "gen-rag-cpu-qwen-answer"
    records = generate_predictions(tasks, generate, "rag", run / "predictions.jsonl", progress=False)
    score_predictions(records[:2], MetricScorer(), run / "scored.jsonl", progress=False)
    assert all(r["contexts"] for r in records)

    dest = tmp_path / "docs" / run.name
    assert script.save(run, dest) == 3
    saved = (dest / "answers.jsonl").read_text(encoding="utf-8")
    passages = [c["text"] for r in records for c in r["contexts"]]
    assert "SECRET" not in saved and not any(p in saved for p in passages) and QUESTIONS[0] not in saved

    chunks = script.ChunkTexts(Path(settings.indexes_dir), "mtrag-")
    by_id = {t["task_id"]: t for t in tasks}
    fresh = tmp_path / "fresh" / run.name
    assert script.restore(dest, fresh, by_id, chunks) == (3, 2, [])
    for name in ("predictions.jsonl", "scored.jsonl"):
        assert lines(fresh / name) == lines(run / name)
    assert script.restore(dest, fresh, by_id, chunks) == (0, 0, [])  # nothing twice
    assert script.restore(tmp_path / "none", fresh, by_id, chunks) is None
    judged = tmp_path / "fresh" / "judged-anything"  # any run not named gen-reference-* is a Task C run
    assert script.restore(dest, judged, by_id, chunks) == (3, 2, [])
    assert lines(judged / "predictions.jsonl") == lines(run / "predictions.jsonl")
    assert not (judged / "scores.json").exists()  # the checkpoint of an unfinished run: no scores.json to bring

    # the checkpoint of a finished run carries its scores.json: restored whole, `eval generation --reuse` takes it
    from local_rag.evaluation.generation.runner import SCORED_WITH, reusable_scores

    info = dict.fromkeys(SCORED_WITH, "same")
    (dest / "scores.json").write_text(json.dumps({"info": info}), encoding="utf-8")
    finished = tmp_path / "fresh" / "judged-finished"
    assert script.restore(dest, finished, by_id, chunks) == (3, 2, [])
    assert set(reusable_scores(finished, info)) == {r["task_id"] for r in records[:2]}

    answers = lines(dest / "answers.jsonl")
    answers[2]["contexts"][0]["text_sha256"] = "0" * 64  # a passage the index no longer holds
    (dest / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    other = tmp_path / "other" / run.name
    assert script.restore(dest, other, by_id, chunks) == (2, 2, [tasks[2]["task_id"]])
    assert not (other / "scores.json").exists()  # a run that lost tasks is not finished here


def test_the_rewrite_cache_is_merged_by_key(tmp_path: Path) -> None:
    cache, dest = tmp_path / "runs" / "llm-cache.jsonl", tmp_path / "docs" / "llm-cache.jsonl"
    cache.parent.mkdir()
    cache.write_text('{"key": "a", "queries": {"rewrite": ["q1"]}}\n{"key": "b", "queries": {}}\n{"key": "c", "que')
    assert script.save_cache(cache, dest) == 2  # the torn line of a running writer is left for later
    assert script.save_cache(cache, dest) == 0
    assert [line["key"] for line in lines(dest)] == ["a", "b"]


def test_a_task_b_run_saved_before_checkpoints_comes_back_from_text_and_metrics(tmp_path: Path) -> None:
    t = task(0) | {"contexts": [{"document_id": "d1", "text": "Cats sleep 16 hours.", "title": "Cat"}]}
    dest = tmp_path / "gen-reference-cpu-qwen-answer_plain"
    dest.mkdir()
    old_line = {"task_id": t["task_id"], "text": "Cats sleep 16 hours.", "metrics": {"RB_agg": [0.5]},
                "local_rag": {"domain": "clapnq", "judged": True}}
    (dest / "answers.jsonl").write_text(json.dumps(old_line) + "\n", encoding="utf-8")
    run = tmp_path / "runs" / dest.name
    assert script.restore(dest, run, {t["task_id"]: t}, None) == (1, 1, [])
    scored = lines(run / "scored.jsonl")[0]
    assert scored["predictions"] == [{"text": "Cats sleep 16 hours."}] and [c["text"] for c in scored["contexts"]] == ["Cats sleep 16 hours."]
    assert scored["metrics"] == old_line["metrics"] and lines(run / "predictions.jsonl")[0]["task_id"] == t["task_id"]

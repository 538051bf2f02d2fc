"""Containment examples (`local_rag.train.containment`, `local-rag train containment`): the sentence that carries the
reference answer against the passage's others, or a gold passage with and without it, on fixtures, end to end on an
MTRAG-shaped folder, and a tiny real model trained on them that scores a passage by its best sentence."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from local_rag.text import split_sentences
from local_rag.train.containment import ablate, answer_sentence_pairs, answer_sentences, containment_examples
from local_rag.train.reranker import RerankerTraining, _dataset

from .conftest import needs_minilm, write_jsonl
from .test_cli import assert_clean_error, run
from .test_train import _models
from .test_train_cli import _mtrag

PASSAGE = ("Hubble Space Telescope\nThe telescope was launched in 1990. It orbits Earth. Its mirror is 2.4 metres "
           "across and was ground by Perkin-Elmer. It has taken over a million pictures. NASA runs it with ESA.")


def _task(conversation: str, turn: int, answerability: str = "ANSWERABLE", answer: str | None = None) -> dict:
    return {"conversation_id": conversation, "task_id": f"{conversation}<::>{turn}", "domain": "clapnq",
            "input": [{"speaker": "user", "text": "hi"}, {"speaker": "agent", "text": "hello"},
                      {"speaker": "user", "text": "How big is the mirror?"}],
            "contexts": [{"document_id": "d7-0", "title": "Hubble Space Telescope", "text": PASSAGE.split("\n", 1)[1]}],
            "targets": [{"speaker": "agent", "text": answer or "The mirror is 2.4 metres across, ground by Perkin-Elmer."}],
            "answerability": [answerability]}


def test_the_negative_loses_the_answer_sentence_and_the_positive_as_many_others() -> None:
    sentences = PASSAGE.split("\n", 1)[1].split(". ")
    carry, held, cover = answer_sentences(sentences, "How big is the mirror?", "2.4 metres, by Perkin-Elmer.")
    assert carry == [2] and held == cover == 1.0
    cut = ablate(PASSAGE, "How big is the mirror?", "The mirror is 2.4 metres across, ground by Perkin-Elmer.",
                 rng=random.Random(3))
    assert cut is not None and cut.removed == 1
    assert cut.without.startswith("Hubble Space Telescope\n") and cut.answer.startswith("Hubble Space Telescope\n")
    assert "Perkin-Elmer" not in cut.without and "Perkin-Elmer" in cut.answer
    assert cut.answer.count(". ") == cut.without.count(". ")  # one sentence removed from each
    assert ablate(PASSAGE, "Who built it?", "Lockheed built the spacecraft body in Sunnyvale.") is None  # not held
    assert ablate("One. Two.", "q", "Two.") is None  # too short to cut a like number of other sentences


def test_examples_come_from_answerable_tasks_of_the_split_only() -> None:
    pytest.importorskip("datasets", reason="the train extra is not installed")
    tasks = [_task("c1", 3), _task("c1", 4, "UNANSWERABLE"), _task("c2", 3, "PARTIAL"), _task("c3", 3),
             {**_task("c1", 5), "contexts": ["not a dict"]}]
    examples = containment_examples(tasks, {"c1", "c2"})
    assert [(e.task_id, e.mode, e.query) for e in examples] == [("c1<::>3", "contain-lastturn", "How big is the mirror?")]
    ex = examples[0]
    assert ex.positive_id == "d7-0" and ex.negative_ids == ["d7-0#without-answer"] and "Perkin" not in ex.negatives[0]
    rewrites = containment_examples(tasks, {"c1"}, {"c1<::>3": {"rewrite": "How big is Hubble's mirror?", "lastturn": "x"}})
    assert [e.mode for e in rewrites] == ["contain-lastturn", "contain-rewrite"]
    assert containment_examples(tasks, {"c1"}) == containment_examples(tasks, {"c1"})  # seeded
    rows = _dataset(examples, RerankerTraining(loss="bce", negatives=1)).to_dict()
    assert rows["label"] == [1.0, 0.0] and rows["passage"] == [ex.positive, ex.negatives[0]]


def test_mined_passages_give_sentences_of_other_documents_without_the_answer() -> None:
    mined = ["James Webb Space Telescope\nIts mirror is 6.5 metres wide. It was launched in 2021.",
             "Mirror making\nThe Hubble mirror was ground by Perkin-Elmer to 2.4 metres."]  # holds the answer: never
    found = answer_sentence_pairs(PASSAGE, "How big is the mirror?", "The mirror is 2.4 metres across, ground by "
                                  "Perkin-Elmer.", negatives=1, mined=mined, mined_negatives=2)
    assert found is not None
    positive, own, other = found
    assert positive.endswith("ground by Perkin-Elmer.") and len(own) == 1 and "Perkin" not in own[0]
    assert other == ["James Webb Space Telescope\nIts mirror is 6.5 metres wide.",  # shares "mirror": first
                     "James Webb Space Telescope\nIt was launched in 2021."]
    tasks = [_task("c1", 3)]
    examples = containment_examples(tasks, {"c1"}, unit="sentence", negatives=1,
                                    mined={("c1<::>3", "lastturn"): mined}, mined_negatives=1)
    assert examples[0].negative_ids == ["d7-0#other", "mined"] and examples[0].negatives[1] == other[0]


def test_train_containment_cli_and_its_errors(tmp_path: Path) -> None:
    mtrag = _mtrag(tmp_path)
    env = {"LOCAL_RAG_MTRAG_DIR": str(mtrag)}
    out = tmp_path / "contain.jsonl"
    assert_clean_error(run("train", "containment", "--domains", "toy", "--out", str(out), cwd=tmp_path, env=env), 2,
                       "file not found")
    generation = mtrag / "generation_tasks" / "mtrag_tasks.jsonl"
    generation.parent.mkdir()
    toy = [{**_task("c1", 1), "domain": None, "Collection": "x"}]  # a domain it cannot name is a clear error too
    write_jsonl(generation, toy)
    assert_clean_error(run("train", "containment", "--domains", "toy", "--out", str(out), cwd=tmp_path, env=env), 2,
                       "unknown domain")
    write_jsonl(generation, [_task("c1", 1), _task("c2", 2, "UNANSWERABLE"), _task("c3", 1)])
    result = run("train", "containment", "--domains", "toy", "--unit", "passage", "--out", str(out), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    examples = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["task_id"], e["mode"], e["query"]) for e in examples] == [
        ("c1<::>1", "contain-lastturn", "what is bm25"), ("c1<::>1", "contain-rewrite", "what is bm25")]
    assert {e["negative_ids"][0] for e in examples} == {"d7-0#without-answer"}
    assert json.loads(Path(str(out) + ".info.json").read_text())["examples"] == {"contain-lastturn": 1, "contain-rewrite": 1}
    mined = tmp_path / "mined.jsonl"
    write_jsonl(mined, [{"task_id": "c1<::>1", "domain": "toy", "mode": "rewrite", "query": "what is bm25",
                         "positive": "", "positive_id": "", "negatives": ["Other\nA second sentence. And a third."],
                         "negative_ids": ["o1"]}])
    result = run("train", "containment", "--domains", "toy", "--unit", "sentence", "--negatives", "1", "--mined",
                 str(mined), "--mined-negatives", "2", "--out", str(out), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    examples = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["negative_ids"] for e in examples] == [["d7-0#other"], ["d7-0#other", "mined", "mined"]]
    assert json.loads(Path(str(out) + ".info.json").read_text())["mined"]["negatives"] == 2
    write_jsonl(generation, [_task("c2", 2, "UNANSWERABLE")])
    assert_clean_error(run("train", "containment", "--domains", "toy", "--out", str(tmp_path / "none.jsonl"),
                           cwd=tmp_path, env=env), 2, "no containment pair")
    assert not (tmp_path / "none.jsonl").exists()


@needs_minilm
def test_a_tiny_sentence_containment_model_trains_and_scores_passages_by_sentence(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("datasets", reason="the train extra is not installed")
    from local_rag.records import Hit
    from local_rag.rerank import load_reranker
    from local_rag.settings import RerankerConfig
    from local_rag.train.reranker import train_reranker

    tasks = [_task(f"c{i}", 1) for i in range(4)]
    examples = containment_examples(tasks, {f"c{i}" for i in range(4)}, unit="sentence")
    assert len(examples) == 4 and examples[0].positive.endswith("ground by Perkin-Elmer.")
    assert all("Perkin" not in n for e in examples for n in e.negatives) and examples[0].positive_id == "d7-0#answer"
    models = _models(tmp_path)
    cfg = RerankerTraining(loss="bce", max_steps=2, batch_size=8, max_length=64, negatives=3, learning_rate=1e-4)
    train_reranker(examples, "all-MiniLM-L6-v2", "contain-tiny", models, cfg, {"file": "fixture"}, progress=False)
    config = RerankerConfig(backend="sentence-transformers", model="contain-tiny", device="cpu", max_length=64)
    sentence, passage = (load_reranker(config.model_copy(update={"unit": u}), models) for u in ("sentence", "passage"))
    hit = Hit("d7-0", 1.0, 1, title="Hubble Space Telescope", text=PASSAGE.split("\n", 1)[1])
    best = sentence.score_hits("How big is the mirror?", [hit])
    each = passage.score("How big is the mirror?", [f"Hubble Space Telescope\n{s}" for s in split_sentences(hit.text)])
    assert best == pytest.approx([max(each)], abs=1e-5) and math.isfinite(best[0])

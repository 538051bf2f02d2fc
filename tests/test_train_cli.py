"""``local-rag train data`` end to end on an MTRAG-shaped folder (real bm25s + FAISS index, real MiniLM): only the
train split's conversations, gold never a negative; an index built with another embedder is one line, exit 3."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .conftest import CORPUS, MODELS, needs_minilm, write_jsonl
from .test_cli import assert_clean_error, run


def _mtrag(root: Path) -> Path:
    mtrag = root / "mtrag"
    (mtrag / "splits").mkdir(parents=True)
    (mtrag / "splits" / "mtrag_train_conversations.txt").write_text("c1\nc2\n")
    (mtrag / "splits" / "mtrag_test_conversations.txt").write_text("c3\n")
    tasks = mtrag / "retrieval_tasks" / "toy"
    (tasks / "qrels").mkdir(parents=True)
    queries = {"c1<::>1": "what is bm25", "c2<::>2": "how do cats spend the day", "c3<::>1": "tell me about dogs"}
    for mode in ("lastturn", "rewrite"):
        write_jsonl(tasks / f"toy_{mode}.jsonl", [{"_id": k, "text": f"|user|: {v}"} for k, v in queries.items()])
    (tasks / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nc1<::>1\td3-0\t1\nc2<::>2\td1-1\t1\nc3<::>1\td2-0\t1\n")
    (mtrag / "corpora" / "pool").mkdir(parents=True)
    write_jsonl(mtrag / "corpora" / "pool" / "toy.jsonl", CORPUS)
    return mtrag


@needs_minilm
def test_train_data_uses_the_train_split_and_refuses_another_embedders_index(tmp_path: Path) -> None:
    mtrag = _mtrag(tmp_path)
    env = {"LOCAL_RAG_MTRAG_DIR": str(mtrag), "LOCAL_RAG_MODELS_DIR": str(MODELS)}
    assert run("index", "build", str(mtrag / "corpora" / "pool" / "toy.jsonl"), "--index", "mtrag-toy", cwd=tmp_path, env=env).returncode == 0
    out = tmp_path / "ex.jsonl"
    result = run("train", "data", "--domains", "toy", "--mode", "lastturn,rewrite", "--negatives", "3", "--out", str(out), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    examples = [json.loads(line) for line in out.read_text().splitlines()]
    assert {e["task_id"] for e in examples} == {"c1<::>1", "c2<::>2"} and len(examples) == 4  # no test conversation
    assert all(e["positive_id"] not in e["negative_ids"] and len(e["negative_ids"]) == 3 for e in examples)
    assert all(not n.startswith("d1-") for e in examples if e["positive_id"] == "d1-1" for n in e["negative_ids"])
    assert json.loads(Path(str(out) + ".info.json").read_text())["split"] == "train"

    other = tmp_path / "other-embedder"
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", other)
    (other / "README.md").write_text("another model\n")
    index_before = sorted((p.name, p.stat().st_size) for p in (tmp_path / "indexes" / "mtrag-toy").iterdir())
    result = run("train", "data", "--domains", "toy", "--out", str(tmp_path / "x.jsonl"), cwd=tmp_path,
                 env={**env, "LOCAL_RAG_EMBEDDER__MODEL": str(other)})
    assert_clean_error(result, 3, "")
    assert not (tmp_path / "x.jsonl").exists()
    assert sorted((p.name, p.stat().st_size) for p in (tmp_path / "indexes" / "mtrag-toy").iterdir()) == index_before


def test_train_commands_refuse_a_domain_typo_or_bad_sizes_before_any_domain_runs(tmp_path: Path) -> None:
    """Session 50: `train ceiling --domains govt,clapnp` ran govt and then said "no index at mtrag-clapnp" (or
    `decider` dropped the domain without a word); `--depths 0,abc` was a ValueError traceback; `--negatives -1`
    sliced off a negative. No index is built here: each refusal comes before any index or model is opened."""
    mtrag = _mtrag(tmp_path)
    env = {"LOCAL_RAG_MTRAG_DIR": str(mtrag)}
    there = f"--domains: no task folder for 'toyy' in {mtrag / 'retrieval_tasks'} (there: toy)"
    for command in (["ceiling"], ["containment", "--out", "c.jsonl"], ["data", "--out", "d.jsonl"],
                    ["fusion", "--name", "f"], ["decider", "--report", str(tmp_path / "r")]):
        assert_clean_error(run("train", *command, "--domains", "toy,toyy", cwd=tmp_path, env=env), 2, there)
    assert_clean_error(run("train", "ceiling", "--domains", "toy", cwd=tmp_path, env=env), 3, "no index at")
    assert_clean_error(run("train", "ceiling", "--domains", "toy", "--depths", "0,abc", cwd=tmp_path, env=env), 2,
                       "--depths: expected whole numbers >= 1, comma-separated (got '0,abc')")
    assert_clean_error(run("train", "latency", "--reranker", "nothing-here", "--counts", "10,-5", cwd=tmp_path, env=env),
                       2, "--counts: expected whole numbers >= 1")
    result = run("train", "data", "--domains", "toy", "--negatives", "-1", "--out", "d.jsonl", cwd=tmp_path, env=env)
    assert result.returncode == 2 and "'--negatives': -1 is not in the range x>=0" in result.stderr
    assert not list(tmp_path.glob("*.jsonl")) and not (tmp_path / "r").exists()


def test_fusion_reads_the_questions_mode_its_help_offers_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    """Session 50: `train fusion --mode lastturn,questions` stopped on "query mode 'questions' is not available" (only
    the lastturn task file was read); `--mode lastrun` is refused before any index opens."""
    import pytest

    from local_rag.errors import BadInputError
    from local_rag.settings import Settings
    from local_rag.train.fusion import split_turns, train_fusion

    mtrag = _mtrag(tmp_path)
    tasks = mtrag / "retrieval_tasks" / "toy"
    write_jsonl(tasks / "toy_questions.jsonl", [{"_id": "c1<::>1", "text": "|user|: hi\n|user|: what is bm25"},
                                                {"_id": "c2<::>2", "text": "|user|: how do cats spend the day"}])
    (mtrag / "generation_tasks").mkdir()
    write_jsonl(mtrag / "generation_tasks" / "mtrag_tasks.jsonl",
                [{"task_id": "c1<::>1", "input": [{"speaker": "user", "text": "what is bm25"}]}])
    turns = split_turns(mtrag, "train", "toy", ["lastturn", "questions"], {})
    assert [(t[0], [(q.mode, q.text) for q in t[2]]) for t in turns] == [
        ("c1<::>1", [("lastturn", "what is bm25"), ("questions", "hi\nwhat is bm25")]),
        ("c2<::>2", [("lastturn", "how do cats spend the day"), ("questions", "how do cats spend the day")])]
    with pytest.raises(BadInputError, match=r"^--mode: unknown 'lastrun'; valid: lastturn, lasttwo, lastanswer, "):
        train_fusion(Settings(), mtrag, "f", ["toy"], ["lastturn", "lastrun"], "none-", 10, {}, tmp_path / "w")


def test_training_commands_refuse_settings_no_run_can_train_with_before_any_work(tmp_path: Path) -> None:
    """Session 51: `train adapt --batch-size 0` wrote its queries and then died in torch's sampler (a traceback);
    `--epochs 0` trained no step and left the base model installed as "probe-adapt", blaming too few queries;
    `--max-steps 0` (help: "> 0") trained without a limit; `train generator --rank 0` would fail in PEFT after
    every task's retrieval and rewrite. Each is one line now, before any index, model or data is touched."""
    import pytest

    from local_rag.errors import BadInputError
    from local_rag.train.adapt import AdaptConfig
    from local_rag.train.embedder import EmbedderTraining
    from local_rag.train.generator import GeneratorTraining
    from local_rag.train.reranker import RerankerTraining

    data = write_jsonl(tmp_path / "ex.jsonl", [{"task_id": "c1", "domain": "d", "mode": "lastturn", "query": "q",
                                                "positive": "p", "positive_id": "x-1", "negatives": ["n"],
                                                "negative_ids": ["y-1"]}])
    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text("{}")  # a transformers folder as --base: no GGUF needed to reach the check
    env = {"LOCAL_RAG_MTRAG_DIR": str(_mtrag(tmp_path))}
    cases = [
        (["adapt", "--index", "demo", "--batch-size", "0"], "--batch-size must be at least 1, got 0"),
        (["adapt", "--index", "demo", "--epochs", "0"], "--epochs must be above 0, got 0.0"),
        (["adapt", "--index", "demo", "--max-steps", "0"], "--max-steps must be at least 1 (or -1, no limit), got 0"),
        (["reranker", "--data", str(data), "--name", "r", "--negatives", "-1"], "--negatives must be at least 0, got -1"),
        (["reranker", "--data", str(data), "--name", "r", "--save-steps", "0"], "--save-steps must be at least 1"),
        (["embedder", "--data", str(data), "--name", "e", "--lr", "0"], "--lr must be above 0, got 0.0"),
        (["embedder", "--data", str(data), "--name", "e", "--epochs", "nan"], "--epochs must be above 0, got nan"),
        (["generator", "--name", "g", "--base", str(base), "--rank", "0"], "--rank must be at least 1, got 0"),
    ]
    for args, message in cases:
        assert_clean_error(run("train", *args, cwd=tmp_path, env=env), 2, message)
    assert not (tmp_path / "models").exists() and not (tmp_path / "runs").exists()
    for args in (["generator", "--name", "g", "--hold-out", "-1"], ["decider", "--synthetic", "-1"],
                 ["inspect", "--data", str(data), "--negatives", "0"]):
        result = run("train", *args, cwd=tmp_path, env=env)
        assert result.returncode == 2 and "is not in the range" in result.stderr, result.stderr
    # the library's records refuse the same (the Python API), and their defaults stand
    for record in (AdaptConfig, EmbedderTraining, RerankerTraining):
        record()
        with pytest.raises(BadInputError, match=r"^--batch-size must be at least 1, got -2$"):
            record(batch_size=-2)
    with pytest.raises(BadInputError, match=r"^--grad-accum must be at least 1, got 0$"):
        GeneratorTraining(model="m.gguf", out="o", grad_accum=0)
    with pytest.raises(BadInputError, match=r"^--epochs must be above 0, got inf$"):
        GeneratorTraining(model="m.gguf", out="o", epochs=float("inf"))

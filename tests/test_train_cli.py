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

"""Index folders with real bm25s and FAISS (a deterministic hash embedder stands in for the model here)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from local_rag.errors import BadInputError, IndexError_
from local_rag.index import add_documents, build_index, open_index, remove_documents
from local_rag.index.verify import verify_index
from local_rag.records import Query
from local_rag.retrieve import HybridRetriever
from local_rag.settings import Settings

from .conftest import CORPUS, HashEmbedder, write_jsonl

QUESTIONS = ["how does reciprocal rank fusion merge lists", "dense vector similarity search library", "cats sleep"]


def results(settings: Settings, embedder: HashEmbedder) -> list[list[tuple[str, float]]]:
    folder = open_index(settings, model_checksum=embedder.checksum)
    hybrid = HybridRetriever(folder, settings, embedder)
    return [[(h.passage_id, round(h.score, 6)) for h in hybrid.search([Query(q)], top_k=5)] for q in QUESTIONS]


def test_build_open_search(fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    manifest = build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    assert manifest.passages == len(CORPUS) and manifest.chunks > len(CORPUS)  # the long texts were split (12 tokens)
    assert manifest.dense["dimension"] == 64 and manifest.dense["factory"] == "auto" and manifest.dense["faiss_factory"] == "Flat"
    assert manifest.chunker == {"size": 12, "overlap": 3, "tokenizer": "whitespace", "header": "title+section"}
    top = results(fake_settings, hash_embedder)
    assert top[0][0][0] == "d5-0" and top[1][0][0] == "d4-0"
    for ranked in top:
        assert len({pid for pid, _ in ranked}) == len(ranked)  # passages, not chunks
    assert verify_index(fake_settings.index_dir) == []


def test_incremental_add_and_remove_equal_a_fresh_build(tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder):
    first = write_jsonl(tmp_path / "first.jsonl", CORPUS[:3])
    rest = write_jsonl(tmp_path / "rest.jsonl", CORPUS[3:])
    everything = write_jsonl(tmp_path / "all.jsonl", CORPUS)
    build_index(fake_settings, everything, embedder=hash_embedder, progress=False)
    fresh = results(fake_settings, hash_embedder)
    fresh_hash = json.loads((fake_settings.index_dir / "manifest.json").read_text())["corpus_hash"]

    build_index(fake_settings, first, embedder=hash_embedder, progress=False)
    hash_embedder.calls = 0
    add_documents(fake_settings, rest, embedder=hash_embedder, progress=False)
    n_new_chunks = sum(1 for line in (fake_settings.index_dir / "chunks.jsonl").open() if json.loads(line)["passage_id"] in {r["_id"] for r in CORPUS[3:]})
    assert hash_embedder.calls == n_new_chunks  # only the new passages were embedded
    assert results(fake_settings, hash_embedder) == fresh
    manifest = json.loads((fake_settings.index_dir / "manifest.json").read_text())
    assert manifest["corpus_hash"] == fresh_hash and manifest["history"][-1]["action"] == "add"

    remove_documents(fake_settings, [r["_id"] for r in CORPUS[3:]])
    build_index(fake_settings.model_copy(update={"index": "small"}), first, embedder=hash_embedder, progress=False)
    small = fake_settings.model_copy(update={"index": "small"})
    assert results(fake_settings, hash_embedder) == results(small, hash_embedder)
    assert verify_index(fake_settings.index_dir) == []


def test_add_refuses_existing_ids_unless_replace(tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    update = write_jsonl(tmp_path / "u.jsonl", [{**CORPUS[0], "text": "Cats now bark loudly like dogs."}])
    with pytest.raises(BadInputError, match="already in the index"):
        add_documents(fake_settings, update, embedder=hash_embedder, progress=False)
    add_documents(fake_settings, update, embedder=hash_embedder, replace=True, progress=False)
    texts = [json.loads(line)["text"] for line in (fake_settings.index_dir / "chunks.jsonl").open()]
    assert any("bark loudly" in t for t in texts) and not any("purr" in t for t in texts)


def test_remove_by_doc_and_bad_ids(fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    manifest = remove_documents(fake_settings, ["d1"], by="doc")
    assert manifest.passages == len(CORPUS) - 2
    with pytest.raises(BadInputError, match="not in the index"):
        remove_documents(fake_settings, ["nope"])


def test_failed_build_leaves_previous_index_intact(tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    before = results(fake_settings, hash_embedder)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(CORPUS[0]) + "\n{broken\n")
    with pytest.raises(BadInputError):
        build_index(fake_settings, bad, embedder=hash_embedder, progress=False)

    class Exploding(HashEmbedder):
        def embed_batch(self, texts, kind):  # type: ignore[no-untyped-def]
            raise KeyboardInterrupt  # an interrupted build

    with pytest.raises(KeyboardInterrupt):
        build_index(fake_settings, write_jsonl(tmp_path / "ok.jsonl", CORPUS[:2]), embedder=Exploding(fake_settings.embedder), progress=False)
    assert results(fake_settings, hash_embedder) == before
    # no temporary folders left (the lock files .test.lock and .test.swap stay)
    assert sorted(p.name for p in fake_settings.indexes_dir.iterdir()) == [".test.lock", ".test.swap", "test"]


def test_mismatched_settings_are_refused_with_a_rebuild_hint(fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    cases = [
        {"chunker": fake_settings.chunker.model_copy(update={"size": 20})},
        {"sparse": fake_settings.sparse.model_copy(update={"k1": 1.5})},
        {"embedder": fake_settings.embedder.model_copy(update={"model": "bge-m3", "backend": "bge-m3"})},
        {"dense": fake_settings.dense.model_copy(update={"factory": "HNSW32"})},
    ]
    for update in cases:
        with pytest.raises(IndexError_, match="rebuild it with `local-rag index build"):
            open_index(fake_settings.model_copy(update=update))
    with pytest.raises(IndexError_, match="checksum differs"):
        open_index(fake_settings, model_checksum="another-model-file")


def test_corrupt_or_missing_index(fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    with pytest.raises(IndexError_, match="no index at"):
        open_index(fake_settings)
    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    folder = fake_settings.index_dir
    (folder / "dense" / "faiss.index").write_bytes(b"garbage")
    with pytest.raises(IndexError_, match="truncated or replaced"):  # the load check sees the size first
        open_index(fake_settings)
    assert any("unreadable" in p for p in verify_index(folder))
    assert any("faiss.index" in p for p in verify_index(folder))
    (folder / "manifest.json").write_text("{not json")
    with pytest.raises(IndexError_, match="corrupt"):
        open_index(fake_settings)


@pytest.mark.parametrize("factory", ["HNSW16", "IVF4,Flat"])
def test_other_faiss_factories(tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path, factory: str):
    settings = fake_settings.model_copy(update={"dense": fake_settings.dense.model_copy(update={"factory": factory, "nprobe": 4})})
    build_index(settings, corpus_file, embedder=hash_embedder, progress=False)
    folder = open_index(settings)
    assert folder.dense is not None and folder.dense.size == len(folder.chunks)
    rows, scores = folder.dense.search(hash_embedder.embed(["fusion of ranked lists"], "query"), 3)
    assert rows.shape == (1, 3) and np.all(np.diff(scores[0]) <= 1e-6)


def test_sparse_only_index(fake_settings: Settings, corpus_file: Path):
    settings = fake_settings.model_copy(update={
        "dense": fake_settings.dense.model_copy(update={"enabled": False}),
        "retrieval": fake_settings.retrieval.model_copy(update={"retrievers": ["bm25"]}),
    })
    manifest = build_index(settings, corpus_file, progress=False)
    assert manifest.dense is None
    hybrid = HybridRetriever(open_index(settings), settings)
    assert hybrid.search([Query("bm25 ranking function")])[0].passage_id == "d3-0"
    assert hybrid.search([Query("the of and")]) == []  # only stopwords: nothing matches, nothing crashes


def test_rebuild_changes_bm25_and_faiss_without_embedding(fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    from local_rag.index.folder import rebuild_index

    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    changed = fake_settings.model_copy(update={
        "sparse": fake_settings.sparse.model_copy(update={"k1": 1.5, "b": 0.75}),
        "dense": fake_settings.dense.model_copy(update={"factory": "HNSW16"}),
    })
    with pytest.raises(IndexError_, match="local-rag index rebuild"):
        open_index(changed)
    hash_embedder.calls = 0
    manifest = rebuild_index(changed)
    assert hash_embedder.calls == 0 and manifest.sparse["k1"] == 1.5 and manifest.dense["factory"] == "HNSW16"
    folder = open_index(changed)
    assert folder.dense is not None and folder.dense.size == len(folder.chunks)
    assert verify_index(changed.index_dir) == []


def test_gpu_placement_keeps_hnsw_off_index_cpu_to_gpu():
    from local_rag.index.dense import gpu_placement

    assert gpu_placement("IndexFlatIP", "auto", 1)[0] == "gpu"
    assert gpu_placement("IndexIVFFlat", "yes", 2)[0] == "gpu"
    where, why = gpu_placement("IndexHNSWFlat", "auto", 1)
    assert where == "gpu-flat" and "no GPU HNSW" in why
    assert gpu_placement("IndexPreTransform", "auto", 1)[0] == "cpu"
    assert gpu_placement("IndexHNSWFlat", "no", 1)[0] == "cpu"
    where, why = gpu_placement("IndexFlatIP", "yes", 0)
    assert where == "cpu" and "sees no GPU" in why


def test_loaded_index_types_are_the_ones_placement_knows(tmp_path: Path):
    """The class names faiss gives loaded indexes are the ones `gpu_placement` decides on; without a GPU build the
    index stays on the CPU and still searches (use_gpu yes: a warning, not a failure)."""
    from local_rag.index.dense import GPU_MOVABLE, DenseIndex, gpu_placement
    from local_rag.settings import DenseConfig

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(200, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for factory, where in (("Flat", "gpu"), ("HNSW32", "gpu-flat"), ("IVF4,Flat", "gpu")):
        folder = tmp_path / factory.replace(",", "_")
        folder.mkdir()
        DenseIndex.build(vectors, DenseConfig(factory=factory)).save(folder)
        loaded = DenseIndex.load(folder, DenseConfig(factory=factory, use_gpu="yes"))
        name = type(loaded.index).__name__
        assert gpu_placement(name, "auto", 1)[0] == where, name
        assert (name in GPU_MOVABLE) == (where == "gpu")
        assert not loaded.on_gpu
        rows, _ = loaded.search(vectors[:2], 3)
        assert rows[0, 0] == 0 and rows[1, 0] == 1


def test_one_corpus_gives_the_same_sparse_files_under_any_hash_seed(tmp_path: Path):
    """bm25s numbers a stemmed vocabulary in Python set order, which follows the per-process hash seed; the index
    numbers it by first occurrence, so two builds in processes with different seeds write identical files (a
    build and an incremental add, through the CLI)."""
    from .test_cli import run

    first = write_jsonl(tmp_path / "first.jsonl", CORPUS[:3])
    rest = write_jsonl(tmp_path / "rest.jsonl", CORPUS[3:])
    files = []
    for seed in ("1", "2"):
        where = tmp_path / f"seed{seed}"
        where.mkdir()
        for args in (("build", str(first), "--sparse-only"), ("add", str(rest))):
            env = {"PYTHONHASHSEED": seed, "LOCAL_RAG_DENSE__ENABLED": "false", "LOCAL_RAG_RETRIEVAL__RETRIEVERS": '["bm25"]'}
            assert run("index", *args, cwd=where, env=env).returncode == 0
        sparse = where / "indexes" / "default" / "sparse"
        files.append({p.relative_to(sparse).as_posix(): p.read_bytes() for p in sorted(sparse.rglob("*")) if p.is_file()})
    assert files[0].keys() == files[1].keys() and any(name.startswith("vocab") for name in files[0])
    assert files[0] == files[1]

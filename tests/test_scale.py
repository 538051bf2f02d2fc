"""Scale features with real components: BM25 segments, ANN factories against exact search, the factory chosen by
size, the planner's curves against a measured build, and the Qdrant backend (embedded) round trip."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from local_rag.errors import IndexError_
from local_rag.index import add_documents, build_index, integrity, open_index, remove_documents
from local_rag.index.dense import DenseIndex
from local_rag.index.factory import choose_factory, resolve_factory
from local_rag.index.folder import rebuild_index
from local_rag.index.segments import SegmentedSparse
from local_rag.index.sizing import bm25_bytes, faiss_bytes
from local_rag.index.verify import verify_index
from local_rag.settings import DenseConfig, Settings, SparseConfig

from .conftest import CORPUS, MODELS, HashEmbedder, needs_minilm, write_jsonl
from .test_index import results

MORE = [
    {"_id": f"n{i}", "title": "Extra", "text": f"Extra passage {i} about cats, dogs and ranking functions number {i}.", "url": ""}
    for i in range(3)
]


def _texts(n: int) -> list[str]:
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(400)]
    return [" ".join(rng.choice(words, size=30)) for _ in range(n)]


def test_segment_scores_equal_a_full_build_for_the_new_rows(tmp_path: Path):
    texts, config = _texts(300), SparseConfig(stemmer="", stopwords="")
    for name in ("base", "added", "full"):
        (tmp_path / name).mkdir()
    SegmentedSparse.build(texts[:280], config, tmp_path / "base")
    assert SegmentedSparse.can_append(tmp_path / "base", 20)
    SegmentedSparse.append(tmp_path / "base", tmp_path / "added", texts[280:], config)
    SegmentedSparse.build(texts, config, tmp_path / "full")
    added, full = SegmentedSparse.load(tmp_path / "added", config), SegmentedSparse.load(tmp_path / "full", config)
    assert added.size == full.size == 300 and len(added.retrievers) == 2
    queries = [texts[290][:40], texts[5][:40]]
    rows_a, scores_a = added.search(queries, 5)
    rows_f, scores_f = full.search(queries, 5)
    assert rows_a[0, 0] == rows_f[0, 0] == 290  # a new row is found where a full build puts it
    # new rows are scored with the statistics of the whole index: exactly the full build's scores
    new = rows_f[0] >= 280
    assert np.allclose(scores_a[0][np.isin(rows_a[0], rows_f[0][new])], scores_f[0][new], rtol=1e-5)
    assert not SegmentedSparse.can_append(tmp_path / "added", 100)  # past the merge share: a full build instead


@pytest.mark.parametrize("factory", ["HNSW16", "IVF{lists},SQ8"])  # IVF-SQ8: the auto choice from 200k chunks on
def test_small_add_writes_a_segment_and_adds_to_faiss(tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder,
                                                      factory: str):
    settings = fake_settings.model_copy(update={"dense": fake_settings.dense.model_copy(update={"factory": factory})})
    big = [{"_id": f"p{i}", "title": "", "text": t, "url": ""} for i, t in enumerate(_texts(60))]
    build_index(settings, write_jsonl(tmp_path / "a.jsonl", CORPUS + big), embedder=hash_embedder, progress=False)
    hash_embedder.calls = 0
    add_documents(settings, write_jsonl(tmp_path / "b.jsonl", MORE), embedder=hash_embedder, progress=False)
    meta = json.loads((settings.index_dir / "sparse" / "segments.json").read_text())["segments"]
    assert len(meta) == 2 and meta[1]["rows"] == hash_embedder.calls
    assert verify_index(settings.index_dir) == []
    folder = open_index(settings, model_checksum=hash_embedder.checksum)
    assert folder.dense is not None and folder.dense.size == len(folder.chunks)
    rows, _ = folder.sparse.search(["Extra passage 2 about cats"], 3)
    assert folder.chunks[rows[0, 0]].passage_id == "n2"
    remove_documents(settings, ["n2"])  # a remove merges the segments back into one
    meta = json.loads((settings.index_dir / "sparse" / "segments.json").read_text())["segments"]
    assert len(meta) == 1 and verify_index(settings.index_dir) == []


def test_an_append_never_parses_the_stored_chunks(tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder,
                                                 monkeypatch: pytest.MonkeyPatch):
    """The add of issue 29's 1M cell: chunk list copied as bytes, BM25 segment and FAISS checksums carried over by hard
    link, one more part of the chunk-text digest; the result equals the replacing (parsing) path's and verifies deep."""
    from local_rag.index import folder as folder_module
    from local_rag.index.chunkfile import ChunkFile

    big = [{"_id": f"p{i}", "title": "", "text": t, "url": ""} for i, t in enumerate(_texts(60))]
    build_index(fake_settings, write_jsonl(tmp_path / "a.jsonl", CORPUS + big), embedder=hash_embedder, progress=False)
    before = json.loads((fake_settings.index_dir / "manifest.json").read_text())["integrity"]

    def no_parsing(*args: object) -> None:
        raise AssertionError("an append parsed the stored chunk list")

    with monkeypatch.context() as patch:
        patch.setattr(folder_module, "read_chunks", no_parsing)
        patch.setattr(ChunkFile, "_parse", no_parsing)
        add_documents(fake_settings, write_jsonl(tmp_path / "b.jsonl", MORE[:2]), embedder=hash_embedder, progress=False)
        add_documents(fake_settings, write_jsonl(tmp_path / "c.jsonl", MORE[2:]), embedder=hash_embedder, progress=False)
    manifest = json.loads((fake_settings.index_dir / "manifest.json").read_text())
    parts = manifest["integrity"]["chunk_texts"]
    assert [p["sha256"] for p in parts][0] == before["chunk_texts"] and len(parts) == 3
    assert sum(p["rows"] for p in parts) == manifest["chunks"] == len(open_index(fake_settings, model_checksum=hash_embedder.checksum).chunks)
    old_segment = next(k for k in before["files"] if k.startswith("sparse/") and k != "sparse/segments.json")
    assert manifest["integrity"]["files"][old_segment] == before["files"][old_segment]  # hard-linked: not re-hashed
    assert verify_index(fake_settings.index_dir, deep=True) == []
    chunks = open_index(fake_settings, model_checksum=hash_embedder.checksum).chunks
    texts = [folder_module.index_text(c, fake_settings.chunker.header) for c in chunks]
    assert integrity.chunk_problems(manifest["integrity"], texts) == []
    for row in (0, len(texts) - 1):  # an edited text in the first part and in the last
        edited = texts[:row] + [texts[row] + " edited"] + texts[row + 1 :]
        assert integrity.chunk_problems(manifest["integrity"], edited) == [
            "chunk texts do not match the digest recorded when the index was written (edited)"]
    assert "do not cover" in integrity.chunk_problems(manifest["integrity"], texts[:-1])[0]
    appended = results(fake_settings, hash_embedder)
    add_documents(fake_settings, write_jsonl(tmp_path / "c.jsonl", MORE[2:]), embedder=hash_embedder, replace=True,
                  progress=False)  # the same passage again: the parsing path, same index
    assert results(fake_settings, hash_embedder) == appended and verify_index(fake_settings.index_dir, deep=True) == []


def test_stored_vectors_grow_by_appending_rows(tmp_path: Path):
    from local_rag.index.dense import append_rows

    rng = np.random.default_rng(3)
    old = rng.random((999, 8)).astype(np.float16)  # 999 -> 1,104 rows: the shape gains a digit in the same header
    np.save(tmp_path / "old.npy", old)
    rows = [rng.random((5, 8)).astype(np.float16), rng.random((100, 8)).astype(np.float16)]
    assert append_rows(tmp_path / "old.npy", tmp_path / "new.npy", rows)
    assert np.array_equal(np.load(tmp_path / "new.npy"), np.concatenate([old, *rows]))
    assert np.array_equal(np.load(tmp_path / "old.npy"), old)  # the old index's file is untouched
    assert not append_rows(tmp_path / "old.npy", tmp_path / "bad.npy", [rows[0].astype(np.float32)])
    assert not (tmp_path / "bad.npy").exists()


@pytest.mark.parametrize("factory", ["HNSW32", "IVF{lists},SQ8", "IVF{lists},Flat"])
def test_ann_matches_exact_on_a_toy_set(factory: str):
    rng = np.random.default_rng(1)
    centers = rng.standard_normal((20, 32))
    vectors = (centers[rng.integers(20, size=2000)] + 0.3 * rng.standard_normal((2000, 32))).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[:20] + 0.05 * rng.standard_normal((20, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    exact = DenseIndex.build(vectors, DenseConfig(factory="Flat", use_gpu="no"))
    ann = DenseIndex.build(vectors, DenseConfig(factory=resolve_factory(factory, len(vectors)), use_gpu="no"))
    ann.config = DenseConfig(factory=ann.factory, nprobe=16, ef_search=128, use_gpu="no")
    ann._tune()
    want, _ = exact.search(queries, 10)
    got, _ = ann.search(queries, 10)
    recall = np.mean([len(set(g) & set(w)) / 10 for g, w in zip(got.tolist(), want.tolist(), strict=True)])
    assert recall >= 0.9


def test_auto_factory_follows_the_corpus_size(fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    assert choose_factory(1000) == "Flat" and choose_factory(1_000_000) == "IVF2048,SQ8"
    assert resolve_factory("IVF{lists},PQ48", 1_000_000) == "IVF2048,PQ48"
    manifest = build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    assert fake_settings.dense.factory == "auto" and manifest.dense["faiss_factory"] == "Flat"


@pytest.mark.parametrize("factory", ["Flat", "HNSW32", "IVF{lists},SQ8", "IVF{lists},PQ16"])
def test_planner_faiss_size_within_20_percent_of_a_build(tmp_path: Path, factory: str):
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((5000, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    DenseIndex.build(vectors, DenseConfig(factory=factory, use_gpu="no")).save(tmp_path)
    measured = (tmp_path / "faiss.index").stat().st_size
    assert abs(faiss_bytes(factory, 5000, 64) - measured) <= 0.2 * measured


def test_planner_bm25_size_within_20_percent_of_a_build(tmp_path: Path):
    texts = _texts(3000)
    SegmentedSparse.build(texts, SparseConfig(stemmer="", stopwords=""), tmp_path)
    measured = sum(p.stat().st_size for p in tmp_path.iterdir())
    distinct = float(np.mean([len(set(t.split())) for t in texts]))
    assert abs(bm25_bytes(3000, distinct) - measured) <= 0.2 * measured


# ---------------------------------------------------------------- Qdrant (embedded, qdrant-client local mode)

qdrant_client = pytest.importorskip("qdrant_client")


@pytest.fixture
def qdrant_settings(fake_settings: Settings) -> Settings:
    return fake_settings.model_copy(update={"backend": fake_settings.backend.model_copy(update={"name": "qdrant"})})


def test_qdrant_round_trip_matches_the_local_backend(tmp_path: Path, fake_settings: Settings, qdrant_settings: Settings,
                                                      hash_embedder: HashEmbedder):
    local = fake_settings.model_copy(update={"index": "local"})
    first, rest = write_jsonl(tmp_path / "first.jsonl", CORPUS[:4]), write_jsonl(tmp_path / "rest.jsonl", CORPUS[4:])
    everything = write_jsonl(tmp_path / "all.jsonl", CORPUS)
    manifest = build_index(qdrant_settings, first, embedder=hash_embedder, progress=False)
    assert manifest.backend == "qdrant" and (qdrant_settings.index_dir / "qdrant").is_dir()
    add_documents(qdrant_settings, rest, embedder=hash_embedder, progress=False)
    build_index(local, everything, embedder=hash_embedder, progress=False)
    assert verify_index(qdrant_settings.index_dir) == []
    # same fused results, format and scores as the local backend (BM25 and inner products computed alike)
    assert results(qdrant_settings, hash_embedder) == results(local, hash_embedder)

    remove_documents(qdrant_settings, ["d5-0"])
    remove_documents(local, ["d5-0"])
    assert results(qdrant_settings, hash_embedder) == results(local, hash_embedder)
    folder = open_index(qdrant_settings, model_checksum=hash_embedder.checksum)
    rows, _ = folder.sparse.search(["cats"], 5, where={"doc_id": folder.chunks[0].doc_id})  # payload filter
    assert {folder.chunks[r].doc_id for r in rows[0] if r >= 0} == {folder.chunks[0].doc_id}
    folder.sparse.index.close()

    # back to the local backend without embedding anything
    hash_embedder.calls = 0
    rebuild_index(qdrant_settings, backend=None)  # a plain rebuild (new BM25 or FAISS settings) stays on Qdrant
    assert json.loads((fake_settings.index_dir / "manifest.json").read_text())["backend"] == "qdrant"
    rebuild_index(fake_settings)  # ... with the settings of a local index too: it moved back to local (session 49)
    assert json.loads((fake_settings.index_dir / "manifest.json").read_text())["backend"] == "qdrant"
    assert results(qdrant_settings, hash_embedder) == results(local, hash_embedder)
    hash_embedder.calls = 0
    rebuild_index(fake_settings, backend=fake_settings.backend)
    assert hash_embedder.calls == 0 and json.loads((fake_settings.index_dir / "manifest.json").read_text())["backend"] == "local"
    assert results(fake_settings, hash_embedder) == results(local, hash_embedder)


def test_qdrant_corrupt_or_mismatched_index_is_refused_and_kept(tmp_path: Path, qdrant_settings: Settings,
                                                                hash_embedder: HashEmbedder, corpus_file: Path):
    build_index(qdrant_settings, corpus_file, embedder=hash_embedder, progress=False)
    folder = qdrant_settings.index_dir
    before = results(qdrant_settings, hash_embedder)
    # a write that fails half-way (no Qdrant server at that URL) leaves the previous index as it was
    unreachable = qdrant_settings.model_copy(update={"backend": qdrant_settings.backend.model_copy(update={"url": "http://127.0.0.1:9"})})
    with pytest.raises(Exception) as failed:  # noqa: B017 - qdrant-client's connection error types vary by transport
        rebuild_index(unreachable, backend=unreachable.backend)
    assert not isinstance(failed.value, AssertionError)
    assert results(qdrant_settings, hash_embedder) == before and verify_index(folder) == []
    meta = (folder / "qdrant.json").read_text()
    (folder / "qdrant.json").write_text("{not json")
    with pytest.raises(IndexError_, match="qdrant.json"):  # the file checksums catch it first
        open_index(qdrant_settings, model_checksum=hash_embedder.checksum)
    assert verify_index(folder)
    (folder / "qdrant.json").write_text(meta)
    shutil.rmtree(folder / "qdrant")  # storage gone: an empty collection cannot match the chunks
    with pytest.raises(IndexError_, match="points for|unreadable"):
        open_index(qdrant_settings, model_checksum=hash_embedder.checksum)


def test_qdrant_interrupted_embedded_write_keeps_the_old_index_and_damage_is_refused(
        tmp_path: Path, qdrant_settings: Settings, hash_embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch):
    from local_rag.index.backends import qdrant

    build_index(qdrant_settings, write_jsonl(tmp_path / "first.jsonl", CORPUS[:4]), embedder=hash_embedder, progress=False)
    folder = qdrant_settings.index_dir
    before = results(qdrant_settings, hash_embedder)
    calls = []

    def interrupted(*args: object) -> object:  # Ctrl-C after some points are already upserted, unsynced
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return terms(*args)

    terms = qdrant._terms
    monkeypatch.setattr(qdrant, "BATCH", 1)
    monkeypatch.setattr(qdrant, "_terms", interrupted)
    with pytest.raises(KeyboardInterrupt):
        add_documents(qdrant_settings, write_jsonl(tmp_path / "rest.jsonl", CORPUS[4:]), embedder=hash_embedder, progress=False)
    monkeypatch.undo()
    assert len(calls) == 2 and results(qdrant_settings, hash_embedder) == before and verify_index(folder) == []
    assert sorted(p.name for p in qdrant_settings.indexes_dir.iterdir() if not p.name.startswith(".test.")) == ["test"]
    # settings the index was not built with: refused with the rebuild hint, as the local backend refuses them
    with pytest.raises(IndexError_, match="rebuild it with `local-rag index build"):
        open_index(qdrant_settings.model_copy(update={"sparse": qdrant_settings.sparse.model_copy(update={"k1": 1.5})}))
    qdrant._close_all()  # the engine's storage rewritten with garbage: a clear error, not a traceback
    for storage in (folder / "qdrant").rglob("storage.sqlite"):
        storage.write_bytes(b"not a database" * 100)
    with pytest.raises(IndexError_, match="unreadable"):
        open_index(qdrant_settings, model_checksum=hash_embedder.checksum)


def test_qdrant_embedded_writes_skip_the_sync_per_point_and_sync_once(tmp_path: Path):
    """Local mode commits every point on its own; the backend turns the per-commit sync off for the write (the storage
    is in the temporary folder of the index being written) and syncs the file once. If a qdrant-client release moves
    the storage, this fails: the writes would still work, only ~10x slower (docs/benchmarks/scale.md)."""
    from local_rag.index.backends.qdrant import _bulk_writes, _client

    client = _client(tmp_path, {"collection": "c"})
    client.create_collection("c", vectors_config={},  # required up to qdrant-client 1.12, the floor
                             sparse_vectors_config={"bm25": qdrant_client.models.SparseVectorParams()})
    storage = _bulk_writes(client, "c")
    assert storage is not None and storage.name == "storage.sqlite" and storage.exists()
    assert client._client.collections["c"].storage.storage.execute("PRAGMA synchronous").fetchone()[0] == 0
    client.close()


def test_synthetic_rows_are_a_function_of_their_index():
    from local_rag.bench.synthetic import Basis, synthetic_texts, synthetic_vectors

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((50, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sentences = [[f"Sentence {i}.{j} of basis passage {i}." for j in range(4)] for i in range(50)]
    basis = Basis(sentences, vectors, ["q"], vectors[:1])
    whole = synthetic_vectors(basis, 0, 120_000)  # spans three random blocks
    assert np.allclose(synthetic_vectors(basis, 49_990, 50_010), whole[49_990:50_010])
    assert np.allclose(np.linalg.norm(whole, axis=1), 1, atol=1e-5)
    texts = synthetic_texts(basis, 99_998, 100_002)
    assert len(texts) == 4 and texts == synthetic_texts(basis, 0, 100_002)[99_998:]


def test_chunks_cell_reads_the_same_rows_both_ways_and_reports_them(tmp_path: Path):
    from local_rag.bench.scale_folder import chunk_list
    from local_rag.bench.scale_report import markdown, rows
    from local_rag.bench.synthetic import Basis

    rng = np.random.default_rng(4)
    vectors = rng.standard_normal((20, 8)).astype(np.float32)
    basis = Basis([[f"Sentence {i}.{j} of passage {i}." for j in range(3)] for i in range(20)], vectors, ["q"], vectors[:1])
    result = chunk_list(tmp_path, basis, 3000, reads=200)  # asserts the rows read are the ones written
    assert result["rows"] == 3000 and set(result) >= {"offsets", "parsed"}
    assert result["offsets"]["anon_rss_added_mb"] < result["parsed"]["anon_rss_added_mb"] + 1
    cell = {**result, "size": 3000, "kind": "chunks", "step": "query"}
    table = markdown(rows({(3000, "chunks", "query"): cell}))
    assert "| 3,000 |" in table and "offsets / parsed" in table


def test_qdrant_cell_ranks_as_the_local_backend_and_reports_it(tmp_path: Path, fake_settings: Settings):
    from local_rag.bench.scale_qdrant import qdrant_build, qdrant_query
    from local_rag.bench.scale_report import markdown, rows
    from local_rag.bench.synthetic import Basis

    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((200, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sentences = [[f"Passage {i} says alpha{i} beta{(i * 7 + j) % 60} gamma{j}." for j in range(4)] for i in range(200)]
    queries = ["alpha3 beta20", "gamma1 alpha150", "beta7", "alpha99 gamma3 beta1"]
    basis = Basis(sentences, vectors, queries, vectors[[3, 150, 7, 99]])
    build = qdrant_build(tmp_path, basis, 400, fake_settings)  # the conversion runs `rebuild_index` in a child process
    assert build["local_factory"] == "Flat" and build["qdrant_storage_mb"] > 0
    query = qdrant_query(tmp_path, basis, 400, fake_settings, queries=4)
    assert query["queries"] == 4 and query["dense_overlap_at_10"] == 1.0  # both exact over the same float16 vectors
    assert query["bm25_same_scores"] == query["dense_same_scores"] == 4  # the same BM25; tied rows may swap places
    table = markdown(rows({(400, "qdrant", "build"): build | {"size": 400, "kind": "qdrant", "step": "build"},
                           (400, "qdrant", "query"): query | {"size": 400, "kind": "qdrant", "step": "query"}}))
    assert "Qdrant local mode" in table and f"{query['hybrid_overlap_at_10']:.4f}" in table


@pytest.mark.parametrize("kind", ["flat", "ivf-sq8"])
def test_a_streamed_dense_cell_holds_every_row_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str):
    import faiss

    from local_rag.bench import scale
    from local_rag.bench.synthetic import Basis, synthetic_vectors

    rng = np.random.default_rng(6)
    vectors = rng.standard_normal((30, 16)).astype(np.float32)
    basis = Basis([["s."]] * 30, vectors / np.linalg.norm(vectors, axis=1, keepdims=True), ["q"], vectors[:1])
    monkeypatch.setattr(scale, "STREAM_ABOVE", 1_000)  # 4,500 rows made and added 1,000 at a time
    out = scale.build_dense(tmp_path, basis, 4_500, kind)
    assert out["streamed_rows"] == 1_000 and out["threads"] == 1
    index = faiss.read_index(str(tmp_path / "indexes" / f"4500-{kind}" / "faiss.index"))
    assert index.ntotal == 4_500
    whole = synthetic_vectors(basis, 0, 4_500)
    if kind == "flat":  # row i of the index is synthetic row i
        assert np.array_equal(faiss.rev_swig_ptr(index.get_xb(), 4_500 * 16).reshape(4_500, 16), whole)
    rows = scale.exact_truth(tmp_path, basis, 4_500)
    if kind != "flat":
        faiss.extract_index_ivf(index).nprobe = 64
    _, found = index.search(basis.query_vectors, 10)
    assert len(set(found[0].tolist()) & set(rows[0].tolist())) >= 8  # the streamed index finds the exact neighbours


def test_qdrant_embedded_index_open_in_another_process_is_said_as_such(tmp_path: Path, qdrant_settings: Settings,
                                                                       hash_embedder: HashEmbedder, corpus_file: Path):
    """A running `serve` or `chat` holds an embedded collection; another process's search, sync or verify was told
    the collection was "unreadable ... rebuild the index" (session 49). Now: open in another process, nothing to mend."""
    import subprocess
    import sys

    from local_rag.index.backends import qdrant

    build_index(qdrant_settings, corpus_file, embedder=hash_embedder, progress=False)
    folder = qdrant_settings.index_dir
    qdrant._close_all()  # this process's shared client let go, as a separate CLI process would hold none
    holder = subprocess.Popen([sys.executable, "-c", "import sys, qdrant_client; c = qdrant_client.QdrantClient(path=sys.argv[1]);"
                               " print('open', flush=True); sys.stdin.read()", str(folder / "qdrant")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(IndexError_, match="is open in another process") as refused:
            open_index(qdrant_settings, model_checksum=hash_embedder.checksum)
        assert "rebuild" not in str(refused.value)
        assert any("open in another process" in p for p in verify_index(folder))
    finally:
        holder.communicate("")
    assert verify_index(folder) == [] and results(qdrant_settings, hash_embedder)  # once it is gone, all is well


@needs_minilm
def test_index_rebuild_moves_an_index_only_when_told(tmp_path: Path):
    """`index rebuild` (new BM25 or FAISS settings, or the remedy the errors name) moved a Qdrant index back to the
    local backend, and one on a server into the folder, unless --backend was given again (session 49)."""
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    env = {"LOCAL_RAG_MODELS_DIR": str(MODELS), "LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes"), "LOCAL_RAG_INDEX": "n"}
    run = lambda *args: CliRunner().invoke(cli, list(args), env=env)  # noqa: E731
    backend = lambda: json.loads((tmp_path / "indexes" / "n" / "manifest.json").read_text())["backend"]  # noqa: E731
    assert run("index", "build", str(write_jsonl(tmp_path / "c.jsonl", CORPUS))).exit_code == 0 and backend() == "local"
    before = run("search", "how are ranked lists merged", "--json").output
    assert run("index", "rebuild", "--backend", "qdrant").exit_code == 0 and backend() == "qdrant"
    res = run("index", "rebuild", "--factory", "Flat")
    assert res.exit_code == 0 and backend() == "qdrant" and verify_index(tmp_path / "indexes" / "n") == []
    res = run("index", "rebuild", "--backend", "local", "--backend-url", "http://127.0.0.1:9")
    assert res.exit_code == 2 and "--backend qdrant, not local" in res.output and backend() == "qdrant"
    assert run("index", "rebuild", "--backend", "local").exit_code == 0 and backend() == "local"
    after = run("search", "how are ranked lists merged", "--json").output
    strip = lambda out: [h["passage_id"] for h in json.loads(out[out.index("{"):])["hits"]]  # noqa: E731
    assert strip(after) == strip(before)


def test_bench_scale_refuses_bad_sizes_and_an_empty_report_before_writing(tmp_path: Path):
    """Session 50: `bench-scale --sizes abc` was a ValueError traceback, `--basis 0` one in each child process, and
    `--report-only` with a --work holding no results replaced docs/benchmarks/scale.json with an empty table."""
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    out = tmp_path / "out"
    out.mkdir()
    (out / "scale.json").write_text("[the committed figures]")
    runner = CliRunner()
    base = ["bench-scale", "--work", str(tmp_path / "work"), "--out", str(out)]
    for sizes, bad in (("10k,abc", "'abc'"), ("0", "'0'"), ("-5k", "'-5k'")):
        res = runner.invoke(cli, [*base, "--sizes", sizes])
        assert res.exit_code == 2 and res.output.strip() == f"error: --sizes: {bad} is not a corpus size (a count of passages: 5000, 10k, 1M)"
    res = runner.invoke(cli, [*base, "--report-only"])
    assert res.exit_code == 2 and res.output.strip() == (
        f"error: no results in {tmp_path / 'work'}: nothing to report (run bench-scale without --report-only, or give "
        "the --work of that run)")
    res = runner.invoke(cli, [*base, "--basis", "0"])
    assert res.exit_code == 2 and "'--basis': 0 is not in the range x>=1" in res.output
    assert (out / "scale.json").read_text() == "[the committed figures]" and not (tmp_path / "work").exists()


def test_a_factory_faiss_cannot_build_is_refused_before_reading_and_one_it_cannot_train_in_one_line(
        tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    """Session 50: `index build docs --factory NOPE` (or PQ7 on 384 dimensions) embedded the whole corpus, then
    stopped on FAISS's C++ RuntimeError traceback; IVF1024,PQ32 on a small corpus the same at training."""
    from local_rag.errors import BadInputError

    bad = fake_settings.model_copy(deep=True)
    bad.dense.factory = "NOPE"
    with pytest.raises(BadInputError, match=r"^FAISS factory 'NOPE' for \d+-dimensional vectors: could not parse index "
                                            r"string NOPE \(e\.g\. auto, Flat, HNSW32"):
        build_index(bad, tmp_path / "not-read.jsonl", embedder=hash_embedder, progress=False)  # the corpus: never read
    pq = fake_settings.model_copy(deep=True)
    pq.dense.factory = "IVF1024,PQ8"
    with pytest.raises(BadInputError, match=r"^FAISS 'IVF1024,PQ8 \(as IVF1,PQ8\)' cannot be trained on \d+ vectors "
                                            r"\(Number of training points .*\); a corpus this small takes Flat or HNSW32"):
        build_index(pq, corpus_file, embedder=hash_embedder, progress=False)
    assert not (tmp_path / "indexes" / fake_settings.index).exists()
    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    again = fake_settings.model_copy(deep=True)
    again.dense.factory = "NOPE"
    with pytest.raises(BadInputError, match="could not parse index string NOPE"):
        rebuild_index(again)

"""The BGE-M3 code path, on a BGE-M3-shaped folder built from MiniLM weights and random heads (structure, not
quality: BGE-M3's own weights are not on this machine)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from local_rag.errors import ModelError

from .conftest import MODELS, needs_minilm


def make_m3_folder(dest: Path, with_heads: bool = True) -> Path:
    torch = pytest.importorskip("torch")
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", dest)
    if with_heads:
        torch.manual_seed(0)
        torch.save(torch.nn.Linear(384, 384).state_dict(), dest / "colbert_linear.pt")
        torch.save(torch.nn.Linear(384, 1).state_dict(), dest / "sparse_linear.pt")
    return dest


@needs_minilm
def test_missing_heads_are_refused(tmp_path: Path):
    from local_rag.embed.bge import check_bge_m3_folder

    folder = make_m3_folder(tmp_path / "m3", with_heads=False)
    with pytest.raises(ModelError, match="colbert_linear.pt, sparse_linear.pt missing"):
        check_bge_m3_folder(folder)


@needs_minilm
def test_bge_m3_backend_dense_and_lexical(tmp_path: Path):
    pytest.importorskip("transformers")
    from local_rag.embed import load_embedder
    from local_rag.settings import EmbedderConfig

    folder = make_m3_folder(tmp_path / "m3")
    embedder = load_embedder(EmbedderConfig(backend="bge-m3", model=str(folder), max_length=128), MODELS)
    assert embedder.dimension == 384 and embedder.backend == "bge-m3"
    vectors = embedder.embed(["a cat purrs", "a kitten meows", "tax on capital gains"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    weights = embedder.lexical_weights(["a cat purrs"])  # type: ignore[attr-defined]
    assert len(weights) == 1 and all(isinstance(v, float) and v > 0 for v in weights[0].values())


@needs_minilm
def test_bge_m3_weights_follow_flagembedding(tmp_path: Path):
    """Dense: the CLS state, normalized; sparse: relu(sparse head) per token, the largest per token id, keyed by the
    id as a string, with no special tokens: checked against the encoder's own outputs, recomputed here."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from local_rag.embed import load_embedder
    from local_rag.settings import EmbedderConfig

    folder = make_m3_folder(tmp_path / "m3")
    embedder = load_embedder(EmbedderConfig(backend="bge-m3", model=str(folder), max_length=128), MODELS)
    text = "cats chase cats; the cat naps"
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    encoder = transformers.AutoModel.from_pretrained(str(folder)).eval()
    head = torch.nn.Linear(384, 1)
    head.load_state_dict(torch.load(folder / "sparse_linear.pt", weights_only=True))
    batch = tokenizer([text], return_tensors="pt")
    with torch.no_grad():
        hidden = encoder(**batch).last_hidden_state[0]
        per_token = torch.relu(head(hidden)).squeeze(-1).tolist()
    expected: dict[str, float] = {}
    for token, weight in zip(batch["input_ids"][0].tolist(), per_token, strict=True):
        if token not in (tokenizer.cls_token_id, tokenizer.pad_token_id, tokenizer.unk_token_id) and weight > 0:
            expected[str(token)] = max(expected.get(str(token), 0.0), weight)
    got = embedder.lexical_weights([text])[0]  # type: ignore[attr-defined]
    assert got.keys() == expected.keys() and len(got) < len(per_token)   # "cats" repeats: one entry
    assert all(abs(got[k] - expected[k]) < 1e-4 for k in got)
    dense = (hidden[0] / hidden[0].norm()).numpy()
    assert np.allclose(embedder.embed([text])[0], dense, atol=1e-4)
    # padding in a batch changes nothing
    batched = embedder.lexical_weights([text, "a much longer text " * 10])[0]  # type: ignore[attr-defined]
    assert batched.keys() == got.keys() and all(abs(batched[k] - got[k]) < 1e-4 for k in got)


@needs_minilm
def test_learned_sparse_index_build_search_add(tmp_path: Path):
    pytest.importorskip("transformers")
    from local_rag.embed import load_embedder
    from local_rag.index import add_documents, build_index, open_index
    from local_rag.records import Query
    from local_rag.retrieve import HybridRetriever

    from .conftest import CORPUS, make_settings, write_jsonl

    folder = make_m3_folder(tmp_path / "m3")
    settings = make_settings(
        tmp_path,
        embedder={"backend": "bge-m3", "model": str(folder), "max_length": 128, "bge_sparse": True},
        chunker={"size": 128, "overlap": 16},
        retrieval={"retrievers": ["bm25", "dense", "bge-sparse"]},
    )
    embedder = load_embedder(settings.embedder, settings.models_dir)
    build_index(settings, write_jsonl(tmp_path / "a.jsonl", CORPUS[:4]), embedder=embedder, progress=False)
    add_documents(settings, write_jsonl(tmp_path / "b.jsonl", CORPUS[4:]), embedder=embedder, progress=False)
    index = open_index(settings, model_checksum=embedder.checksum)
    assert index.learned is not None and index.learned.size == len(index.chunks)
    hybrid = HybridRetriever(index, settings, embedder)
    hits = hybrid.search([Query("reciprocal rank fusion")])
    assert hits and any(k.startswith("bge-sparse:") for h in hits for k in h.scores)

"""Real bm25s + FAISS indexes with the real all-MiniLM-L6-v2 model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from local_rag.embed.base import Embedder
from local_rag.errors import BadInputError
from local_rag.index import build_index, open_index
from local_rag.records import Conversation, Query, Turn
from local_rag.retrieve import HybridRetriever, conversation_queries
from local_rag.settings import Settings

from .conftest import needs_minilm

TURNS = [
    [Query("how are ranked lists merged"), Query("reciprocal rank fusion", "rewrite")],
    [Query("which library searches dense vectors")],
    [Query("what do cats do all day"), Query("cat sleep hours", "keywords")],
    [Query("zzzz qqqq")],
]


@pytest.fixture(scope="module")
def hybrid(minilm_settings: Settings, minilm: Embedder, tmp_path_factory: pytest.TempPathFactory) -> HybridRetriever:
    from .conftest import CORPUS, write_jsonl

    corpus = write_jsonl(tmp_path_factory.mktemp("c") / "c.jsonl", CORPUS)
    build_index(minilm_settings, corpus, embedder=minilm, progress=False)
    return HybridRetriever(open_index(minilm_settings, model_checksum=minilm.checksum), minilm_settings, minilm)


@needs_minilm
def test_real_embeddings_are_normalized_and_meaningful(minilm: Embedder):
    vectors = minilm.embed(["a cat purrs", "a kitten meows", "tax on capital gains"], kind="passage")
    assert vectors.shape == (3, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


@needs_minilm
def test_batched_retrieval_equals_single_retrieval(hybrid: HybridRetriever):
    batched = hybrid.search_batch(TURNS, top_k=5)
    for queries, expected in zip(TURNS, batched, strict=True):
        single = hybrid.search(queries, top_k=5)
        assert [(h.passage_id, h.score, h.scores) for h in single] == [(h.passage_id, h.score, h.scores) for h in expected]
    assert batched[0][0].passage_id == "d5-0"
    assert batched[1][0].passage_id == "d4-0"
    assert set(batched[0][0].scores) <= {"bm25:lastturn", "bm25:rewrite", "dense:lastturn", "dense:rewrite"}


@needs_minilm
def test_each_retriever_alone_and_timings(hybrid: HybridRetriever):
    for name, retriever in hybrid.retrievers.items():
        hits = retriever.search(["vector similarity search"], k=3)[0]
        assert hits and hits[0].source == name and [h.rank for h in hits] == list(range(1, len(hits) + 1))
    hybrid.search(TURNS[0])
    assert set(hybrid.last_timings) == {"bm25", "dense", "fusion"}


def test_conversation_queries_modes():
    conv = Conversation([Turn("user", "Tell me about BM25"), Turn("agent", "It ranks."), Turn("user", "  who made it? ")])
    queries = conversation_queries(conv, ["lastturn", "questions", "rewrite"], given={"rewrite": "who created BM25"})
    assert [(q.mode, q.text) for q in queries] == [
        ("lastturn", "who made it?"), ("questions", "Tell me about BM25\nwho made it?"), ("rewrite", "who created BM25")
    ]
    with pytest.raises(BadInputError, match="not available"):
        conversation_queries(conv, ["hyde"])
    with pytest.raises(BadInputError, match="no user turn"):
        conversation_queries(Conversation([Turn("user", "   ")]), ["lastturn"])
    # an empty given text falls back to the last turn rather than to no query at all
    assert [q.mode for q in conversation_queries(conv, ["rewrite"], given={"rewrite": " "})] == ["lastturn"]


@needs_minilm
def test_onnx_backend_matches_sentence_transformers(tmp_path: Path, minilm_settings: Settings, minilm: Embedder):
    pytest.importorskip("onnx")
    from local_rag.embed.onnx import OnnxEmbedder, export_onnx

    dest = export_onnx(minilm.folder, tmp_path / "minilm-onnx")
    config = minilm_settings.embedder.model_copy(update={"backend": "onnx", "model": str(dest)})
    onnx = OnnxEmbedder(config, minilm_settings.models_dir)
    assert onnx.providers == ["CPUExecutionProvider"] and onnx.dimension == 384
    texts = ["hybrid retrieval with bm25", "a cat sleeps"]
    cos = np.sum(onnx.embed(texts) * minilm.embed(texts), axis=1)
    assert np.all(cos > 0.99)


@needs_minilm
def test_feedback_search_joins_the_fusion(hybrid: HybridRetriever, minilm: Embedder):
    """Pseudo-relevance feedback (retrieval.feedback): the second search's query is the text of the first fused list's
    top passages, its BM25 list joins the others at the BM25 weight times feedback.weight, all fused again."""
    from local_rag.retrieve.fusion import rrf
    from local_rag.retrieve.hybrid import feedback_query

    settings = hybrid.settings.model_copy(deep=True)
    settings.fusion.weights = {"bm25": 0.5}
    settings.retrieval.feedback.passages = 2
    settings.retrieval.feedback.words = 6
    settings.retrieval.feedback.weight = 2.0
    fb = HybridRetriever(hybrid.retrievers["bm25"].folder, settings, minilm)
    plain_settings = settings.model_copy(deep=True)
    plain_settings.retrieval.feedback.passages = 0
    plain = HybridRetriever(hybrid.retrievers["bm25"].folder, plain_settings, minilm)

    queries = TURNS[0]
    first = plain.search(queries, top_k=10)
    text = feedback_query(first, 2, 6)
    assert text == " ".join(" ".join(h.text.split()[:6]) for h in first[:2])
    lists = plain.lists([queries], settings.retrieval.candidates)[0]
    lists["bm25:feedback"] = fb.retrievers["bm25"].search([text], k=settings.retrieval.candidates)[0]
    expected = rrf(lists, k=settings.fusion.k, weights={"bm25": 0.5, "bm25:feedback": 1.0}, top_k=5)

    got = fb.search(queries, top_k=5)
    assert [(h.passage_id, round(h.score, 9)) for h in got] == [(h.passage_id, round(h.score, 9)) for h in expected]
    assert any("bm25:feedback" in h.scores for h in got) and not any("dense:feedback" in h.scores for h in got)
    assert {"bm25", "dense", "fusion", "bm25:feedback"} == set(fb.last_timings)
    batched = fb.search_batch(TURNS, top_k=5)
    assert [[h.passage_id for h in hits] for hits in batched] == [[h.passage_id for h in fb.search(q, top_k=5)] for q in TURNS]
    # off (passages 0, the default): the first round, unchanged
    assert [h.passage_id for h in plain.search(queries, top_k=5)] == [h.passage_id for h in first[:5]]

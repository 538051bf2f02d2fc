"""Synthetic queries: consistency filtering on a real (bm25s + FAISS) fixture index keeps a query only when its own
passage ranks in the top k; the writer caches per passage (a resumed run asks the LLM nothing again)."""

from __future__ import annotations

import json
from pathlib import Path

from local_rag.index import build_index, open_index
from local_rag.retrieve import HybridRetriever
from local_rag.train.synth import QueryWriter, SynthQuery, consistency_filter, sample_passages

from .conftest import CORPUS, write_jsonl
from .llm_fixtures import ScriptedLLM


def test_consistency_filter_keeps_and_drops_the_right_items(fake_settings, hash_embedder, tmp_path: Path) -> None:
    build_index(fake_settings, write_jsonl(tmp_path / "c.jsonl", CORPUS), embedder=hash_embedder, progress=False)
    retriever = HybridRetriever(open_index(fake_settings, model_checksum=hash_embedder.checksum), fake_settings, hash_embedder)
    items = [
        SynthQuery("d3-0", "question", "which ranking function scores documents with term frequency"),  # its passage
        SynthQuery("d2-0", "question", "library for similarity search of dense vectors with HNSW indexes"),  # FAISS's
        SynthQuery("d4-0", "follow_up", "what indexes does it have"),  # a kind not asked for
    ]
    kept, dropped = consistency_filter(items, lambda q: retriever.search(q, top_k=6), k=1)
    assert [q.passage_id for q in kept] == ["d3-0"] and kept[0].rank == 1
    assert [q.passage_id for q in dropped] == ["d2-0"] and dropped[0].rank == 0


def test_writer_caches_and_sampling_is_stable(tmp_path: Path) -> None:
    llm = ScriptedLLM(json.dumps({"question": "What do cats eat?", "follow_up": "And how often?"}))
    cache = tmp_path / "cache.jsonl"
    first = QueryWriter(llm, "m", cache)("d1-0", "Cats eat mice.")
    assert [(q.kind, q.text) for q in first] == [("question", "What do cats eat?"), ("follow_up", "And how often?")]
    again = QueryWriter(ScriptedLLM("not json"), "m", cache)("d1-0", "Cats eat mice.")
    assert again == first and len(llm.seen) == 1
    assert "Cats eat mice." in llm.seen[0][-1]["content"]
    picked = sample_passages(CORPUS, 3, min_chars=60)
    assert len(picked) == 3 and picked == sample_passages(list(reversed(CORPUS)), 3, min_chars=60)


def test_writer_keeps_a_repeated_question_once(tmp_path: Path) -> None:
    llm = ScriptedLLM(json.dumps({"question": "What was the Council of Sirmium?", "follow_up": "what was the council of sirmium?"}))
    queries = QueryWriter(llm, "m", None)("d1-0", "The third Council of Sirmium met in 357.")
    assert [(q.kind, q.text) for q in queries] == [("question", "What was the Council of Sirmium?")]


def test_an_index_of_files_is_sampled_by_chunk_and_queries_must_find_their_chunk(fake_settings, hash_embedder,
                                                                                 tmp_path: Path) -> None:
    """`synth queries` without a corpus: one record a chunk, the filter and the negatives on chunks, and no negative
    from the gold chunk's own document."""
    from local_rag.index.folder import read_chunks
    from local_rag.train.data import build_examples, document_of
    from local_rag.train.synth import by_chunk, chunk_records

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("Cats purr and sleep all day long in the warm sun. Cats hunt mice at night and "
                                  "bring them home to their owners as gifts.\n", encoding="utf-8")
    (docs / "search.md").write_text("BM25 scores documents by term frequency and inverse document frequency. FAISS "
                                    "searches dense vectors with flat and HNSW indexes.\n", encoding="utf-8")
    build_index(fake_settings, docs, embedder=hash_embedder, progress=False)
    chunks = read_chunks(fake_settings.indexes_dir / fake_settings.index)
    records = chunk_records(chunks)
    assert len(records) == len(chunks) > 2 and {r["_id"] for r in records} == {c.id for c in chunks}
    retriever = HybridRetriever(open_index(fake_settings, model_checksum=hash_embedder.checksum), fake_settings, hash_embedder)
    search = by_chunk(lambda q: retriever.search(q, top_k=6))
    faiss_chunk = next(c.id for c in chunks if "FAISS" in c.text and "BM25" not in c.text)
    kept, _ = consistency_filter([SynthQuery(faiss_chunk, "question", "FAISS searches dense vectors with HNSW indexes")],
                                 search, k=1)
    assert [q.passage_id for q in kept] == [faiss_chunk] and document_of(faiss_chunk) == "search.md"
    texts = {r["_id"]: r["text"] for r in records}
    examples = build_examples([("t", "synth", {"synth": kept[0].text})], {"t": {faiss_chunk: 1}}, texts, search, 4)
    assert examples and all(document_of(n) != "search.md" for n in examples[0].negative_ids)

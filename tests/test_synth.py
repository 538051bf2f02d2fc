"""Synthetic queries: consistency filtering on a real (bm25s + FAISS) fixture index keeps a query only when its own
passage ranks in the top k; the writer caches per passage (a resumed run asks the LLM nothing again)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local_rag.index import build_index, open_index
from local_rag.records import Query
from local_rag.retrieve import HybridRetriever
from local_rag.train.synth import QueryWriter, SynthQuery, consistency_filter, sample_passages

from .conftest import CORPUS, MODELS, needs_minilm, write_jsonl
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


def test_held_out_documents_are_never_trained_on_and_their_ranks_are_measured(fake_settings, hash_embedder,
                                                                              tmp_path: Path) -> None:
    """`synth queries --holdout`: whole documents are held out (both chunks of d1 go together); `synth eval`'s
    metrics are the ranks of each query's own passage."""
    import pytest

    from local_rag.errors import BadInputError
    from local_rag.train.data import document_of
    from local_rag.train.synth import metrics_of_ranks, rank_of, read_heldout, split_heldout, write_heldout

    queries = [SynthQuery(pid, "question", f"q {pid}") for pid in ("d1-0", "d1-1", "d2-0", "d3-0", "d4-0", "d5-0")]
    train, held = split_heldout(queries, 0.4)
    assert len({document_of(q.passage_id) for q in held}) == 2 and len(train) + len(held) == 6
    assert not {document_of(q.passage_id) for q in train} & {document_of(q.passage_id) for q in held}
    assert split_heldout(queries, 0.4) == (train, held)  # the same split on every run
    assert split_heldout(queries, 0.0) == (queries, [])
    assert len(split_heldout(queries, 0.01)[1]) >= 1  # a positive share holds out at least one document
    with pytest.raises(BadInputError, match="holdout"):
        split_heldout(queries, 1.0)
    # one long file holding most of the queries is not held out: the held-out share stays near the one asked for
    lopsided = [SynthQuery(f"big.md#{i}", "question", f"q {i}") for i in range(20)] + queries
    held_docs = {document_of(q.passage_id) for q in split_heldout(lopsided, 0.2)[1]}
    assert "big.md" not in held_docs and len(held_docs) == 1
    # the pieces and pages of one file are one document: never some held out and some trained on
    assert {document_of(c) for c in ("notes.md#s2#0", "notes.md#s0#3", "notes.md#1")} == {"notes.md"}
    assert {document_of(c) for c in ("r.pdf#p4.1#0", "r.pdf#p2#1")} == {"r.pdf"}
    assert document_of("ibmcld_16384-7-2422") == "ibmcld_16384"  # MTRAG ids as before

    path = tmp_path / "h.jsonl"
    write_heldout(held, path, "passage")
    assert read_heldout(path) == (held, "passage")
    (tmp_path / "bad.jsonl").write_text('{"passage_id": "d1-0"}\n', encoding="utf-8")
    for bad, message in ((tmp_path / "none.jsonl", "no such file"), (tmp_path / "bad.jsonl", "bad.jsonl:1")):
        with pytest.raises(BadInputError, match=message):
            read_heldout(bad)

    build_index(fake_settings, write_jsonl(tmp_path / "c.jsonl", CORPUS), embedder=hash_embedder, progress=False)
    retriever = HybridRetriever(open_index(fake_settings, model_checksum=hash_embedder.checksum), fake_settings, hash_embedder)
    items = [SynthQuery("d3-0", "question", "which ranking function scores documents with term frequency"),
             SynthQuery("d4-0", "question", "library for similarity search of dense vectors with HNSW indexes")]
    search = lambda q: retriever.search(q, top_k=6)  # noqa: E731
    ranks = [[h.passage_id for h in search([Query(q.text, "lastturn")])].index(q.passage_id) + 1 for q in items]
    metrics = metrics_of_ranks([rank_of(q, search, 5) for q in items], depth=5)
    assert metrics["queries"] == 2 and metrics["mrr@10"] == round(sum(1 / r for r in ranks) / 2, 4)
    assert metrics["recall@1"] == sum(r == 1 for r in ranks) / 2 and metrics["recall@5"] == sum(r <= 5 for r in ranks) / 2


@needs_minilm
def test_synth_eval_on_a_real_minilm_index(tmp_path: Path) -> None:
    """`local-rag synth eval`: the first stage's MRR is the one `search` gives, a bi-encoder re-scoring row beside it,
    and bad input is one line, not a traceback."""
    from click.testing import CliRunner

    from local_rag.cli.main import cli
    from local_rag.train.synth import write_heldout

    env = {"LOCAL_RAG_MODELS_DIR": str(MODELS), "LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes"), "LOCAL_RAG_INDEX": "h"}
    run = lambda args: CliRunner().invoke(cli, args, env=env)  # noqa: E731
    assert run(["index", "build", str(write_jsonl(tmp_path / "c.jsonl", CORPUS))]).exit_code == 0
    held = [SynthQuery("d5-0", "question", "how does reciprocal rank fusion merge lists"),
            SynthQuery("d1-1", "question", "how long does a cat sleep")]
    write_heldout(held, tmp_path / "h.jsonl", "passage")
    ranks = []
    for q in held:
        out = run(["search", q.text, "--json"]).output
        ranks.append([h["passage_id"] for h in json.loads(out[out.index("{"):])["hits"]].index(q.passage_id) + 1)
    res = run(["synth", "eval", str(tmp_path / "h.jsonl"), "--reranker", "all-MiniLM-L6-v2",
               "--reranker-backend", "bi-encoder", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["rows"]
    assert rows["first stage"]["mrr@10"] == round(sum(1 / r for r in ranks) / 2, 4)
    assert rows["first stage"]["recall@20"] == 1.0 and rows["+ all-MiniLM-L6-v2"]["queries"] == 2
    gain = json.loads(res.output)["gain"]
    assert gain["low"] <= gain["mrr@10"] == round(rows["+ all-MiniLM-L6-v2"]["mrr@10"] - rows["first stage"]["mrr@10"], 4) <= gain["high"]
    for args, message in ((["synth", "eval", str(tmp_path / "none.jsonl")], "no such file"),
                          (["synth", "eval", str(tmp_path / "h.jsonl"), "--reranker", "no-such-model"], "no-such-model"),
                          (["synth", "queries", "--holdout", "1.5", "--out", str(tmp_path / "o.jsonl")], "holdout"),
                          # knobs that would spend the LLM's time for nothing: refused before any model loads (they
                          # sampled all but 3 passages, wrote queries for nothing, or kept no kind; session 49)
                          (["synth", "queries", "--passages", "-3", "--out", str(tmp_path / "o.jsonl")], "--passages"),
                          (["synth", "queries", "--kinds", "questions", "--out", str(tmp_path / "o.jsonl")], "--kinds"),
                          (["synth", "queries", "--k", "0", "--out", str(tmp_path / "o.jsonl")], "--k"),
                          (["synth", "queries", "--negatives", "-1", "--out", str(tmp_path / "o.jsonl")], "--negatives"),
                          (["synth", "eval", str(tmp_path / "h.jsonl"), "--depth", "0"], "--depth"),
                          (["synth", "eval", str(tmp_path / "h.jsonl"), "--index", "nosuch"], "no index at")):
        res = run(args)
        assert res.exit_code != 0 and message in res.output and "Traceback" not in res.output
    assert not (tmp_path / "o.jsonl").exists()
    # held-out queries of another index score nothing: refused; those whose passages left the index: a note
    write_heldout([SynthQuery("elsewhere-0", "question", "what is bm25")], tmp_path / "other.jsonl", "passage")
    res = run(["synth", "eval", str(tmp_path / "other.jsonl")])
    assert res.exit_code != 0 and "none of the 1 held-out queries' passages is in index 'h'" in res.output
    write_heldout([*held, SynthQuery("elsewhere-0", "question", "what is bm25")], tmp_path / "some.jsonl", "passage")
    res = run(["synth", "eval", str(tmp_path / "some.jsonl")])
    assert res.exit_code == 0 and "1 of the 3 held-out queries name passages index h no longer holds" in res.output


def test_unanswerable_questions_become_negative_only_containment_pairs(tmp_path: Path) -> None:
    """`synth queries --unanswerable`: the second prompt's question is cached under its own key, and becomes a bce row
    (question, its own passage, 0) beside the answerable question's (question, passage, 1)."""
    pytest.importorskip("datasets", reason="the train extra is not installed")
    from local_rag.train.data import Example
    from local_rag.train.reranker import RerankerTraining, _dataset
    from local_rag.train.synth import unanswerable_examples

    llm = ScriptedLLM(json.dumps({"question": "What do cats eat?", "unanswerable": "How much does a cat cost?"}))
    cache = tmp_path / "cache.jsonl"
    written = QueryWriter(llm, "m", cache, prompt="synth_unanswerable")("d1-0", "Cats eat mice.")
    assert [(q.kind, q.text) for q in written] == [("question", "What do cats eat?"), ("unanswerable", "How much does a cat cost?")]
    assert "does NOT answer" in llm.seen[0][0]["content"]
    assert QueryWriter(ScriptedLLM("{}"), "m", cache)("d1-0", "Cats eat mice.") == []  # the other prompt: another key
    pairs = unanswerable_examples(written, {"d1-0": "Cats eat mice."})
    assert [(e.query, e.positive, e.negatives) for e in pairs] == [("How much does a cat cost?", "", ["Cats eat mice."])]
    copied = [SynthQuery("d1-0", "unanswerable", "cats eat MICE"),  # a sentence of its passage: it is answered
              SynthQuery("d2-0", "unanswerable", "Is it safe?"), SynthQuery("d3-0", "unanswerable", "is it safe")]
    assert unanswerable_examples(copied, {"d1-0": "Cats eat mice.", "d2-0": "Dogs bark.", "d3-0": "BM25 ranks."}) == []
    answerable = Example("t", "synth", "synth", "What do cats eat?", "Cats eat mice.", "d1-0", ["Dogs bark."], ["d2-0"])
    rows = _dataset([answerable, *pairs], RerankerTraining(loss="bce", negatives=1)).to_dict()
    assert sorted(zip(rows["query"], rows["passage"], rows["label"], strict=True)) == [
        ("How much does a cat cost?", "Cats eat mice.", 0.0), ("What do cats eat?", "Cats eat mice.", 1.0),
        ("What do cats eat?", "Dogs bark.", 0.0)]
    assert len(_dataset([answerable, *pairs], RerankerTraining(loss="listnet", negatives=1))) == 1  # needs a positive


def test_queries_about_the_prompts_example_are_dropped_unless_the_passage_names_it(tmp_path: Path) -> None:
    """A small model writes about the few-shot example (the Eiffel Tower) instead of its passage: 68 of the 748
    queries the 0.5B wrote in session 19. Dropped, unless the passage itself is about it; kept on request (the
    earlier runs' commands reproduce with --keep-example-copies)."""
    from local_rag.train.synth import example_names

    assert {"eiffel", "tower", "paris"} <= example_names("synth_queries") and "world" not in example_names("synth_queries")
    reply = json.dumps({"question": "What is the purpose of the Eiffel Tower?", "follow_up": "Who owns it?"})
    writer = QueryWriter(ScriptedLLM(reply), "m", None)
    assert [q.text for q in writer("d1-0", "Cats eat mice.")] == ["Who owns it?"] and writer.example_copies == 1
    assert len(QueryWriter(ScriptedLLM(reply), "m", None)("p", "The Eiffel Tower opened in 1889.")) == 2
    assert len(QueryWriter(ScriptedLLM(reply), "m", None, keep_example_copies=True)("d1-0", "Cats eat mice.")) == 2

"""Asking about some of the documents (`--only`, `/only`, ``local_rag.only``): patterns, their resolution against a
real index (bm25s segments, FAISS Flat and HNSW, Qdrant embedded), the pipeline, the CLI and the server."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from local_rag.errors import BadInputError
from local_rag.index import add_documents, build_index, open_index
from local_rag.index.chunkfile import ChunkFile
from local_rag.patterns import in_folder, matches, patterns_of
from local_rag.pipeline import Pipeline
from local_rag.records import Chunk, Conversation, Query, Turn
from local_rag.retrieve import HybridRetriever
from local_rag.retrieve.scope import Scope, document_table, resolve
from local_rag.settings import Settings

from .conftest import HashEmbedder, make_settings
from .llm_fixtures import ScriptedLLM

FILES = {
    "reports/2024/q1.md": "# Q1 2024\n\nRevenue in the first quarter of 2024 rose to 12 million; the cat food line sold best.",
    "reports/2024/q2.md": "# Q2 2024\n\nRevenue in the second quarter of 2024 was 14 million after the dog toy launch.",
    "reports/2023/q1.md": "# Q1 2023\n\nRevenue in the first quarter of 2023 was 9 million; cat food was new.",
    "notes/cats.md": "# Cats\n\nA cat sleeps twelve to sixteen hours a day. Cats purr, hunt mice and groom their fur.",
    "notes/revenue ideas.txt": "Revenue ideas: sell more cat food abroad, raise the price of the dog toy.",
}


def write_folder(root: Path, files: dict[str, str] = FILES) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def folder_index(tmp_path: Path) -> tuple[Settings, HashEmbedder, Path]:
    settings = make_settings(tmp_path, chunker={"tokenizer": "whitespace", "size": 12, "overlap": 3})
    embedder = HashEmbedder(settings.embedder)
    docs = write_folder(tmp_path / "docs")
    build_index(settings, docs, embedder=embedder, progress=False)
    return settings, embedder, docs


def hybrid_of(settings: Settings, embedder: HashEmbedder) -> HybridRetriever:
    return HybridRetriever(open_index(settings, model_checksum=embedder.checksum), settings, embedder)


REVENUE = [Query("revenue cat food")]


def test_patterns_name_a_file_a_folder_or_a_shell_pattern_without_regard_to_case():
    assert matches("reports/2024/q1.md", "reports/2024/q1.md") and matches("reports/2024/q1.md", "Reports/2024/")
    assert matches("reports/2024/q1.md", "*.MD") and matches("reports/2024/q1.md", "reports/*/q?.md")
    assert matches("reports\\2024\\q1.md", "reports/2024")  # an id with Windows separators
    assert not matches("reports/2024/q1.md", "reports/202") and not matches("reports/2024.md", "reports/2024")
    assert matches("reports/2024/q1.md", "reports/202?") and matches("src/build/x.md", "*/build")  # a folder's pattern
    assert not matches("src/builder/x.md", "*/build") and not matches("build.md", "*/build")
    assert not matches("a.md", "") and not matches("a.md", "  ")
    assert patterns_of(["a, b", " ", "c"]) == ("a", "b", "c")
    scope = Scope.of(["reports/2024", "*.txt"])
    assert scope and not Scope.of([" ", ""]) and not Scope()
    assert scope.matches("notes/revenue ideas.txt") and not scope.matches("reports/2023/q1.md")
    narrowed = scope.narrow(["*/q1.md"])
    assert narrowed.matches("reports/2024/q1.md") and not narrowed.matches("notes/revenue ideas.txt")
    assert narrowed.describe() == "reports/2024, *.txt and */q1.md" and scope.narrow([]) is scope
    assert Scope().describe() == "all documents" and narrowed.to_json() == [["reports/2024", "*.txt"], ["*/q1.md"]]


def test_a_path_as_the_shell_shows_it_is_read_inside_the_indexed_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    docs = write_folder(tmp_path / "docs")
    monkeypatch.chdir(tmp_path)
    assert in_folder("docs/reports/2024", "docs") == "reports/2024"
    assert in_folder(str(docs / "notes" / "cats.md"), "docs") == "notes/cats.md"  # absolute, source relative
    assert in_folder(str(docs), "docs") == "*" and in_folder("docs/", str(docs)) == "*"
    assert in_folder("notes/cats.md", "docs") == "notes/cats.md"  # already inside: unchanged
    assert in_folder("*.md", "corpus.jsonl") == "*.md" and in_folder("docs/x", "") == "docs/x"


def test_patterns_that_match_nothing_are_named_with_the_nearest_documents():
    names = sorted(FILES)
    codes = np.array([0, 0, 1, 2, 3, 4, 4], dtype=np.int32)
    with pytest.raises(BadInputError) as error:
        resolve(Scope.of(["report/2024"]), names, codes, index="notes")
    message = str(error.value)
    assert message.startswith("--only 'report/2024' matches no document of index 'notes' (5 documents")
    assert "did you mean 'reports/2024'" in message
    with pytest.raises(BadInputError, match=r"^/only 'nothing\*' matches no document of the index .*, \.\.\.; "
                       r"`local-rag index documents` lists them\)$"):
        resolve(Scope.of(["nothing*"]), names, codes, what="/only")
    with pytest.raises(BadInputError, match="no document of the index is in all of notes and reports"):
        resolve(Scope.of(["notes"]).narrow(["reports"]), names, codes)
    found = resolve(Scope.of(["notes", "reports/2023"]), names, codes)
    assert found.documents == ("notes/cats.md", "notes/revenue ideas.txt", "reports/2023/q1.md")
    assert found.mask.tolist() == [True, True, True, True, False, False, False] and found.rows == 4


def test_a_pattern_that_names_no_id_names_documents_by_their_title():
    """Session 53 left it so: ``--only 'Annual report'`` found nothing unless a file was so named. Now a group of
    patterns that names no document by its id is matched against the titles (words in order, or a shell pattern);
    a group that names some by id is not (``cats`` the folder, not every title with the word)."""
    names = sorted(FILES)  # notes/cats.md, notes/revenue ideas.txt, reports/2023/q1.md, reports/2024/q1.md, q2.md
    titles = ["Cats", "Revenue ideas", "Q1 2023", "Annual Report 2024, first quarter", "Q2 2024"]
    codes = np.array([0, 1, 2, 3, 4], dtype=np.int32)
    asked = []

    def read_titles() -> list[str]:
        asked.append(1)
        return titles

    assert resolve(Scope.of(["annual report"]), names, codes, titles=read_titles).documents == ("reports/2024/q1.md",)
    assert resolve(Scope.of(["q? 202*"]), names, codes, titles=read_titles).documents == (
        "reports/2023/q1.md", "reports/2024/q2.md")
    assert resolve(Scope.of(["notes"]), names, codes, titles=read_titles).documents == (
        "notes/cats.md", "notes/revenue ideas.txt")
    assert len(asked) == 2  # titles are read only when no id matches
    with pytest.raises(BadInputError, match="'report annual' matches no document"):
        resolve(Scope.of(["report annual"]), names, codes, titles=read_titles)


def test_the_document_table_of_a_chunk_file_is_read_without_parsing_a_row(tmp_path: Path):
    """The scan of ``chunks.jsonl`` for ``doc_id`` keys gives what parsing every row gives, whatever the ids and texts
    hold (quotes, backslashes, other scripts, the key's own spelling inside a text)."""
    ids = ['a"quoted".md', "back\\slash.md", "日本/文書.md", "plain.md", "plain.md"]
    path = tmp_path / "chunks.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i, doc in enumerate(ids):
            text = 'the text says "doc_id": "evil.md" here' if i == 3 else f"text {i}"
            fh.write(json.dumps(Chunk(f"c{i}", f"p{i}", doc, text).to_json(), ensure_ascii=False) + "\n")
    chunks = ChunkFile(path)
    names, codes = document_table(chunks)
    assert [names[c] for c in codes] == ids == [c.doc_id for c in chunks]
    parsed_names, parsed_codes = document_table(list(chunks))  # a list of chunks (a Qdrant index's): read one by one
    assert parsed_names == names and np.array_equal(parsed_codes, codes)
    assert ChunkFile(path).scan(__import__("re").compile(rb'"nope": "(x)"'), bytes) is None


def brute(vectors: np.ndarray, query: np.ndarray, mask: np.ndarray, k: int) -> list[int]:
    scores = vectors.astype(np.float32) @ query
    rows = np.flatnonzero(mask)
    return sorted(rows.tolist(), key=lambda r: (-scores[r], r))[:k]


@pytest.mark.parametrize("factory", ["Flat", "HNSW8"])
def test_scoped_dense_search_is_exact_over_the_scope_whatever_the_faiss_index(factory: str, monkeypatch: pytest.MonkeyPatch):
    """An HNSW walk (or an IVF list) holds few rows of a narrow scope; the scoped search scores every row of it."""
    from local_rag.index import dense as dense_module
    from local_rag.index.dense import DenseIndex
    from local_rag.settings import DenseConfig

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(500, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = DenseIndex.build(vectors, DenseConfig(factory=factory))
    monkeypatch.setattr(dense_module, "SUBSET_BLOCK", 7)  # many blocks: the running top k is merged across them
    mask = np.zeros(500, dtype=bool)
    mask[rng.choice(500, 23, replace=False)] = True
    query = vectors[3] * 0.5 + vectors[400] * 0.5
    rows, scores = index.search_rows(query[None, :], 10, mask)
    assert rows[0].tolist() == brute(index.vectors, query, mask, 10) and mask[rows[0]].all()
    assert np.all(np.diff(scores[0]) <= 0)
    rows, _ = index.search_rows(query[None, :], 50, mask)  # more asked than the scope holds
    assert sorted(rows[0].tolist()) == np.flatnonzero(mask).tolist()


def test_a_wide_scope_goes_through_an_ivf_index_and_a_narrow_one_it_would_miss_is_searched_exactly(
        monkeypatch: pytest.MonkeyPatch):
    from local_rag.index import dense as dense_module
    from local_rag.index.dense import DenseIndex
    from local_rag.settings import DenseConfig

    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(4000, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = DenseIndex.build(vectors, DenseConfig(factory="IVF64,Flat", nprobe=2))
    monkeypatch.setattr(dense_module, "EXACT_ROWS", 0)  # every scope tries the index's own search first
    calls: list[int] = []
    exact = index._exact
    monkeypatch.setattr(index, "_exact", lambda q, k, rows: calls.append(len(rows)) or exact(q, k, rows))
    query = vectors[10][None, :]
    wide = np.arange(4000) % 2 == 0  # half of the rows: 2 lists of 64 hold enough of them
    rows, _ = index.search_rows(query, 20, wide)
    assert (rows >= 0).all() and wide[rows].all() and calls == []
    narrow = np.zeros(4000, dtype=bool)
    narrow[rng.choice(4000, 30, replace=False)] = True  # 2 of 64 lists hold ~1 of these 30 rows
    rows, _ = index.search_rows(query, 20, narrow)
    assert calls == [30] and rows[0].tolist() == brute(index.vectors, query[0], narrow, 20)


def test_a_scoped_search_returns_only_the_scope_with_the_scores_of_an_unscoped_one(folder_index):
    settings, embedder, _ = folder_index
    hybrid = hybrid_of(settings, embedder)
    everywhere = hybrid.search(REVENUE, top_k=20)
    assert {h.doc_id for h in everywhere} > {"reports/2024/q1.md", "reports/2023/q1.md"}
    scope = Scope.of(["reports/2024"])
    scoped = hybrid.search(REVENUE, top_k=20, scope=scope)
    assert scoped and {h.doc_id for h in scoped} == {"reports/2024/q1.md", "reports/2024/q2.md"}
    for name, retriever in hybrid.retrievers.items():  # each list: the unscoped list's passages of the scope
        alone = retriever.search([REVENUE[0].text], k=50)[0]
        within = retriever.search([REVENUE[0].text], k=50, scoped=hybrid.scoped(scope))[0]
        expected = [h for h in alone if h.doc_id.startswith("reports/2024/")]
        assert [h.passage_id for h in within] == [h.passage_id for h in expected], name
        assert np.allclose([h.score for h in within], [h.score for h in expected], atol=1e-6), name
    unscoped = hybrid.search(REVENUE, top_k=20, scope=Scope())
    assert [(h.passage_id, h.score) for h in unscoped] == [(h.passage_id, h.score) for h in everywhere]
    with pytest.raises(BadInputError, match="did you mean 'reports/2024'"):
        hybrid.search(REVENUE, scope=Scope.of(["reports/2042"]))
    assert hybrid.search([Query("zzzz qqqq")], scope=Scope.of(["notes/cats.md"]))  # dense ranks every kept row


def test_a_scope_spans_the_segments_an_added_folder_writes(folder_index, tmp_path: Path):
    settings, embedder, _ = folder_index
    more = write_folder(tmp_path / "more", {"reports/2025/q1.md": "# Q1 2025\n\nRevenue in 2025 rose again: cat food."})
    add_documents(settings, more, embedder=embedder, progress=False)
    hybrid = hybrid_of(settings, embedder)
    assert hybrid.folder.sparse is not None and len(hybrid.folder.sparse.retrievers) == 2  # a second bm25s segment
    for pattern, expected in (("reports/2025", {"reports/2025/q1.md"}), ("*/q1.md", {"reports/2024/q1.md",
                              "reports/2023/q1.md", "reports/2025/q1.md"})):
        hits = hybrid.search(REVENUE, top_k=20, scope=Scope.of([pattern]))
        assert {h.doc_id for h in hits} == expected
        assert {h.doc_id for h in hybrid.retrievers["bm25"].search(["revenue"], k=20,
                                                                     scoped=hybrid.scoped(Scope.of([pattern])))[0]} == expected


def test_a_qdrant_index_filters_by_document(tmp_path: Path):
    pytest.importorskip("qdrant_client")
    settings = make_settings(tmp_path, chunker={"tokenizer": "whitespace", "size": 12, "overlap": 3},
                             backend={"name": "qdrant"})
    embedder = HashEmbedder(settings.embedder)
    build_index(settings, write_folder(tmp_path / "docs"), embedder=embedder, progress=False)
    hybrid = hybrid_of(settings, embedder)
    hits = hybrid.search(REVENUE, top_k=20, scope=Scope.of(["reports/2023", "notes/*.txt"]))
    assert {h.doc_id for h in hits} == {"reports/2023/q1.md", "notes/revenue ideas.txt"}
    assert {"bm25:lastturn", "dense:lastturn"} <= {k for h in hits for k in h.scores}


def test_the_pipeline_answers_from_the_scope_and_says_so_in_the_trace(folder_index):
    settings, embedder, _ = folder_index
    settings = settings.model_copy(deep=True)
    settings.pipeline.rewrite = False
    pipeline = Pipeline(settings, retriever=hybrid_of(settings, embedder), llm=ScriptedLLM("Revenue rose [1]."))
    conversation = Conversation([Turn("user", "how did revenue from cat food go?")])
    statuses: list[str] = []
    result = pipeline.answer(conversation, on_status=statuses.append, scope=pipeline.scope(["reports/2023"]))
    assert statuses[0] == "Searching 1 document…"  # what a chat user sees first
    assert result.passages and {h.doc_id for h in result.passages} == {"reports/2023/q1.md"}
    assert {h.doc_id for h in result.retrieved} == {"reports/2023/q1.md"}
    assert {"type": "scope", "stage": "retrieval", "documents": 1,
            "text": "searched 1 document(s): reports/2023"} in result.trace
    assert "scope" in json.dumps(result.to_json()["trace"])
    settings.retrieval.only = ["notes"]  # the settings' scope is the default, and a turn's patterns narrow it
    assert {h.doc_id for h in pipeline.answer(conversation).passages} <= {"notes/cats.md", "notes/revenue ideas.txt"}
    assert {h.doc_id for h in pipeline.answer(conversation, scope=pipeline.scope(["*.txt"])).passages} == {
        "notes/revenue ideas.txt"}
    with pytest.raises(BadInputError, match="no document of index 'test' is in all of notes and reports"):
        pipeline.scope(["reports"])
    settings.retrieval.only = []
    assert not any(step["type"] == "scope" for step in pipeline.answer(conversation, on_status=statuses.append).trace)
    assert "Searching…" in statuses and not any(s.startswith("Searching ") for s in statuses[1:])


def test_search_and_ask_take_only_and_name_a_pattern_that_matches_nothing(tmp_path: Path):
    """The CLI: a path as the shell shows it (``docs/reports/2024``), a pattern; a typo is one line before any model
    loads (`ask` needs no LLM to say it)."""
    from .test_cli import assert_clean_error, run

    write_folder(tmp_path / "docs")
    assert run("index", "build", "docs", "--sparse-only", cwd=tmp_path).returncode == 0
    result = run("search", "revenue cat food", "--only", "docs/reports/2024", "--only", "*.txt", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert {h["doc_id"] for h in data["hits"]} == {"reports/2024/q1.md", "reports/2024/q2.md", "notes/revenue ideas.txt"}
    assert data["scope"] == {"only": [["docs/reports/2024", "*.txt"]], "documents": [
        "notes/revenue ideas.txt", "reports/2024/q1.md", "reports/2024/q2.md"]}
    table = run("search", "revenue", "--only", "reports/2023", cwd=tmp_path)
    assert table.returncode == 0 and "in 1 document(s) of reports/2023" in table.stdout, table.stderr
    for command in ("search", "ask"):
        assert_clean_error(run(command, "revenue", "--only", "report/2024", cwd=tmp_path), 2,
                           "--only 'report/2024' matches no document of index 'default' (5 documents, named by their "
                           "path in the folder or their id, or by words of their title: notes/cats.md, notes/revenue ideas.txt, reports/2023/q1.md, "
                           "...; `local-rag index documents default` lists them); did you mean 'reports/2024'")
    listed = run("index", "documents", "--only", "*/q1.md", cwd=tmp_path)  # what a scope would search
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["       1  reports/2023/q1.md  (Q1 2023)", "       1  reports/2024/q1.md  (Q1 2024)"]
    assert "2 document(s), 2 chunk(s)" in listed.stderr
    every = json.loads(run("index", "documents", "default", "--json", cwd=tmp_path).stdout)
    assert [d["document"] for d in every] == sorted(FILES) and all(d["chunks"] >= 1 for d in every)
    assert {d["document"]: d["title"] for d in every}["notes/cats.md"] == "Cats"
    assert_clean_error(run("index", "documents", "--only", "q9", cwd=tmp_path), 2, "--only 'q9' matches no document")
    # session 55: a document named by its title, as a user remembers it, when no id matches
    titled = run("search", "revenue", "--only", "Q2  2024", "--json", cwd=tmp_path)
    assert titled.returncode == 0, titled.stderr
    assert json.loads(titled.stdout)["scope"]["documents"] == ["reports/2024/q2.md"]
    listed = run("index", "documents", "--only", "q1 20*", cwd=tmp_path)
    assert listed.stdout.splitlines() == ["       1  reports/2023/q1.md  (Q1 2023)", "       1  reports/2024/q1.md  (Q1 2024)"]


def scoped_server(folder_index, only: list[str] | None = None,
                  collections: dict[str, list[str]] | None = None) -> tuple[object, Settings]:
    """The real app over the folder index (scripted LLM, no rewrite), with ``serve --only`` and collections."""
    pytest.importorskip("uvicorn")
    from local_rag.server import create_app
    from local_rag.settings import ServerConfig

    settings, embedder, _ = folder_index
    settings = settings.model_copy(deep=True)
    settings.pipeline.rewrite = False
    settings.retrieval.only = list(only or [])
    settings.server = ServerConfig(collections=collections or {})
    pipeline = Pipeline(settings, retriever=hybrid_of(settings, embedder), llm=ScriptedLLM("Rose [1]."))
    return create_app(settings, pipeline), settings


def test_the_server_answers_a_request_about_some_documents_and_refuses_a_bad_one(folder_index):
    """``extra_body={"local_rag": {"only": [...]}}`` with the openai client; ``serve --only`` is the server's scope,
    which a request narrows and never widens, shown by /healthz."""
    openai, httpx = pytest.importorskip("openai"), pytest.importorskip("httpx")
    from .test_server import client, running

    app, _ = scoped_server(folder_index, only=["reports"])
    messages = [{"role": "user", "content": "how did revenue from cat food go?"}]
    with running(app) as url:
        assert httpx.get(f"{url}/healthz").json()["only"] == ["reports"]
        oa = client(url)
        served = oa.chat.completions.create(model="m", messages=messages).model_extra["local_rag"]
        assert served["passages"] and {p["doc_id"] for p in served["passages"]} <= {
            "reports/2024/q1.md", "reports/2024/q2.md", "reports/2023/q1.md"}
        scoped = oa.chat.completions.create(model="m", messages=messages,
                                            extra_body={"local_rag": {"only": ["*/2023/*"]}}).model_extra["local_rag"]
        assert {p["doc_id"] for p in scoped["passages"]} == {"reports/2023/q1.md"}
        assert any(step["type"] == "scope" and step["documents"] == 1 for step in scoped["trace"])
        for body, pattern in (({"only": ["notes"]}, "no document of index 'test' is in all of reports and notes"),
                              ({"only": ["reprots/2024"]}, "local_rag.only 'reprots/2024' matches no document"),
                              ({"only": [3]}, "local_rag.only: a list of document paths or patterns"),
                              ({"onyl": ["x"]}, "local_rag: unknown key(s) 'onyl' (known: only)"),
                              ({"only": [f"d{i}" for i in range(300)]}, "local_rag.only: 300 patterns, at most 256"),
                              ("reports", "local_rag: expected an object")):
            with pytest.raises(openai.BadRequestError) as error:
                oa.chat.completions.create(model="m", messages=messages, extra_body={"local_rag": body})
            assert pattern in error.value.body["message"], error.value.body
        streamed = oa.chat.completions.create(model="m", messages=messages, stream=True,
                                              extra_body={"local_rag": {"only": "reports/2024/q2.md"}})
        assert "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
        assert httpx.get(f"{url}/healthz").json()["turns"]["served"] == 3


def test_every_search_of_an_agentic_turn_keeps_to_the_scope(folder_index):
    from local_rag.agent.pipeline import AgenticPipeline

    settings, embedder, _ = folder_index
    replies = ["<search>revenue cat food</search>", "<search>cats sleep</search>", "<answer>It rose [1].</answer>"]
    llm = ScriptedLLM(lambda messages, stage: replies.pop(0) if replies else "")
    agent = AgenticPipeline(settings, retriever=hybrid_of(settings, embedder), llm=llm)
    turn = agent.answer(Conversation([Turn("user", "how did revenue go?")]), scope=agent.scope(["reports/2024/q2.md"]))
    assert len(turn.queries) == 2 and turn.retrieved
    assert {h.doc_id for h in turn.retrieved} == {"reports/2024/q2.md"}  # cats sleep: still only the scope's passages
    assert turn.trace[0] == {"type": "scope", "stage": "retrieval", "documents": 1,
                             "text": "searched 1 document(s): reports/2024/q2.md"}
    assert not any(s["type"] == "scope" for s in agent.answer(Conversation([Turn("user", "and now?")])).trace)


def test_the_scope_benchmark_runs_small(tmp_path: Path):
    """`scripts/bench_scope.py`'s figures, on 2,000 rows: every share's scope holds the rows its pattern names."""
    from local_rag.bench.scope import SCOPES, run

    figures = run(2000, 2000, tmp_path, repeat=1)
    assert figures["documents"] == 100 and figures["dense_factory"] == "Flat" and figures["document_table_s"] >= 0
    assert [c["share"] for c in figures["cells"]] == list(SCOPES)
    assert [c["scoped_rows"] for c in figures["cells"]] == [20, 20, 200, 1000, 2000]  # 100 documents in 1,000 folders
    assert all(c["dense_scoped_ms"] >= 0 and c["bm25_scoped_ms"] >= 0 for c in figures["cells"])


def test_server_collections_are_models_of_their_own_that_pick_their_documents(folder_index):
    """``serve --collection reports=reports --collection notes=notes/*.txt``: /v1/models lists one model per
    collection (Open WebUI shows them in its model picker, where a request body cannot be edited); a request for one
    is answered from its documents only, a request's ``local_rag.only`` narrows it further, and any other model id
    still gets the whole index."""
    openai, httpx = pytest.importorskip("openai"), pytest.importorskip("httpx")
    from local_rag.server import create_app
    from local_rag.settings import ServerConfig

    from .test_server import client, running

    app, settings = scoped_server(folder_index, collections={"reports": ["reports"], "ideas": ["notes/*.txt"]})
    embedder = folder_index[1]
    messages = [{"role": "user", "content": "how did revenue from cat food go?"}]
    model = "smollm2-135m-instruct"
    with running(app) as url:
        oa = client(url)
        assert [m.id for m in oa.models.list().data] == [model, f"{model}:reports", f"{model}:ideas"]
        assert oa.models.retrieve(f"{model}:ideas").id == f"{model}:ideas"
        assert httpx.get(f"{url}/healthz").json()["collections"] == {"reports": ["reports"], "ideas": ["notes/*.txt"]}

        def docs(model_id: str, **extra: object) -> set[str]:
            reply = oa.chat.completions.create(model=model_id, messages=messages, **extra)
            assert reply.model == (model_id if model_id.startswith(model) else model)  # the collection's id echoed
            return {p["doc_id"] for p in reply.model_extra["local_rag"]["passages"]}

        assert docs(f"{model}:ideas") == {"notes/revenue ideas.txt"}
        assert docs(f"{model}:reports") <= {"reports/2024/q1.md", "reports/2024/q2.md", "reports/2023/q1.md"}
        assert docs(f"{model}:reports", extra_body={"local_rag": {"only": ["*2023*"]}}) == {"reports/2023/q1.md"}
        assert "notes/cats.md" in docs(model) | docs("gpt-4o")  # the server's model, or a placeholder: everything
        with pytest.raises(openai.BadRequestError, match="no document of index 'test' is in all of notes/\\*.txt and"):
            docs(f"{model}:ideas", extra_body={"local_rag": {"only": ["reports"]}})
    bad = settings.model_copy(deep=True)
    bad.server = ServerConfig(collections={"typo": ["reprots"]})  # checked when the server starts, with the others
    with pytest.raises(BadInputError, match="collection 'typo': 'reprots' matches no document of index 'test'"):
        create_app(bad, Pipeline(bad, retriever=hybrid_of(bad, embedder), llm=ScriptedLLM("x")))


def test_serve_collection_option_and_setting_are_checked(tmp_path: Path):
    from pydantic import ValidationError

    from local_rag.cli.serve import parse_collections
    from local_rag.settings import ServerConfig

    from .test_cli import assert_clean_error, run

    assert parse_collections(("reports=reports/2024,*.pdf", " hr = handbook ")) == {
        "reports": ["reports/2024", "*.pdf"], "hr": ["handbook"]}
    for value, message in (("reports", "expected NAME=PATTERN"), ("=x", "expected NAME=PATTERN"),
                           ("r=", "expected NAME=PATTERN")):
        with pytest.raises(BadInputError, match=message):
            parse_collections((value,))
    with pytest.raises(BadInputError, match="--collection 'a' is given twice"):
        parse_collections(("a=x", "a=y"))
    with pytest.raises(ValidationError, match="letters, digits"):
        ServerConfig(collections={"my docs": ["x"]})
    with pytest.raises(ValidationError, match="names no document pattern"):
        ServerConfig(collections={"empty": [" "]})
    assert_clean_error(run("serve", "--collection", "reports", cwd=tmp_path), 2,
                       "--collection 'reports': expected NAME=PATTERN[,PATTERN]")  # before anything loads

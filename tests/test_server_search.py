"""OpenAI's vector store search (`local_rag.server.search`) on the real server over a real tiny index (BM25 and
FAISS), driven by the official `openai` client (``vector_stores.list``, ``retrieve``, ``search``) and raw HTTP: the
results are the retriever's own, a collection and the filters keep to their documents, the LLM is never called,
and bad requests are one-line 400s the server lives through."""

from __future__ import annotations

import pytest

from local_rag.records import Query

from .test_server import SlowLLM, app_for, client, index, running  # noqa: F401 - `index` is a fixture

httpx = pytest.importorskip("httpx")


def test_search_with_the_openai_client_is_the_retrievers_search_without_the_llm(index):  # noqa: F811
    settings, retriever = index
    llm = SlowLLM()
    with running(app_for(index, llm)) as url:
        oa = client(url)
        stores = oa.vector_stores.list()
        store = oa.vector_stores.retrieve("test")
        page = oa.vector_stores.search(vector_store_id="test", query="how long do cats sleep?", max_num_results=3)
        two = oa.vector_stores.search(vector_store_id="test", query=["cats sleep", "search engines rank documents"])
    assert [s.id for s in stores.data] == ["test"] and store.status == "completed"
    assert store.file_counts.completed == store.file_counts.total == 5 and store.usage_bytes > 0
    expected = retriever.search([Query("how long do cats sleep?")], top_k=3)
    assert [(r.file_id, r.attributes["passage_id"]) for r in page.data] == [(h.doc_id, h.passage_id) for h in expected]
    first = page.data[0]
    assert first.file_id == first.filename == "d1" and first.attributes["title"] == "Cats"
    assert "sixteen hours" in first.content[0].text and first.content[0].type == "text"
    assert [r.score for r in page.data] == sorted((r.score for r in page.data), reverse=True)
    assert page.search_query == ["how long do cats sleep?"]
    assert {"d1", "d3"} <= {r.file_id for r in two.data}  # two queries: their lists fused
    assert llm.seen == []  # retrieval alone


def test_a_collection_and_the_filters_keep_to_their_documents(index):  # noqa: F811
    with running(app_for(index, SlowLLM(), collections={"pets": ["d1", "d2"]})) as url:
        oa = client(url)
        assert [s.id for s in oa.vector_stores.list().data] == ["test", "test:pets"]
        assert oa.vector_stores.retrieve("test:pets").file_counts.completed == 2
        pets = oa.vector_stores.search(vector_store_id="test:pets", query="search engines score documents")
        only = oa.vector_stores.search(vector_store_id="test", query="cats", filters={
            "type": "eq", "key": "filename", "value": "d3"})
        either = oa.vector_stores.search(vector_store_id="test", query="cats", filters={
            "type": "or", "filters": [{"type": "eq", "key": "filename", "value": "d2"},
                                      {"type": "in", "key": "file_id", "value": ["d4", "d5"]}]})
        both = oa.vector_stores.search(vector_store_id="test:pets", query="cats", filters={
            "type": "in", "key": "filename", "value": ["d2", "d3"]})
        none = oa.vector_stores.search(vector_store_id="test", query="cats", ranking_options={
            "ranker": "none", "score_threshold": 1e9})
    assert pets.data and {r.file_id for r in pets.data} <= {"d1", "d2"}
    assert {r.file_id for r in only.data} == {"d3"}
    assert {r.file_id for r in either.data} == {"d2", "d4", "d5"}
    assert {r.file_id for r in both.data} == {"d2"}  # the collection's documents and the filter's
    assert none.data == []  # nothing scores that high


@pytest.mark.parametrize("path, body, status, code, says", [
    ("/v1/vector_stores/test/search", {"max_num_results": 3}, 400, "invalid_request", "needs 'query'"),
    ("/v1/vector_stores/test/search", {"query": "   "}, 400, "invalid_request", "'query' is empty"),
    ("/v1/vector_stores/test/search", {"query": [1, 2]}, 400, "invalid_request", "list of strings"),
    ("/v1/vector_stores/test/search", {"query": "cats", "max_num_results": 51}, 400, "invalid_request", "1 to 50"),
    ("/v1/vector_stores/test/search", {"query": "cats", "max_num_results": True}, 400, "invalid_request", "1 to 50"),
    ("/v1/vector_stores/test/search", {"query": "cats", "rewrite_query": True}, 400, "invalid_request",
     "searched as written"),
    ("/v1/vector_stores/test/search", {"query": "cats", "ranking_options": {"ranker": "best"}}, 400,
     "invalid_request", "'ranking_options.ranker'"),
    ("/v1/vector_stores/test/search", {"query": "cats", "filters": {"type": "gt", "key": "page", "value": 3}}, 400,
     "invalid_request", "only 'eq' and 'in' on the document"),
    ("/v1/vector_stores/test/search", {"query": "cats", "filters": {"type": "eq", "key": "filename",
                                                                    "value": "minutes.pdf"}}, 400,
     "invalid_request", "matches no document"),
    ("/v1/vector_stores/test/search", b'{"query": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 400, "invalid_json", ""),
    ("/v1/vector_stores/other/search", {"query": "cats"}, 404, "not_found", "no vector store 'other'"),
])
def test_bad_searches_are_one_line_errors_and_the_server_lives_on(index, path, body, status, code, says):  # noqa: F811
    with running(app_for(index, SlowLLM())) as url:
        sent = {"content": body} if isinstance(body, bytes) else {"json": body}
        r = httpx.post(f"{url}{path}", timeout=30, **sent)
        assert r.status_code == status and r.json()["error"]["code"] == code, r.text
        assert says in r.json()["error"]["message"] and "\n" not in r.json()["error"]["message"]
        again = httpx.post(f"{url}/v1/vector_stores/test/search", json={"query": "cats"}, timeout=30)
        assert again.status_code == 200 and again.json()["data"]
        assert httpx.get(f"{url}/v1/vector_stores/nothing", timeout=30).status_code == 404


def test_the_search_is_behind_the_key(index):  # noqa: F811
    with running(app_for(index, SlowLLM(), api_key="k3y")) as url:
        r = httpx.post(f"{url}/v1/vector_stores/test/search", json={"query": "cats"}, timeout=30)
        assert r.status_code == 401 and httpx.get(f"{url}/v1/vector_stores", timeout=30).status_code == 401
        assert client(url, key="k3y").vector_stores.search(vector_store_id="test", query="cats").data


def test_a_search_finds_what_a_sync_beside_the_server_added(tmp_path):
    """`index sync --watch` beside `serve`: the next search reopens the index (as the next turn does), with no turn
    in between; the vector store's file count follows."""
    from local_rag.index.sync import sync_index
    from local_rag.pipeline import Pipeline
    from local_rag.server import create_app

    from .test_sync import rivers_index

    settings, folder = rivers_index(tmp_path)
    app = create_app(settings, Pipeline(settings, llm=SlowLLM()), load=False)
    with running(app) as url:
        oa = client(url)
        assert oa.vector_stores.search(vector_store_id="notes", query="glacier moraine").data == []
        (folder / "b.md").write_text("# Glaciers\n\nA moraine is debris a glacier left behind.\n")
        sync_index(settings, folder, progress=False)
        page = oa.vector_stores.search(vector_store_id="notes", query="glacier moraine")
        assert [(r.filename, r.attributes["title"]) for r in page.data] == [("b.md", "Glaciers")]
        assert oa.vector_stores.retrieve("notes").file_counts.completed == 2


def test_the_stores_documents_are_listed_as_files_page_by_page(index):  # noqa: F811
    """``vector_stores.files.list`` pages through the documents (the client follows ``after``), ``retrieve`` gives
    one, a collection lists its own; the index is read-only, and an index of records has no file text to give."""
    with running(app_for(index, SlowLLM(), collections={"pets": ["d1", "d2"]})) as url:
        oa = client(url)
        every = list(oa.vector_stores.files.list(vector_store_id="test", limit=2, order="asc"))
        first = oa.vector_stores.files.list(vector_store_id="test", limit=2)
        pets = list(oa.vector_stores.files.list(vector_store_id="test:pets"))
        one = oa.vector_stores.files.retrieve(file_id="d3", vector_store_id="test")
        before = httpx.get(f"{url}/v1/vector_stores/test/files", params={"order": "asc", "before": "d4", "limit": 2})
        failed = httpx.get(f"{url}/v1/vector_stores/test/files", params={"filter": "failed"})
        bad = [httpx.get(f"{url}/v1/vector_stores/test/files", params=p) for p in
               ({"limit": "0"}, {"limit": "ten"}, {"order": "up"}, {"after": "d9"}, {"filter": "done"})]
        missing = httpx.get(f"{url}/v1/vector_stores/test/files/d9")
        records = httpx.get(f"{url}/v1/vector_stores/test/files/d3/content")
        outside = httpx.get(f"{url}/v1/vector_stores/test:pets/files/d3")
    assert [f.id for f in every] == ["d1", "d2", "d3", "d4", "d5"]  # three pages of two, followed by the client
    assert [f.id for f in first.data] == ["d5", "d4"] and first.has_more  # desc by default, as OpenAI's
    assert [f.id for f in pets] == ["d2", "d1"]
    assert one.id == "d3" and one.status == "completed" and one.vector_store_id == "test"
    assert one.attributes == {"title": "BM25", "chunks": 3} and one.last_error is None
    assert [f["id"] for f in before.json()["data"]] == ["d2", "d3"] and before.json()["has_more"]
    assert failed.json()["data"] == []
    for r in bad:
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request" and "\n" not in r.text
    assert missing.status_code == 404 and "no file 'd9' in vector store 'test'" in missing.json()["error"]["message"]
    assert records.status_code == 400 and "holds records" in records.json()["error"]["message"]
    assert outside.status_code == 404


def test_a_folder_index_gives_its_files_sizes_times_text_and_what_it_could_not_read(tmp_path):
    from local_rag.index.sync import sync_index
    from local_rag.pipeline import Pipeline
    from local_rag.server import create_app

    from .test_sync import rivers_index

    settings, folder = rivers_index(tmp_path)
    (folder / "trips").mkdir()
    (folder / "trips" / "alps.md").write_text("# Alps\n\nA moraine is debris a glacier left behind.\n\n## Huts\n\nBook early.\n")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    sync_index(settings, folder, progress=False)
    app = create_app(settings, Pipeline(settings, llm=SlowLLM()), load=False)
    with running(app) as url:
        oa = client(url)
        files = list(oa.vector_stores.files.list(vector_store_id="notes", order="asc"))
        alps = oa.vector_stores.files.retrieve(file_id="trips/alps.md", vector_store_id="notes")
        text = oa.vector_stores.files.content(file_id="trips/alps.md", vector_store_id="notes")
        failed = httpx.get(f"{url}/v1/vector_stores/notes/files", params={"filter": "failed"}).json()["data"]
        (folder / "trips" / "alps.md").unlink()
        gone = httpx.get(f"{url}/v1/vector_stores/notes/files/trips/alps.md/content")
    assert [(f.id, f.status) for f in files] == [("a.md", "completed"), ("broken.pdf", "failed"),
                                                 ("trips/alps.md", "completed")]
    stat = (folder / "a.md").stat()
    assert files[0].usage_bytes == stat.st_size and files[0].created_at == int(stat.st_mtime)
    assert files[1].last_error.code == "invalid_file" and files[1].last_error.message
    assert alps.attributes["title"] == "Alps" and alps.usage_bytes > 0
    whole = "".join(part.text for part in text)
    assert "A moraine is debris" in whole and "## Huts" in whole and "Book early." in whole
    assert [f["id"] for f in failed] == ["broken.pdf"]
    assert gone.status_code == 400 and "no longer in" in gone.json()["error"]["message"]

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

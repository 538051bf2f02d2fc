"""The server next to the tools people use: ``/v1/embeddings`` with the local embedder, the plain-text "Sources:"
footer, and LangChain's `ChatOpenAI` (invoke and stream) and `OpenAIEmbeddings` against the live server."""

from __future__ import annotations

import numpy as np
import pytest

from .test_server import ANSWER, CONV, SlowLLM, app_for, client, index, running  # noqa: F401 - `index` is a fixture

httpx = pytest.importorskip("httpx")


def test_embeddings_with_the_openai_client_are_the_index_embedders(index):  # noqa: F811
    settings, retriever = index
    embedder = retriever.retrievers["dense"].embedder
    texts = ["how long do cats sleep?", "reciprocal rank fusion"]
    with running(app_for(index, SlowLLM())) as url:
        reply = client(url).embeddings.create(model="any", input=texts)  # the openai client asks for base64
        one = client(url).embeddings.create(model="any", input=texts[0], encoding_format="float")
    got = np.array([d.embedding for d in reply.data], dtype=np.float32)
    assert [d.index for d in reply.data] == [0, 1] and reply.object == "list"
    np.testing.assert_allclose(got, embedder.embed(texts, kind="query"), atol=1e-6)
    np.testing.assert_allclose(one.data[0].embedding, got[0], atol=1e-6)
    assert reply.usage.total_tokens > 0


@pytest.mark.parametrize("body, code", [({"input": [[1, 2, 3]]}, "invalid_input"), ({"input": []}, "invalid_input"),
                                        ({"model": "x"}, "invalid_request"),
                                        ({"input": "a", "encoding_format": "int8"}, "invalid_request"),
                                        ({"input": ["cats", "  "]}, "invalid_input"),  # session 52: was embedded
                                        # session 52: these two were a 500 (RecursionError, ValueError) on this route
                                        (b'{"input": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", "invalid_json"),
                                        (b'{"input": "a", "user": ' + b"9" * 5000 + b"}", "invalid_json")])
def test_bad_embedding_requests_get_a_400(index, body, code):  # noqa: F811
    with running(app_for(index, SlowLLM())) as url:
        r = httpx.post(f"{url}/v1/embeddings", timeout=30, **({"content": body} if isinstance(body, bytes) else {"json": body}))
        assert r.status_code == 400 and r.json()["error"]["code"] == code
        assert httpx.post(f"{url}/v1/embeddings", json={"input": "cats"}, timeout=30).status_code == 200


def test_sources_footer_in_the_text_streamed_or_not(index):  # noqa: F811
    with running(app_for(index, SlowLLM(), sources_footer=True)) as url:
        plain = client(url).chat.completions.create(model="any", messages=CONV).choices[0].message.content
        chunks = list(client(url).chat.completions.create(model="any", messages=CONV, stream=True))
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks)
    for text in (plain, streamed.strip()):
        assert text.startswith(ANSWER) and text.endswith("\n\nSources:\n[1] Cats (d1-1) u1")
    with running(app_for(index, SlowLLM())) as url:  # off by default
        assert client(url).chat.completions.create(model="any", messages=CONV).choices[0].message.content == ANSWER
    # session 52: an answer that cites nothing had no footer at all: no clue where it came from
    with running(app_for(index, SlowLLM("Cats sleep most of the day."), sources_footer=True)) as url:
        reply = client(url).chat.completions.create(model="any", messages=CONV)
    text, given = reply.choices[0].message.content, reply.model_extra["local_rag"]["passages"]
    head = ("Cats sleep most of the day.\n\nSources (the answer cites no passage; it was written from these "
            f"{len(given)}):\n[1]")
    assert text.startswith(head) and all(f"[{n}]" in text for n in range(1, len(given) + 1))
    assert given[0]["passage_id"] in text


def test_langchain_chat_and_embeddings_against_the_live_server(index):  # noqa: F811
    lc = pytest.importorskip("langchain_openai")
    settings, retriever = index
    with running(app_for(index, SlowLLM(delay=0.005))) as url:
        chat = lc.ChatOpenAI(base_url=f"{url}/v1", api_key="none", model="local-rag", max_retries=0, timeout=30)
        messages = [(m["role"] if m["role"] != "assistant" else "ai", m["content"]) for m in CONV]
        reply = chat.invoke(messages)
        pieces = [c.content for c in chat.stream(messages)]
        emb = lc.OpenAIEmbeddings(base_url=f"{url}/v1", api_key="none", model="local-rag", max_retries=0,
                                  check_embedding_ctx_length=False)  # send text, not tiktoken ids
        docs = emb.embed_documents(["cats purr", "dogs bark"])
        query = emb.embed_query("how long do cats sleep?")
    assert reply.content == ANSWER
    assert "".join(pieces).strip() == ANSWER and len(pieces) > 3
    embedder = retriever.retrievers["dense"].embedder
    np.testing.assert_allclose(docs, embedder.embed(["cats purr", "dogs bark"], kind="query"), atol=1e-6)
    np.testing.assert_allclose(query, embedder.embed(["how long do cats sleep?"], kind="query")[0], atol=1e-6)

"""The OpenAI-compatible server: the real server (uvicorn on loopback) over a real tiny index, driven by the official
`openai` client and raw HTTP; a scripted LLM with a delay for the queue, 429, disconnect and concurrency logic."""

from __future__ import annotations

import difflib
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from local_rag.index import build_index, open_index
from local_rag.pipeline import Pipeline
from local_rag.retrieve import HybridRetriever
from local_rag.settings import ServerConfig, Settings

from .conftest import CORPUS, HashEmbedder, make_settings, write_jsonl
from .llm_fixtures import ScriptedLLM

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
openai = pytest.importorskip("openai")
httpx = pytest.importorskip("httpx")

from local_rag.server import check_bind, create_app, is_loopback  # noqa: E402

ANSWER = "Cats sleep twelve to sixteen hours a day [1]."


class SlowLLM(ScriptedLLM):
    """`ScriptedLLM` that takes ``delay`` seconds per token, streamed or not, and counts the tokens it produced."""

    def __init__(self, reply: Any = ANSWER, delay: float = 0.0) -> None:
        super().__init__(reply)
        self.delay = delay
        self.emitted = 0

    def complete(self, messages, *, stage, schema=None, max_tokens=None, on_token=None, **kw):  # type: ignore[no-untyped-def]
        def slow(piece: str) -> None:
            time.sleep(self.delay)
            self.emitted += 1
            if on_token is not None:
                on_token(piece)

        return super().complete(messages, stage=stage, schema=schema, max_tokens=max_tokens, on_token=slow, **kw)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Settings, HybridRetriever]:
    tmp = tmp_path_factory.mktemp("server")
    settings = make_settings(tmp, chunker={"tokenizer": "whitespace", "size": 12, "overlap": 3}, pipeline={"rewrite": False})
    embedder = HashEmbedder(settings.embedder)
    build_index(settings, write_jsonl(tmp / "corpus.jsonl", CORPUS), embedder=embedder, progress=False)
    return settings, HybridRetriever(open_index(settings), settings, embedder)


def app_for(index: tuple[Settings, HybridRetriever], llm: Any, **server: Any) -> Any:
    settings, retriever = index
    settings = settings.model_copy(update={"server": ServerConfig(**server)})
    return create_app(settings, Pipeline(settings, retriever=retriever, llm=llm))


@contextmanager
def running(app: Any) -> Iterator[str]:
    """The real uvicorn server on 127.0.0.1 (a free port) in a thread; yields its base URL."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        assert time.time() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def client(url: str, key: str = "none", timeout: float = 30) -> Any:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=timeout)


CONV = [{"role": "system", "content": "SYSTEM TEXT THAT IS IGNORED"}, {"role": "user", "content": "tell me about cats"},
        {"role": "assistant", "content": "EARLIER AGENT ANSWER"}, {"role": "user", "content": "how long do cats sleep?"}]


def test_chat_completion_with_the_openai_client(index):
    llm = SlowLLM()
    with running(app_for(index, llm)) as url:
        oa = client(url)
        assert [m.id for m in oa.models.list().data] == ["smollm2-135m-instruct"]
        reply = oa.chat.completions.create(model="smollm2-135m-instruct", messages=CONV)
    assert reply.object == "chat.completion" and reply.choices[0].finish_reason == "stop"
    assert reply.choices[0].message.role == "assistant" and reply.choices[0].message.content == ANSWER
    assert reply.usage.completion_tokens == len(ANSWER.split())
    extra = reply.model_extra["local_rag"]
    assert extra["kind"] == "answer" and extra["citations"][0]["passage_id"] == extra["passages"][0]["passage_id"] == "d1-1"
    assert {"retrieval", "generate", "total"} <= set(extra["timings_s"]) and extra["queue_s"] >= 0
    assert extra["system_messages_ignored"] == 1
    prompt = "\n".join(m["content"] for m in llm.seen[-1])  # system ignored, assistant -> agent turn in the history
    assert "EARLIER AGENT ANSWER" in prompt and "SYSTEM TEXT" not in prompt and "how long do cats sleep?" in prompt


def test_streaming_with_the_openai_client(index):
    with running(app_for(index, SlowLLM(delay=0.01))) as url:
        chunks = list(client(url).chat.completions.create(model="any", messages=CONV, stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text.strip() == ANSWER and len(chunks) >= len(ANSWER.split()) + 2
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)
    final = chunks[-1]
    assert final.choices[0].finish_reason == "stop" and final.usage.total_tokens > 0
    assert final.model_extra["local_rag"]["citations"][0]["passage_id"] == "d1-1"
    status = [c.model_extra["local_rag"]["status"] for c in chunks[:-1] if "local_rag" in (c.model_extra or {})]
    assert status[0] == "Searching…" and status[1].startswith("5 sources")  # the status streams before the answer
    first_text = next(i for i, c in enumerate(chunks) if c.choices[0].delta.content)
    assert all(c.choices[0].delta.content is None for c in chunks[1:first_text]) and len(status) == 2
    assert all(set(c.model_extra.get("local_rag", {})) <= {"status"} for c in chunks[:-1])


def test_stream_ends_with_done_and_a_clarify_prefix_is_not_streamed(index):
    with running(app_for(index, SlowLLM("CLARIFY: Do you mean house cats or big cats?"))) as url:
        body = httpx.post(f"{url}/v1/chat/completions", json={"messages": CONV, "stream": True}, timeout=30).text
    events = [line[len("data: "):] for line in body.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text.strip() == "Do you mean house cats or big cats?"
    assert chunks[-1]["local_rag"]["kind"] == "clarify"


def test_idk_without_a_model_call_still_streams_the_answer(index):
    settings, retriever = index
    settings = settings.model_copy(update={"pipeline": settings.pipeline.model_copy(update={"min_dense_score": 2.0})})
    llm = SlowLLM("never")
    app = create_app(settings, Pipeline(settings, retriever=retriever, llm=llm))
    with running(app) as url:
        chunks = list(client(url).chat.completions.create(model="m", messages=CONV, stream=True))
        plain = client(url).chat.completions.create(model="m", messages=CONV)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == plain.choices[0].message.content == settings.generate.idk_answer and llm.calls == []


def test_the_models_own_i_dont_know_streams_once(index):
    """Session 50: the model writing the IDK sentence itself (classed a decline) streamed it, then sent it again after a
    blank line, as if a check had withdrawn a draft."""
    settings, _ = index
    llm = SlowLLM(settings.generate.idk_answer)
    with running(app_for(index, llm)) as url:
        chunks = list(client(url).chat.completions.create(model="m", messages=CONV, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text.strip() == settings.generate.idk_answer and chunks[-1].model_extra["local_rag"]["kind"] == "decline"
    assert llm.seen and llm.emitted  # written by the model, streamed, not the fixed answer of a gate


def test_agentic_mode_streams_only_the_answer_and_returns_the_trace(index):
    from local_rag.modes import make_pipeline

    settings, retriever = index
    settings = settings.model_copy(update={"pipeline": settings.pipeline.model_copy(update={"mode": "agentic"})})
    steps = ["<think>They ask about sleep.</think>\n<search>how long does a cat sleep</search>",
             "<think>[1] says it.</think>\n<answer>A cat sleeps twelve to sixteen hours a day [1].</answer>"]
    llm = SlowLLM(lambda m, s: steps[min(len(llm.seen), 2) - 1])  # a search, then the answer
    app = create_app(settings, make_pipeline(settings, retriever=retriever, llm=llm))
    with running(app) as url:
        assert httpx.get(f"{url}/healthz").json()["mode"] == "agentic"
        chunks = list(client(url).chat.completions.create(model="m", messages=CONV, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    extra = chunks[-1].model_extra["local_rag"]
    assert text == extra["answer"] == "A cat sleeps twelve to sixteen hours a day [1]."
    assert [s["type"] for s in extra["trace"]] == ["think", "search", "information", "think", "answer"]
    assert extra["citations"][0]["passage_id"] == "d1-1" and extra["queries"][0]["mode"] == "agent"


def test_agentic_stream_marks_a_broken_answer_and_sends_the_final_one_once(index):
    """Session 51, seen with the real 1.5B: an answer cut by the step's token budget (an unclosed <answer>) streamed,
    then the forced "I don't know" streamed and was sent a second time after a blank line. The stream now marks the
    break and compares the final answer with what came after it: sent once."""
    from local_rag.agent.tags import BROKE_OFF
    from local_rag.modes import make_pipeline

    settings, retriever = index
    settings = settings.model_copy(update={"pipeline": settings.pipeline.model_copy(update={"mode": "agentic"})})
    idk = settings.generate.idk_answer

    def reply(messages: Any, _stage: Any) -> str:
        if idk in messages[-1]["content"]:  # the forced last step
            return f"<answer>{idk}</answer>"
        return {1: "<think>Sleep.</think>\n<search>how long does a cat sleep</search>",
                2: "<think>[1] says it.</think>\n<answer>A cat sleeps twelve"}.get(len(llm.seen), "hmm")

    llm = SlowLLM(reply)
    with running(create_app(settings, make_pipeline(settings, retriever=retriever, llm=llm))) as url:
        chunks = list(client(url).chat.completions.create(model="m", messages=CONV, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == f"A cat sleeps twelve\n({BROKE_OFF})\n{idk}", text
    assert chunks[-1].model_extra["local_rag"]["answer"] == idk


def test_models_and_healthz(index):
    with running(app_for(index, SlowLLM(), model_name="my-rag")) as url:
        health = httpx.get(f"{url}/healthz").json()
        models = httpx.get(f"{url}/v1/models").json()
        # session 52: the openai SDK's models.retrieve (clients that check the configured model) was a 404
        one = client(url).models.retrieve("my-rag")
        with pytest.raises(openai.NotFoundError, match="no model 'gpt-4o': this server answers with 'my-rag'"):
            client(url).models.retrieve("gpt-4o")
    assert health["status"] == "ok" and health["index"] == "test" and health["model"] == "my-rag"
    assert health["turns"]["busy"] is False and health["reranker"] is None and health["adaptation"] is None
    assert models["object"] == "list" and models["data"][0]["id"] == "my-rag"
    assert one.id == "my-rag" and one.owned_by == "local-rag"


BAD: list[tuple[str, Any, int, str]] = [
    ("malformed JSON", b"{not json", 400, "invalid_json"),
    ("not UTF-8", b"\xff\xfe{", 400, "invalid_json"),
    ("not an object", b"[1, 2]", 400, "invalid_request"),
    ("missing messages", {"model": "m"}, 400, "invalid_request"),
    ("empty messages", {"messages": []}, 400, "invalid_request"),
    ("messages not a list", {"messages": "hi"}, 400, "invalid_request"),
    ("message without role", {"messages": [{"content": "hi"}]}, 400, "invalid_request"),
    ("tool role", {"messages": [{"role": "tool", "content": "x"}, {"role": "user", "content": "hi"}]}, 400, "invalid_role"),
    ("unknown role", {"messages": [{"role": "robot", "content": "hi"}]}, 400, "invalid_role"),
    ("content a number", {"messages": [{"role": "user", "content": 5}]}, 400, "invalid_request"),
    ("image content", {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}, 400, "invalid_content"),
    ("last turn not user", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}, 400, "invalid_request"),
    ("empty user turn", {"messages": [{"role": "user", "content": "   "}]}, 400, "invalid_request"),
    ("only system", {"messages": [{"role": "system", "content": "be nice"}]}, 400, "invalid_request"),
    ("n > 1", {"messages": [{"role": "user", "content": "hi"}], "n": 3}, 400, "invalid_request"),
    ("stream not a bool", {"messages": [{"role": "user", "content": "hi"}], "stream": [1]}, 400, "invalid_request"),
    ("huge body", {"messages": [{"role": "user", "content": "x" * 2_000_000}]}, 413, "body_too_large"),
]


def test_bad_input_is_a_4xx_json_error_and_the_server_lives_on(index):
    with running(app_for(index, SlowLLM())) as url, httpx.Client(base_url=url, timeout=30) as http:
        for name, body, status, code in BAD:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            r = http.post("/v1/chat/completions", content=raw, headers={"content-type": "application/json"})
            assert r.status_code == status, (name, r.text)
            error = r.json()["error"]
            assert error["code"] == code and error["message"] and error["type"] == "invalid_request_error", name
        chunked = http.post("/v1/chat/completions", content=iter([b"{" + b" " * 600_000] * 3))  # no Content-Length
        assert chunked.status_code == 413 and chunked.json()["error"]["code"] == "body_too_large"
        for method, path, status, said in (
                ("GET", "/v1/chat/completions", 405, "GET /v1/chat/completions is not served: use POST"),
                ("GET", "/nowhere", 404, "no route GET /nowhere: local-rag serves POST /v1/chat/completions, "),
                # session 52: a client given http://127.0.0.1:8000 as its base URL, and the legacy API, got "Not Found"
                ("POST", "/chat/completions", 404, "lacks /v1: give http://HOST:PORT/v1"),
                ("POST", "/v1/completions", 404, "the legacy completions API is not served")):
            r = http.request(method, path)
            assert r.status_code == status and said in r.json()["error"]["message"]
        assert http.get("/healthz").json()["status"] == "ok"
        ok = http.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "cats?"}]})
        assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"] == ANSWER
        # session 52: unset options sent as null (the OpenAI API's "or null") were a 400 ("stream: Input should be a
        # valid boolean"); they mean the default
        nulls = {"model": None, "stream": None, "n": None, "temperature": None, "max_tokens": None, "stop": None}
        ok = http.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "cats?"}], **nulls})
        assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"] == ANSWER


class FailingLLM(SlowLLM):
    """Streams ``after`` tokens, then raises ``error``."""

    def __init__(self, error: Exception, after: int = 0) -> None:
        super().__init__(" ".join(["word"] * 20))
        self.error, self.after = error, after

    def complete(self, messages, *, stage, schema=None, max_tokens=None, on_token=None, **kw):  # type: ignore[no-untyped-def]
        for _ in range(self.after):
            if on_token is not None:
                on_token("word ")
        raise self.error


def test_pipeline_failures_are_json_errors_and_the_server_lives_on(index):
    from local_rag.errors import BadInputError

    for error, status, code in ((BadInputError("generate: no room to answer"), 400, "bad_input"),
                                (RuntimeError("boom"), 500, "internal_error")):
        with running(app_for(index, FailingLLM(error), stream_status=False)) as url, httpx.Client(base_url=url, timeout=30) as http:
            for stream in (False, True):  # before the first token: a plain JSON error, streamed or not
                r = http.post("/v1/chat/completions", json={"messages": CONV, "stream": stream})
                assert r.status_code == status and r.json()["error"]["code"] == code
            assert http.get("/healthz").json()["turns"]["failed"] == 2
        with running(app_for(index, FailingLLM(error))) as url, httpx.Client(base_url=url, timeout=30) as http:
            r = http.post("/v1/chat/completions", json={"messages": CONV, "stream": True})  # after the status chunks
            assert r.status_code == 200 and f'"code": "{code}"' in r.text and '"status": "Searching' in r.text
    with running(app_for(index, FailingLLM(RuntimeError("boom"), after=3))) as url:
        with pytest.raises(openai.APIError, match="internal error"):  # after it: an SSE error event
            list(client(url).chat.completions.create(model="m", messages=CONV, stream=True))
        assert httpx.get(f"{url}/healthz").json()["turns"]["busy"] is False


def test_an_over_long_message_is_cut_and_noted(index):
    with running(app_for(index, SlowLLM(), max_message_chars=1000)) as url:
        reply = client(url).chat.completions.create(model="m", messages=[{"role": "user", "content": "cats " * 2000}])
    assert reply.model_extra["local_rag"]["messages_cut"] == {"indexes": [0], "to_chars": 1000}


def test_api_key(index):
    with running(app_for(index, SlowLLM(), api_key="s3cret")) as url:
        with pytest.raises(openai.AuthenticationError):
            client(url, "wrong").chat.completions.create(model="m", messages=CONV)
        r = httpx.get(f"{url}/v1/models")
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key" and r.headers["www-authenticate"] == "Bearer"
        assert client(url, "s3cret").chat.completions.create(model="m", messages=CONV).choices[0].message.content == ANSWER
        assert httpx.get(f"{url}/healthz").status_code == 200  # health checks need no key


def test_no_key_means_loopback_only():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.1.2.3")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("example.org")
    check_bind(ServerConfig())
    check_bind(ServerConfig(host="0.0.0.0", api_key="k"))
    from local_rag.errors import SettingsError

    with pytest.raises(SettingsError, match="refusing to bind 0.0.0.0 without an API key"):
        check_bind(ServerConfig(host="0.0.0.0"))


def test_browser_pages_of_this_machine_and_those_named_are_answered_others_refused(index, caplog):
    """Session 52: a web page at http://localhost:3000 calling the server got 405 for its preflight (the browser said
    "Failed to fetch"; no setting allowed it), while any site one opened could send a "simple" cross-site POST
    (text/plain) that the server answered in full, unseen."""
    preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type"}
    body = json.dumps({"model": "m", "messages": CONV}).encode()
    llm = SlowLLM()
    with running(app_for(index, llm, cors_origins="http://192.168.1.5:3000/")) as url:
        for page in ("http://localhost:3000", "http://127.0.0.1:5173", "http://[::1]:8080", "http://192.168.1.5:3000"):
            r = httpx.options(f"{url}/v1/chat/completions", headers={"Origin": page, **preflight})
            assert r.status_code == 200 and "authorization" in r.headers["access-control-allow-headers"].lower()
            r = httpx.post(f"{url}/v1/chat/completions", headers={"Origin": page}, json={"model": "m", "messages": CONV})
            assert r.status_code == 200 and r.headers["access-control-allow-origin"] in ("*", page)
            assert r.json()["choices"][0]["message"]["content"] == ANSWER
        with httpx.stream("POST", f"{url}/v1/chat/completions", headers={"Origin": "http://localhost:3000"},
                          json={"model": "m", "messages": CONV, "stream": True}) as r:
            assert r.headers["access-control-allow-origin"] and "[DONE]" in r.read().decode()
        calls = len(llm.seen)
        with caplog.at_level("WARNING", logger="local_rag.server"):
            for _ in range(2):
                r = httpx.post(f"{url}/v1/chat/completions", headers={"Origin": "https://evil.example",
                                                                       "Content-Type": "text/plain"}, content=body)
                assert r.status_code == 403 and r.json()["error"]["code"] == "origin_not_allowed"
                assert "--cors-origins https://evil.example" in r.json()["error"]["message"]
            r = httpx.options(f"{url}/v1/chat/completions", headers={"Origin": "https://evil.example", **preflight})
            assert r.status_code == 403 and "access-control-allow-origin" not in r.headers
            assert httpx.get(f"{url}/healthz", headers={"Origin": "null"}).status_code == 403  # a page from a file
        assert len(llm.seen) == calls  # no turn ran for a refused page
        said = [m for m in caplog.messages if "may not use this server" in m]
        assert len(said) == 2 and "evil.example" in said[0] and "origin null" in said[1]  # once per page
        assert client(url).chat.completions.create(model="m", messages=CONV).choices[0].message.content == ANSWER


def test_cors_origins_are_checked_and_any_page_needs_a_key():
    from local_rag.errors import SettingsError

    assert ServerConfig(cors_origins=" HTTP://Chat.lan/ ,null,http://chat.lan").origins == ("http://chat.lan", "null")
    for bad in ("http://chat.lan/app", "chat.lan:3000", "ftp://x", "http://a b"):
        with pytest.raises(ValueError, match="is not a web page's origin"):
            ServerConfig(cors_origins=bad)
    check_bind(ServerConfig(cors_origins="*", api_key="k"))
    with pytest.raises(SettingsError, match=r"refusing --cors-origins '\*' without an API key"):
        check_bind(ServerConfig(cors_origins="*"))


def test_without_the_server_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch):
    import sys

    from local_rag.errors import MissingDependencyError
    from local_rag.server import require_server

    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn -> ImportError
    with pytest.raises(MissingDependencyError, match=r"local-rag\[server\]"):
        require_server()


def post_all(url: str, n: int, stream: bool = False) -> list[httpx.Response]:
    """``n`` requests at once, one thread each."""
    out: list[Any] = [None] * n

    def one(i: int) -> None:
        out[i] = httpx.post(f"{url}/v1/chat/completions", json={"messages": CONV, "stream": stream}, timeout=60)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
        time.sleep(0.05)  # in order: the first holds the slot before the others arrive
    for t in threads:
        t.join()
    return out


def test_one_turn_at_a_time_a_bounded_queue_then_429(index):
    llm = SlowLLM(delay=0.2)  # ~2 s per turn: all four arrive while the first runs
    with running(app_for(index, llm, queue=1, retry_after_s=0)) as url:
        replies = post_all(url, 4)
        health = httpx.get(f"{url}/healthz").json()
    assert sorted(r.status_code for r in replies) == [200, 200, 429, 429]
    for r in (r for r in replies if r.status_code == 429):
        assert r.json()["error"]["code"] == "queue_full" and r.json()["error"]["type"] == "rate_limit_error"
        assert int(r.headers["retry-after"]) >= 1
    assert health["turns"]["served"] == 2 and health["turns"]["refused"] == 2 and health["turns"]["waiting"] == 0


def test_a_client_that_disconnects_mid_stream_frees_its_slot(index):
    reply = " ".join(f"word{i}" for i in range(300))
    llm = SlowLLM(reply, delay=0.02)  # 6 s if it ran to the end
    with running(app_for(index, llm, queue=0)) as url, httpx.Client(base_url=url, timeout=30) as http:
        with http.stream("POST", "/v1/chat/completions", json={"messages": CONV, "stream": True}) as r:
            assert r.status_code == 200
            for line in r.iter_lines():
                if "word3" in line:
                    break
        # the connection is closed: the generation stops at its next token and the slot is free again
        deadline = time.time() + 5
        while (turns := http.get("/healthz").json()["turns"])["busy"] and time.time() < deadline:
            time.sleep(0.05)
        assert turns == {**turns, "busy": False, "cancelled": 1}
        assert llm.emitted < 100
        llm.reply = lambda m, s: ANSWER
        assert http.post("/v1/chat/completions", json={"messages": CONV}).status_code == 200


def test_a_client_that_disconnects_while_waiting_non_streaming_stops_its_turn(index):
    llm = SlowLLM(" ".join(["word"] * 300), delay=0.02)
    with running(app_for(index, llm, queue=0)) as url:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{url}/v1/chat/completions", json={"messages": CONV}, timeout=0.5)
        deadline = time.time() + 5
        while (turns := httpx.get(f"{url}/healthz").json()["turns"])["busy"] and time.time() < deadline:
            time.sleep(0.05)
    assert turns["cancelled"] == 1 and llm.emitted < 100


def test_bounded_concurrent_load_every_request_is_answered_or_refused(index):
    """20 clients x 5 requests (half streamed) against one slot and a queue of 4: only 200s and 429s."""
    llm = SlowLLM(delay=0.002)
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def worker(k: int, url: str) -> None:
        oa = client(url)
        for i in range(5):
            try:
                if (k + i) % 2:
                    text = "".join(c.choices[0].delta.content or "" for c in oa.chat.completions.create(model="m", messages=CONV, stream=True))
                else:
                    text = oa.chat.completions.create(model="m", messages=CONV).choices[0].message.content
                outcome = "200" if text.strip() == ANSWER else f"wrong answer {text!r}"
            except openai.RateLimitError:
                outcome = "429"
            except Exception as exc:  # counted, not swallowed: the test asserts there are none
                outcome = f"error {type(exc).__name__}: {exc}"
            with lock:
                counts[outcome] += 1

    with running(app_for(index, llm, queue=4)) as url:
        started = time.perf_counter()
        threads = [threading.Thread(target=worker, args=(k, url)) for k in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        elapsed = time.perf_counter() - started
        health = httpx.get(f"{url}/healthz").json()
    assert sum(counts.values()) == 100 and set(counts) <= {"200", "429"}, counts
    assert counts["200"] >= 5 and health["turns"]["served"] == counts["200"] and health["turns"]["busy"] is False
    print(f"load: {dict(counts)} in {elapsed:.1f} s")


# ------------------------------------------------------------------------------------------ the command
def test_serve_refuses_a_public_address_without_a_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    monkeypatch.delenv("LOCAL_RAG_API_KEY", raising=False)
    env = {"LOCAL_RAG_INDEXES_DIR": str(tmp_path)}
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    assert CliRunner().invoke(cli, ["index", "build", str(corpus), "--sparse-only", "--index", "s"], env=env).exit_code == 0
    result = CliRunner().invoke(cli, ["serve", "--profile", "cpu-test", "--host", "0.0.0.0", "--index", "s"], env=env)
    assert result.exit_code == 6 and "refusing to bind 0.0.0.0 without an API key" in result.output
    # session 52 (noticed in 51): a flag out of range named the setting, "server.queue: Input should be ...", after
    # the settings loaded; now click's own line names the flag
    for flag, value, said in (("--queue", "-1", "Invalid value for '--queue': -1 is not in the range x>=0"),
                              ("--port", "70000", "Invalid value for '--port': 70000 is not in the range 0<=x<=65535")):
        result = CliRunner().invoke(cli, ["serve", "--index", "s", flag, value], env=env)
        assert result.exit_code == 2 and said in result.output


def test_serve_says_a_port_in_use_or_a_foreign_host_before_anything_loads(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path: Path):
    """Session 50: `serve --port 8765` with the port taken loaded the pipeline (the LLM), then uvicorn logged
    "ERROR: [Errno 98] error while attempting to bind ... address already in use" and stopped; a --host that is not
    this machine's the same way."""
    import socket

    from click.testing import CliRunner

    from local_rag.cli.main import cli

    monkeypatch.delenv("LOCAL_RAG_API_KEY", raising=False)
    env = {"LOCAL_RAG_INDEXES_DIR": str(tmp_path)}
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    assert CliRunner().invoke(cli, ["index", "build", str(corpus), "--sparse-only", "--index", "s"], env=env).exit_code == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--profile", "cpu-test", "--index", "s", "--port", str(port)], env=env)
    assert result.exit_code == 6 and result.output.strip().splitlines()[-1] == (
        f"error: cannot listen on 127.0.0.1:{port}: the port is in use (another `local-rag serve`?); choose another "
        "--port, or --port 0 for any free one")
    result = CliRunner().invoke(cli, ["serve", "--profile", "cpu-test", "--index", "s", "--host", "no-such-host.invalid",
                                      "--api-key", "k"], env=env)
    assert result.exit_code == 6 and result.output.strip().splitlines()[-1].startswith(
        "error: cannot listen on no-such-host.invalid:8000: ")
    assert "loading the pipeline" not in result.output


def test_serve_fails_fast_on_a_missing_index(tmp_path: Path):
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    config = tmp_path / "s.yaml"
    config.write_text(f"indexes_dir: {tmp_path}\nretrieval: {{retrievers: [bm25]}}\n")
    result = CliRunner().invoke(cli, ["serve", "--profile", "cpu-test", "--config", str(config), "--index", "nope"])
    assert result.exit_code == 3, result.output
    assert result.output.count("\n") <= 2 and "error:" in result.output


@pytest.fixture(autouse=True)
def _own_indexes_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests build their indexes under tmp_path and name that folder in --config, which LOCAL_RAG_INDEXES_DIR
    outranks (for the `serve` subprocesses too): a run with it set would look for them in the shared folder."""
    monkeypatch.delenv("LOCAL_RAG_INDEXES_DIR", raising=False)


def bm25_only(tmp_path: Path, **more: Any) -> tuple[Settings, Path]:
    """Settings (and the same as a settings file for the command) for a BM25-only index built from the test corpus."""
    overrides = {"indexes_dir": str(tmp_path / "indexes"), "index": "srv", "dense": {"enabled": False},
                 "retrieval": {"retrievers": ["bm25"]}, "chunker": {"tokenizer": "whitespace", "size": 64, "overlap": 8},
                 "pipeline": {"rewrite": False}, **more}
    settings = make_settings(tmp_path, **overrides)
    build_index(settings, write_jsonl(tmp_path / "corpus.jsonl", CORPUS), progress=False)
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({**overrides, "models_dir": str(settings.models_dir)}))
    return settings, config


def test_serve_fails_fast_on_a_missing_model(tmp_path: Path):
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    from .llm_fixtures import llama_cpp_or_skip

    llama_cpp_or_skip()
    _, config = bm25_only(tmp_path, llm={"model": str(tmp_path / "missing.gguf")})
    result = CliRunner().invoke(cli, ["serve", "--profile", "cpu-test", "--config", str(config)])
    assert result.exit_code == 4, result.output


@contextmanager
def serve_command(config: Path, *args: str) -> Iterator[str]:
    """``python -m local_rag serve`` in a subprocess on a free port; yields its URL once it listens."""
    import re
    import signal
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "local_rag", "serve", "--profile", "cpu-test", "--config", str(config), "--port", "0", *args]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            found = re.search(r"Uvicorn running on (http://\S+)", line)
            if found:
                break
        else:
            raise AssertionError("the server did not start:\n" + "".join(lines))
        threading.Thread(target=lambda: [lines.append(x) for x in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
        yield found.group(1)
    finally:
        proc.terminate()  # SIGTERM: uvicorn shuts down gracefully, then exits by the same signal
        assert proc.wait(30) in (0, -signal.SIGTERM), "".join(lines)
        time.sleep(0.1)
        assert "Finished server process" in "".join(lines), "".join(lines)


def test_the_serve_command_answers_with_the_real_smollm2(tmp_path: Path):
    """The real path: `local-rag serve` with SmolLM2-135M on llama.cpp, asked through the openai client."""
    from .llm_fixtures import SMOLLM, llama_cpp_or_skip, model_or_skip

    llama_cpp_or_skip()
    model_or_skip(SMOLLM)
    _, config = bm25_only(tmp_path, generate={"max_tokens": 48}, llm={"n_ctx": 2048})
    messages = [{"role": "user", "content": "How many hours a day does a cat sleep?"}]
    with serve_command(config) as url:
        assert httpx.get(f"{url}/healthz").json()["model"] == SMOLLM
        oa = client(url, timeout=180)  # a hang guard, not a speed check: a real model on a busy 2-core CPU
        reply = oa.chat.completions.create(model=SMOLLM, messages=messages)
        chunks = list(oa.chat.completions.create(model=SMOLLM, messages=messages, stream=True))
    assert reply.choices[0].message.content.strip() and reply.usage.completion_tokens > 0
    extra = reply.model_extra["local_rag"]
    assert extra["passages"][0]["passage_id"] == "d1-1" and extra["timings_s"]["generate"] > 0
    assert extra["llm_calls"][0]["stage"] == "generate"
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert streamed.strip() and chunks[-1].model_extra["local_rag"]["passages"][0]["passage_id"] == "d1-1"
    # the stream's closing metadata carries the answer it streamed (parsed: citations checked, role echo dropped).
    # Not compared with the first request's answer: the second request reuses the prompt from the live KV cache,
    # and re-evaluating its last token alone changes the last float bits, which can change a greedy token.
    final = chunks[-1].model_extra["local_rag"]["answer"]
    assert final.strip() and difflib.SequenceMatcher(None, " ".join(final.split()), " ".join(streamed.split())).ratio() > 0.8


class WarmedLLM(SlowLLM):
    """`SlowLLM` that records the prompts prefilled between turns (`LLM.prefill`) as (stage, prompt text)."""

    def __init__(self) -> None:
        super().__init__()
        self.prefilled: list[tuple[str, str]] = []

    def prefill(self, messages, *, stage, upto="", cancelled=None):  # type: ignore[no-untyped-def]
        self.prefilled.append((stage, "\n".join(m["content"] for m in messages)))
        return 0


def test_the_server_warms_the_next_turn_with_its_own_answer(index):
    llm = WarmedLLM()
    with running(app_for(index, llm)) as url:
        deadline = time.time() + 10
        while not llm.prefilled and time.time() < deadline:  # start-up: the first request's prompt (no history)
            time.sleep(0.01)
        assert llm.prefilled[0][0] == "generate" and "EARLIER AGENT ANSWER" not in llm.prefilled[0][1]
        oa = client(url)
        oa.chat.completions.create(model="any", messages=CONV)
        deadline = time.time() + 10
        while len(llm.prefilled) < 2 and time.time() < deadline:
            time.sleep(0.01)
        stage, prompt = llm.prefilled[-1]  # after the answer: the conversation a client sends next, the answer in it
        assert stage == "generate" and "how long do cats sleep?" in prompt and ANSWER in prompt
        again = oa.chat.completions.create(model="any", messages=[*CONV, {"role": "assistant", "content": ANSWER},
                                                                   {"role": "user", "content": "and dogs?"}])
    assert again.choices[0].message.content == ANSWER


TITLE_TASK = ("### Task:\nWrite a short title, at most five words, for the chat below.\n### Output:\n"
              'JSON: { "title": "the title" }\n### Chat History:\n<chat_history>\nUSER: how long do cats sleep?\n'
              f"ASSISTANT: {ANSWER}\n</chat_history>")


class TaskLLM(WarmedLLM):
    """Writes a JSON title for a client's task, the grounded answer otherwise; keeps each call's token budget."""

    def __init__(self) -> None:
        super().__init__()
        self.reply = lambda messages, schema: '{"title": "Cat sleep"}' if "### Task:" in messages[-1]["content"] else ANSWER
        self.budgets: list[int | None] = []

    def complete(self, messages, *, stage, schema=None, max_tokens=None, on_token=None, **kw):  # type: ignore[no-untyped-def]
        self.budgets.append(max_tokens)
        return super().complete(messages, stage=stage, schema=schema, max_tokens=max_tokens, on_token=on_token, **kw)


def test_a_clients_background_task_is_answered_by_the_model_alone(index):
    """Session 52: Open WebUI asks the chat's model, after each exchange, for a title, tags and follow-up questions
    ("### Task: ..." with the chat in it). Each was a whole turn: retrieval on the prompt, five passages before it,
    the reply checked against them (a title took 822 prompt tokens and 7.4 s of the one generation slot
    with Qwen2.5-Coder-1.5B on 2 cores; 184 and 3.7 s now), the user's next question queued behind it.
    Now the model answers the client's own prompt, as it is, within ``task_max_tokens``; the chat's conversation is
    warmed again after it; ``client_tasks`` off gives the old behaviour."""
    llm = TaskLLM()
    task = [{"role": "system", "content": "client rules"}, {"role": "user", "content": TITLE_TASK}]
    with running(app_for(index, llm, task_max_tokens=50)) as url:
        oa = client(url)
        oa.chat.completions.create(model="any", messages=CONV)
        reply = oa.chat.completions.create(model="any", messages=task)
        extra = reply.model_extra["local_rag"]
        assert reply.choices[0].message.content == '{"title": "Cat sleep"}' and extra["kind"] == "chitchat"
        assert extra["passages"] == [] and extra["queries"] == [] and extra["client_task"].startswith("Write a short")
        assert llm.seen[-1] == task and llm.budgets[-1] == 50  # the client's prompt as it is, within the budget
        assert [c["stage"] for c in extra["llm_calls"]] == ["client-task"]
        deadline = time.time() + 10
        while ANSWER not in llm.prefilled[-1][1] and time.time() < deadline:
            time.sleep(0.01)
        assert "how long do cats sleep?" in llm.prefilled[-1][1]  # the chat is warmed again, not the task
        streamed = "".join(c.choices[0].delta.content or "" for c in oa.chat.completions.create(
            model="any", messages=task, stream=True) if c.choices)
        assert streamed == '{"title": "Cat sleep"}'
    with running(app_for(index, TaskLLM(), client_tasks=False)) as url:
        extra = client(url).chat.completions.create(model="any", messages=task).model_extra["local_rag"]
        assert extra["kind"] == "answer" and extra["passages"] and "client_task" not in extra

"""Issue 27: hostile input against the real CLI and the real server. Clear errors with the documented exit codes
(or 4xx in the OpenAI shape), never a traceback, a 500 or a hang.

hypothesis drives corpus lines, conversation files, settings values and request bodies; a few examples in the
fast suite, many more in the slow-marked variants (``pytest -m slow tests/test_reliability_hostile.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from local_rag.cli.main import cli
from local_rag.server.turns import TurnRunner

from .conftest import CORPUS, write_jsonl
from .test_server import SlowLLM, app_for, httpx, index, running  # noqa: F401 - `index` is a fixture

FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
ENV = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace", "LOCAL_RAG_CHUNKER__SIZE": "12", "LOCAL_RAG_CHUNKER__OVERLAP": "3",
       "LOCAL_RAG_DENSE__ENABLED": "false", "LOCAL_RAG_RETRIEVAL__RETRIEVERS": '["bm25"]', "LOCAL_RAG_INDEX": "h"}


def run_cli(args: list[str], env: dict[str, str], allowed: set[int]) -> Any:
    """The real CLI in-process; fails on a traceback (an exception other than SystemExit) or another exit code,
    and checks that an error is one line."""
    res = CliRunner().invoke(cli, args, env=env, catch_exceptions=True)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise AssertionError(f"traceback from {args}: {res.exception!r}") from res.exception
    assert res.exit_code in allowed, (res.exit_code, res.output)
    if res.exit_code:
        errors = [line for line in res.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "Traceback" not in res.output, res.output
    return res


@pytest.fixture(scope="module")
def sparse_index(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("hostile")
    env = {**ENV, "LOCAL_RAG_INDEXES_DIR": str(tmp / "indexes")}
    run_cli(["index", "build", str(write_jsonl(tmp / "c.jsonl", CORPUS)), "--sparse-only"], env, {0})
    return env


# ------------------------------------------------------------------------------------------------ corpus lines
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
records = st.fixed_dictionaries(
    {}, optional={"_id": st.text(max_size=8) | st.integers(), "text": st.text(max_size=60) | json_values,
                  "title": json_values, "url": json_values, "doc_id": json_values},
)
lines = st.one_of(
    records.map(lambda r: json.dumps(r).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=60).filter(lambda b: b"\n" not in b),
    st.just(b"\xef\xbb\xbf" + json.dumps({"_id": "bom", "text": "a byte order mark"}).encode()),
    st.integers(min_value=1, max_value=200).map(lambda n: b"[" * n * 50 + b"]" * n * 50),
)


def check_corpus(tmp_path: Path, body: list[bytes], skip_bad: bool) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"\n".join(body) + b"\n")
    env = {**ENV, "LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes")}
    run_cli(["index", "build", str(path), "--sparse-only", *(["--skip-bad"] if skip_bad else [])], env, {0, 2})


@FAST
@given(body=st.lists(lines, min_size=1, max_size=6), skip_bad=st.booleans())
def test_fuzzed_corpus_lines(tmp_path_factory, body, skip_bad):
    check_corpus(tmp_path_factory.mktemp("c"), body, skip_bad)


@pytest.mark.slow
@SLOW
@given(body=st.lists(lines, min_size=1, max_size=12), skip_bad=st.booleans())
def test_fuzzed_corpus_lines_many(tmp_path_factory, body, skip_bad):
    check_corpus(tmp_path_factory.mktemp("c"), body, skip_bad)


def test_corpus_details(tmp_path: Path):
    """A UTF-8 BOM is accepted; a duplicate id names its line; files of unread types are counted, not hidden."""
    env = {**ENV, "LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes")}
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps({"_id": "a", "text": "a byte order mark"}).encode() + b"\n")
    run_cli(["index", "build", str(bom), "--sparse-only"], env, {0})
    short = write_jsonl(tmp_path / "short.jsonl", [{"_id": "a", "text": "x y"}])  # no word BM25 can index
    # the index "h" exists, built from bom.jsonl: another corpus under its name is refused without --replace
    assert "built from" in run_cli(["index", "build", str(short), "--sparse-only"], env, {2}).output
    assert "has a word BM25 can index" in run_cli(["index", "build", str(short), "--sparse-only", "--replace"], env,
                                                  {2}).output
    dup = write_jsonl(tmp_path / "dup.jsonl", [{"_id": "a", "text": "x"}, {"_id": "b", "text": "y"}, {"_id": "a", "text": "z"}])
    res = run_cli(["index", "build", str(dup), "--sparse-only", "--replace"], env, {2})
    assert "dup.jsonl:3: duplicate passage id 'a'" in res.output
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("plain text")
    (folder / "b.zzz").write_bytes(b"%PDF-1.4 binary")
    res = run_cli(["index", "build", str(folder), "--sparse-only", "--replace"], env, {0})
    assert "skipped 1" in res.output


# ------------------------------------------------------------------------------------------ conversation files
messages = st.lists(
    st.fixed_dictionaries({}, optional={"speaker": st.sampled_from(["user", "agent", "system", "x"]) | json_values,
                                        "role": st.sampled_from(["user", "assistant"]), "text": st.text(max_size=40) | json_values,
                                        "content": json_values}),
    max_size=5,
)
conversations = st.one_of(
    messages.map(lambda m: json.dumps(m).encode()),
    messages.map(lambda m: json.dumps({"messages": m}).encode()),
    messages.map(lambda m: json.dumps({"input": m}).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=80),
    st.integers(min_value=100, max_value=100_000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(min_value=4400, max_value=6000).map(lambda n: b'[{"speaker": "user", "text": ' + b"9" * n + b"}]"),
)


def check_conversation(tmp_path: Path, env: dict[str, str], body: bytes) -> None:
    path = tmp_path / "conv.json"
    path.write_bytes(body)
    run_cli(["search", "--conversation", str(path), "--json"], env, {0, 2})


@FAST
@given(body=conversations)
def test_fuzzed_conversation_files(sparse_index, tmp_path_factory, body):
    check_conversation(tmp_path_factory.mktemp("v"), sparse_index, body)


@pytest.mark.slow
@SLOW
@given(body=conversations)
def test_fuzzed_conversation_files_many(sparse_index, tmp_path_factory, body):
    check_conversation(tmp_path_factory.mktemp("v"), sparse_index, body)


def test_conversation_edge_cases(sparse_index, tmp_path: Path):
    run_cli(["search", "--conversation", str(tmp_path)], sparse_index, {2})  # a folder
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "nested" in run_cli(["search", "--conversation", str(deep)], sparse_index, {2}).output
    control = tmp_path / "control.json"
    control.write_text('[{"speaker": "user", "text": "a\x01b"}]')
    assert "at at" not in run_cli(["search", "--conversation", str(control)], sparse_index, {2}).output
    long = tmp_path / "long.json"
    long.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"speaker": "user", "text": "cats " * 20_000}]).encode())
    res = run_cli(["search", "--conversation", str(long), "--json"], sparse_index, {0})
    assert "cut to 20000 characters" in res.output
    assert len(json.loads(res.stdout[res.stdout.index("{"):])["queries"][0]["text"]) <= 20_000


# ------------------------------------------------------------------------------------------------- settings
names = st.sampled_from([
    "CHUNKER__SIZE", "CHUNKER", "FUSION__WEIGHTS", "FUSION__WEIGHTS__BM25", "RETRIEVAL__RETRIEVERS", "RETRIEVAL__TOP_K",
    "SERVER__PORT", "LLM__TEMPERATURE", "DENSE__USE_GPU", "SPARSE__K1", "CHUNK__SIZE", "INDEXES", "X", "GEN_EVAL__JUDGE",
    "GEN_EVAL__JUDGE__N_CTX", "INDEX_LOCK_TIMEOUT_S", "OFFLINE",
])
values = st.one_of(st.text(max_size=30), json_values.map(json.dumps), st.integers().map(str),
                   st.just("9" * 5000), st.just("[" * 5000 + "]" * 5000))


def check_settings(env: dict[str, str], name: str, value: str) -> None:
    value = value.replace("\x00", "")
    run_cli(["index", "info"], {**env, f"LOCAL_RAG_{name}": value}, {0, 3, 6})


@FAST
@given(name=names, value=values)
def test_fuzzed_settings_variables(sparse_index, name, value):
    check_settings(sparse_index, name, value)


@pytest.mark.slow
@SLOW
@given(name=names, value=values)
def test_fuzzed_settings_variables_many(sparse_index, name, value):
    check_settings(sparse_index, name, value)


@pytest.mark.parametrize(("name", "value", "says"), [
    ("FUSION__WEIGHTS", "notjson", "LOCAL_RAG_FUSION__WEIGHTS"), ("CHUNKER", "notjson", "LOCAL_RAG_CHUNKER"),
    ("CHUNK__SIZE", "512", "did you mean LOCAL_RAG_CHUNKER__SIZE"), ("CHUNKER__SIZE", "big", "LOCAL_RAG_CHUNKER__SIZE"),
])
def test_environment_variables_are_named_in_errors(sparse_index, name, value, says):
    res = run_cli(["index", "info"], {**sparse_index, f"LOCAL_RAG_{name}": value}, {6})
    assert says in res.output


@FAST
@given(text=st.text(max_size=200) | json_values.map(json.dumps))
def test_fuzzed_settings_files(sparse_index, tmp_path_factory, text):
    path = tmp_path_factory.mktemp("s") / "settings.yaml"
    path.write_text(text.replace("\x00", ""), encoding="utf-8")
    run_cli(["index", "info", "--config", str(path)], sparse_index, {0, 3, 6})


# ----------------------------------------------------------------------------------------------------- server
bodies = st.one_of(
    st.fixed_dictionaries({"messages": messages}, optional={
        "model": json_values, "stream": json_values, "n": json_values, "max_tokens": json_values | st.integers(),
    }).map(lambda b: json.dumps(b).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=100),
    st.integers(min_value=100, max_value=200_000).map(lambda n: b'{"messages": ' + b"[" * n + b"]" * n + b"}"),
    st.integers(min_value=4400, max_value=6000).map(
        lambda n: b'{"messages": [{"role": "user", "content": "cats"}], "max_tokens": ' + b"9" * n + b"}"),
)


def check_body(url: str, http: Any, body: bytes) -> None:
    reply = http.post(f"{url}/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert reply.status_code in (200, 400, 413), (reply.status_code, reply.text[:300])
    if reply.status_code != 200:
        error = reply.json()["error"]
        assert error["type"] == "invalid_request_error" and error["message"] and error["code"]
    assert http.get(f"{url}/healthz").status_code == 200  # the same keep-alive connection still works


@pytest.fixture(scope="module")
def server(index):  # noqa: F811 - the fixture imported above
    with running(app_for(index, SlowLLM(), api_key="k", max_messages=50)) as url:
        yield url


@FAST
@given(body=bodies)
def test_fuzzed_request_bodies_get_4xx_never_500(server, body):
    with httpx.Client(headers={"authorization": "Bearer k"}, timeout=60) as http:
        check_body(server, http, body)


@pytest.mark.slow
@SLOW
@given(body=bodies)
def test_fuzzed_request_bodies_many(server, body):
    with httpx.Client(headers={"authorization": "Bearer k"}, timeout=60) as http:
        check_body(server, http, body)


def test_server_caps_and_key(server):
    with httpx.Client(timeout=60) as http:
        assert http.get(f"{server}/openapi.json").status_code == 401
        keyed = {"authorization": "Bearer k"}
        assert http.get(f"{server}/openapi.json", headers=keyed).json()["info"]["title"] == "local-rag"
        many = {"messages": [{"role": "user", "content": "x"}] * 24_000}
        reply = http.post(f"{server}/v1/chat/completions", json=many, headers=keyed)
        assert reply.status_code == 400 and reply.json()["error"]["code"] == "too_many_messages"
        deep = b'{"messages": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
        reply = http.post(f"{server}/v1/chat/completions", content=deep, headers=keyed)
        assert reply.status_code in (400, 413) and "error" in reply.json()
        ok = http.post(f"{server}/v1/chat/completions", json={"messages": [{"role": "user", "content": "cats?"}]},
                       headers=keyed)
        assert ok.status_code == 200  # the same connection, after the hostile ones


def test_retry_after_is_the_running_turns_rest_not_queue_times_mean():
    runner = TurnRunner(pipeline=None, queue=8)
    runner.durations.extend([2.0] * 10 + [250.0])  # one slow warm-up turn among quick ones
    runner.waiting = 8
    assert runner.retry_after() == 2

"""``local-rag mcp``: the command as an assistant starts it (a process on standard input and output), driven by the
official MCP SDK's client (`mcp.client.Client` over `StdioServerParameters`), over real bm25s indexes; the `ask`
tool with the real SmolLM2 (slow)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import MODELS

pytest.importorskip("mcp.server.mcpserver")  # the SDK's 2.x line (the `mcp` extra)

NOTES = {"audit.md": "# Audit\n\nThe pump audit is on Friday at the north station.\n",
         "plan.md": "# Plan\n\nWe replace the valves of the north station in March.\n"}
MAIL = {"ana.md": "# Re: audit\n\nAna: the auditor arrives at 9, bring the pump logs.\n"}


def indexes(tmp_path: Path) -> dict[str, str]:
    """Two sparse indexes (no model needed), and the environment that finds them."""
    from .test_cli import run

    for name, files in (("notes", NOTES), ("mail", MAIL)):
        (tmp_path / name).mkdir()
        for file, text in files.items():
            (tmp_path / name / file).write_text(text)
        (tmp_path / name / "secret.md").write_text("# Secret\n\nThe safe's code is 4711.\n")  # left out below
        built = run("index", "build", str(tmp_path / name), "--index", name, "--sparse-only", "--exclude", "secret.md",
                    cwd=tmp_path)
        assert built.returncode == 0, built.stderr
    return {**os.environ, "LOCAL_RAG_MODELS_DIR": str(MODELS), "LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes")}


def session(env: dict[str, str], *args: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Start `local-rag mcp ARGS` as a host does, list its tools, make ``calls``; the tools and the results."""
    from mcp import StdioServerParameters
    from mcp.client import Client

    params = StdioServerParameters(command=sys.executable, args=["-m", "local_rag", "mcp", *args], env=env)

    async def go() -> list[Any]:
        async with Client(params, read_timeout_seconds=300) as client:
            tools = await client.list_tools()
            return [tools, *[await client.call_tool(name, arguments) for name, arguments in calls]]

    return asyncio.run(go())


def test_an_assistant_searches_the_documents_over_stdio(tmp_path: Path):
    env = indexes(tmp_path)
    tools, found, scoped, listed, some, whole, hidden, empty, nothing = session(
        env, "--index", "notes", "--also", "mail", calls=[
            ("search", {"query": "when is the pump audit?", "k": 3}),
            ("search", {"query": "auditor", "only": ["mail:*"]}),
            ("documents", {}),
            ("documents", {"only": ["plan.md", "mail:*"]}),
            ("read", {"document": "mail:ana.md"}),
            ("read", {"document": "notes:secret.md"}),
        ("search", {"query": "  "}),
        ("search", {"query": "audit", "only": ["minutes.pdf"]}),
    ])
    assert {t.name for t in tools.tools} == {"search", "ask", "documents", "read"}
    search = next(t for t in tools.tools if t.name == "search")
    assert search.annotations.read_only_hint and "query" in search.input_schema["properties"]
    passages = found.structured_content["result"]
    assert not found.is_error and passages[0]["document"] == "notes:audit.md"
    assert passages[0]["citation"] == "Audit (notes:audit.md)" and "Friday" in passages[0]["text"]
    assert {p["document"] for p in passages} >= {"notes:audit.md", "mail:ana.md"}
    assert passages[0]["url"].startswith("file://") and passages[0]["score"] > 0
    assert [p["document"] for p in scoped.structured_content["result"]] == ["mail:ana.md"]
    assert {d["document"]: d["title"] for d in listed.structured_content["result"]} == {
        "notes:audit.md": "Audit", "notes:plan.md": "Plan", "mail:ana.md": "Re: audit"}
    assert [d["document"] for d in some.structured_content["result"]] == ["notes:plan.md", "mail:ana.md"]
    assert whole.structured_content["title"] == "Re: audit" and "bring the pump logs" in whole.structured_content["text"]
    assert hidden.is_error and "is not a document of index" in hidden.content[0].text  # left out by --exclude
    assert empty.is_error and "query is empty" in empty.content[0].text
    assert nothing.is_error and "'minutes.pdf' matches no document" in nothing.content[0].text
    assert "\n" not in nothing.content[0].text


def test_a_missing_index_or_extra_is_one_line_before_the_host_connects(tmp_path: Path):
    from .test_cli import run

    missing = run("mcp", "--index", "nope", cwd=tmp_path)
    assert missing.returncode == 3 and missing.stderr.strip().splitlines()[-1].startswith("error: no index at")
    assert missing.stdout == ""  # the protocol's channel stays clean


@pytest.mark.slow
def test_the_ask_tool_answers_with_the_real_smollm2(tmp_path: Path):
    env = {**indexes(tmp_path), "LOCAL_RAG_PROFILE": "cpu-test"}
    _, asked = session(env, "--index", "notes", calls=[("ask", {"question": "When is the pump audit?"})])
    result = asked.structured_content
    assert not asked.is_error and result["kind"] in ("answer", "decline", "clarify") and result["answer"]
    assert all(c["document"] in ("audit.md", "plan.md") for c in result["citations"])


def test_serve_mcp_answers_an_assistant_over_http_behind_the_key(tmp_path: Path):
    """`serve --mcp`: the same tools over MCP's streamable HTTP at /mcp (search and documents: asking goes through
    the chat completions' queue), with the SDK's own HTTP client against the live server; behind the API key."""
    httpx = pytest.importorskip("httpx")
    from mcp.client import Client

    from local_rag.index import build_index, open_index
    from local_rag.retrieve import HybridRetriever

    from .conftest import CORPUS, HashEmbedder, make_settings, write_jsonl
    from .test_server import SlowLLM, app_for, running

    settings = make_settings(tmp_path, chunker={"tokenizer": "whitespace", "size": 12, "overlap": 3})
    embedder = HashEmbedder(settings.embedder)
    build_index(settings, write_jsonl(tmp_path / "corpus.jsonl", CORPUS), embedder=embedder, progress=False)
    served = (settings, HybridRetriever(open_index(settings), settings, embedder))

    async def go(url: str) -> tuple[Any, Any]:
        async with Client(f"{url}/mcp") as client:
            return await client.list_tools(), await client.call_tool("search", {"query": "how long do cats sleep?"})

    with running(app_for(served, SlowLLM(), mcp=True)) as url:
        tools, found = asyncio.run(go(url))
    assert {t.name for t in tools.tools} == {"search", "documents", "read"}
    assert found.structured_content["result"][0]["document"] == "d1"
    with running(app_for(served, SlowLLM(), mcp=True, api_key="k3y")) as url:
        refused = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
        let_in = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30,
                            headers={"Authorization": "Bearer k3y"})
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key"
    assert let_in.status_code != 401

"""Retrieval alone, through each door a tool uses (``scripts/bench_search_api.py``): the search in process, over the
OpenAI vector store API of ``local-rag serve`` (the official ``openai`` client) and over MCP (``local-rag mcp``, the
official SDK's client on standard input and output), for one index and for two searched as one (``--also``).

    flock /tmp/heavy.lock .venv/bin/python scripts/bench_search_api.py --json docs/benchmarks/s60-search-api.json

Two indexes are built in a temporary folder with the profile's embedder: ``docs``, the bundled documentation (the
demo corpus), and ``code``, this package's source read with ``--code``. Each door answers the same questions
(``--queries`` of them, the demo's and questions about the code, each text new: a repeated one would come from the
query-embedding cache) after two unclocked ones; the figures are the milliseconds a search takes at the median and
the 95th percentile, as its caller waits for it. The server runs without its warm-up (``pipeline.warm`` off: its
LLM would otherwise prefill a prompt in the background at start, on the same two cores, while the searches are timed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from local_rag.stats import percentile
from local_rag.sysinfo import machine

QUESTIONS = [
    "How does local-rag keep an index safe when a build is interrupted?",
    "Which fusion method merges the ranked lists?",
    "How are source files cut into definitions?",
    "What does the server do when the queue is full?",
    "Which reranker runs on the CPU?",
    "How is a scanned PDF read?",
    "Where are the words of an identifier split?",
    "How does index sync find the files that changed?",
]


PREFIXES = ["", "In local-rag, ", "Tell me: ", "Please explain: ", "Quick question: "]
WARM = ["What is local-rag?", "Which models does it use?"]  # unclocked: loads, first calls


def timed(call: Callable[[str], object], queries: list[str]) -> dict[str, float]:
    """Milliseconds of ``call`` per query (after two unclocked calls of other texts), at p50 and p95."""
    for q in WARM:
        call(q)
    took = []
    for q in queries:
        started = time.perf_counter()
        call(q)
        took.append((time.perf_counter() - started) * 1000)
    return {"p50_ms": round(percentile(took, 0.5), 1), "p95_ms": round(percentile(took, 0.95), 1), "n": len(took)}


def build(indexes: Path, profile: str) -> dict[str, str]:
    """The two indexes, built by the CLI as a user builds them; the environment that finds them."""
    import local_rag
    from local_rag.demo import docs_folder

    env = {**os.environ, "LOCAL_RAG_INDEXES_DIR": str(indexes), "LOCAL_RAG_PROFILE": profile}
    for name, folder, extra in (("docs", docs_folder(), []), ("code", Path(local_rag.__file__).parent, ["--code"])):
        subprocess.run([sys.executable, "-m", "local_rag", "index", "build", str(folder), "--index", name, *extra],
                       env=env, check=True, capture_output=True)
    return env


def in_process(env: dict[str, str], profile: str, also: list[str], queries: list[str]) -> dict[str, float]:
    from local_rag.pipeline import Pipeline
    from local_rag.settings import load_settings

    settings = load_settings(profile, overrides={"indexes_dir": env["LOCAL_RAG_INDEXES_DIR"], "index": "docs",
                                                 "retrieval": {"also": also}})
    pipeline = Pipeline(settings)
    return timed(lambda q: pipeline.passages([q], 5), queries)


def over_http(env: dict[str, str], also: list[str], queries: list[str]) -> dict[str, float]:
    import openai

    cmd = [sys.executable, "-m", "local_rag", "serve", "--index", "docs", "--port", "0",
           *[a for name in also for a in ("--also", name)]]
    # the steady state: no prefill of the LLM's first prompt in the background while the searches are timed
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**env, "LOCAL_RAG_PIPELINE__WARM": "false"})
    try:
        url = ""
        assert proc.stderr is not None
        for line in proc.stderr:
            found = re.search(r"Uvicorn running on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        if not url:
            raise RuntimeError("the server did not start")
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="none", max_retries=0, timeout=60)
        return timed(lambda q: client.vector_stores.search(vector_store_id="docs", query=q, max_num_results=5),
                     queries)
    finally:
        proc.terminate()
        proc.wait(30)


def over_mcp(env: dict[str, str], also: list[str], queries: list[str]) -> dict[str, float]:
    from mcp import StdioServerParameters
    from mcp.client import Client

    params = StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "local_rag", "mcp", "--index", "docs", *[a for name in also for a in ("--also", name)]])

    async def go() -> dict[str, float]:
        async with Client(params, read_timeout_seconds=300) as client:
            took = []
            for i, q in enumerate(WARM + queries):
                started = time.perf_counter()
                await client.call_tool("search", {"query": q, "k": 5})
                if i >= 2:
                    took.append((time.perf_counter() - started) * 1000)
            return {"p50_ms": round(percentile(took, 0.5), 1), "p95_ms": round(percentile(took, 0.95), 1),
                    "n": len(took)}

    return asyncio.run(go())


def run(args: argparse.Namespace) -> dict[str, Any]:
    # every query a new text: a repeated one would be answered from the query-embedding cache
    queries = [f"{PREFIXES[i // len(QUESTIONS) % len(PREFIXES)]}{QUESTIONS[i % len(QUESTIONS)]}"
               f"{'' if i < len(QUESTIONS) * len(PREFIXES) else f' ({i})'}" for i in range(args.queries)]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        env = build(Path(tmp) / "indexes", args.profile)
        rows = []
        for label, also in (("docs", []), ("docs --also code", ["code"])):
            rows.append({"indexes": label, "in_process": in_process(env, args.profile, also, queries),
                         "vector_store_http": over_http(env, also, queries), "mcp_stdio": over_mcp(env, also, queries)})
        figures = {"machine": machine(), "profile": args.profile, "queries": args.queries, "rows": rows,
                   "wall_s": round(time.perf_counter() - started, 1)}
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return figures

"""Retrieval alone through each door: in process, the OpenAI vector store API, MCP (``local_rag/bench/search_api.py``).

    flock /tmp/heavy.lock .venv/bin/python scripts/bench_search_api.py --json docs/benchmarks/s60-search-api.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.search_api import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="cpu", help="settings profile (its embedder builds the indexes)")
    parser.add_argument("--queries", type=int, default=40, help="searches timed per door")
    parser.add_argument("--json", type=Path, help="write the figures here")
    run(parser.parse_args())


if __name__ == "__main__":
    main()

"""Contextual chunk headers measured: long documents that share vocabulary, saved as .txt files with hashed names,
and questions that name their document. Retrieval with ``chunker.header=none`` (what both indexes saw before: the
hash title says nothing) against ``title+section`` (the title from the file's first line).

    python scripts/bench_headers.py --out docs/benchmarks/i28-headers.json [--docs 150] [--sparse-only]

Collection: IBM Cloud documentation pages rebuilt from the MTRAG cloud pool (the pool passages of each page joined
by their offsets; a page's first line is its title). The pages of the test conversations' gold passages, plus other
pages up to ``--docs``, all of them long (5+ pool passages). Questions: the last user turns of the MTRAG **test**
conversations (cloud) whose gold passage lies in one of these pages, prefixed with the page's title as a user names
a document ("In <title>: <question>"). Scored at chunk level, k=5: hit@1 (the top chunk comes from the named
page), the share of the top 5 chunks that come from it, and MRR of its first chunk; BM25 and dense (MiniLM) alone.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.headers import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--docs", type=int, default=150)
    parser.add_argument("--profile", default="cpu-test")
    parser.add_argument("--sparse-only", action="store_true", help="BM25 only (no embedding model)")
    args = parser.parse_args()
    run(args)


if __name__ == "__main__":
    main()

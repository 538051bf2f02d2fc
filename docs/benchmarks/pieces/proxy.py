"""Session 35: is the chunk a question was written for among the top k hits? Questions written by the LLM for chunks
of one index (``synth queries``'s kept and held-out files), searched in other indexes of the same documents; a hit
covers the chunk when it holds at least 60% of the chunk's words (chunk boundaries differ between the indexes).

    .venv/bin/python docs/benchmarks/pieces/proxy.py SOURCE_INDEX QUERIES_JSONL[,QUERIES_JSONL] INDEX [INDEX ...]
"""

from __future__ import annotations

import json
import re
import sys

from local_rag.cli.main import load
from local_rag.records import Query
from local_rag.retrieve.stack import open_retriever


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def main(source: str, query_files: str, indexes: list[str]) -> None:
    from local_rag.index import open_index

    chunks = {c.id: c.text for c in open_index(load(None, None, source)).chunks}
    queries = [json.loads(line) for f in query_files.split(",") for line in open(f, encoding="utf-8")]
    print(f"{len(queries)} questions written for chunks of {source}; share whose chunk the top k cover")
    print("| index | passages | top 1 | top 3 | top 5 |\n|---|---:|---:|---:|---:|")
    for index in indexes:
        retriever = open_retriever(load(None, None, index))
        cells = []
        for k in (1, 3, 5):
            found = 0
            for q in queries:
                src = words(chunks[q["passage_id"]])
                hits = retriever.search([Query(q["text"], "lastturn")], top_k=k)
                found += any(len(src & words(h.text)) / len(src) >= 0.6 for h in hits)
            cells.append(f"{found / len(queries):.3f}")
        print(f"| {index} | {open_index(load(None, None, index)).manifest.passages} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])

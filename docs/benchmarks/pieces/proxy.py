"""Session 35: is the chunk a question was written for among the top k hits? Questions written by the LLM for chunks
of one index (``synth queries``'s kept and held-out files), searched in other indexes of the same documents; a hit
covers the chunk when it holds at least 60% of the chunk's words (chunk boundaries differ between the indexes).

    .venv/bin/python docs/benchmarks/pieces/proxy.py SOURCE_INDEX QUERIES_JSONL[,QUERIES_JSONL] INDEX [INDEX ...]
"""

from __future__ import annotations

import json
import math
import re
import sys

from local_rag.cli.main import load
from local_rag.records import Query
from local_rag.retrieve.stack import open_retriever


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def sign_p(better: int, worse: int) -> float:
    """Two-sided exact sign test of ``better`` against ``worse`` paired outcomes (ties left out)."""
    n, low = better + worse, min(better, worse)
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(low + 1)) / 2**n) if n else 1.0


def main(source: str, query_files: str, indexes: list[str]) -> None:
    from local_rag.index import open_index

    chunks = {c.id: c.text for c in open_index(load(None, None, source, as_built=True)).chunks}
    queries = [json.loads(line) for f in query_files.split(",") for line in open(f, encoding="utf-8")]
    print(f"{len(queries)} questions written for chunks of {source}; share whose chunk the top k cover")
    print("| index | passages | top 1 | top 3 | top 5 |\n|---|---:|---:|---:|---:|")
    found: dict[str, dict[int, list[bool]]] = {}
    for index in indexes:
        retriever = open_retriever(load(None, None, index, as_built=True))  # its own BM25 tokenization
        found[index] = {}
        for k in (1, 3, 5):
            found[index][k] = []
            for q in queries:
                src = words(chunks[q["passage_id"]])
                hits = retriever.search([Query(q["text"], "lastturn")], top_k=k)
                found[index][k].append(any(len(src & words(h.text)) / len(src) >= 0.6 for h in hits))
        cells = [f"{sum(found[index][k]) / len(queries):.3f}" for k in (1, 3, 5)]
        print(f"| {index} | {open_index(load(None, None, index, as_built=True)).manifest.passages} | " + " | ".join(cells) + " |")
    for index in indexes[1:]:  # paired against the first: questions only one of the two finds (sign test)
        pairs = []
        for k in (1, 3, 5):
            first, other = found[indexes[0]][k], found[index][k]
            better = sum(a and not b for a, b in zip(first, other))
            worse = sum(b and not a for a, b in zip(first, other))
            pairs.append(f"top {k}: {better} vs {worse} (p={sign_p(better, worse):.3f})")
        print(f"\n{indexes[0]} against {index}, questions only one finds: " + "; ".join(pairs))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])

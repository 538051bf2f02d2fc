"""Contextual chunk headers measured (``scripts/bench_headers.py``): long documents that share vocabulary, saved as
.txt files with hashed names,
and questions that name their document. Retrieval with ``chunker.header=none`` (what both indexes saw before: the
hash title says nothing) against ``title+section`` (the title from the file's first line).

    python scripts/bench_headers.py --out runs/i28/headers.json [--docs 150] [--profile cpu-test]

Collection: IBM Cloud documentation pages rebuilt from the MTRAG cloud pool (the pool passages of each page joined
by their offsets; a page's first line is its title). The pages of the test conversations' gold passages, plus other
pages up to ``--docs``, all of them long (5+ pool passages). Questions: the last user turns of the MTRAG **test**
conversations (cloud) whose gold passage lies in one of these pages, prefixed with the page's title as a user names
a document ("In <title>: <question>"). Scored at chunk level, k=5: hit@1 (the top chunk comes from the named
page), the share of the top 5 chunks that come from it, and MRR of its first chunk; BM25 and dense (MiniLM) alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from local_rag.corpus.readers import mtrag_doc_id
from local_rag.embed import load_embedder
from local_rag.index import build_index, open_index
from local_rag.mtrag import default_mtrag_dir
from local_rag.retrieve.retrievers import BM25Retriever, DenseRetriever
from local_rag.settings import load_settings

MTRAG = default_mtrag_dir()


def pages(pool: Path) -> dict[str, str]:
    """doc id -> the page text joined from its pool passages by offset (overlaps removed)."""
    parts: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    with pool.open(encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            doc, start, end = record["_id"].rsplit("-", 2)
            parts[doc].append((int(start), int(end), record["text"]))
    out = {}
    for doc, pieces in parts.items():
        if len(pieces) < 5:
            continue
        pieces.sort()
        if pieces[0][0] > 20:  # the page's start (its title line) is not in the pool
            continue
        text, reached = "", 0
        for start, end, piece in pieces:
            if end <= reached:
                continue
            text += ("\n\n" if start > reached else "") + piece[max(0, reached - start):]
            reached = end
        out[doc] = text.strip()
    return out


def questions(docs: set[str]) -> list[tuple[str, str, str]]:
    """(query id, last user turn, gold doc) of the test conversations whose first gold passage is in ``docs``."""
    test = set((MTRAG / "splits" / "mtrag_test_conversations.txt").read_text().split())
    gold: dict[str, str] = {}
    for line in (MTRAG / "retrieval_tasks" / "cloud" / "qrels" / "dev.tsv").read_text().splitlines()[1:]:
        qid, pid, _ = line.split("\t")
        gold.setdefault(qid, mtrag_doc_id(pid))
    out = []
    for line in (MTRAG / "retrieval_tasks" / "cloud" / "cloud_lastturn.jsonl").open():
        record = json.loads(line)
        qid = record["_id"]
        if qid.split("<::>")[0] in test and gold.get(qid) in docs:
            out.append((qid, record["text"].replace("|user|:", "").strip(), gold[qid]))
    return out


def run(args: argparse.Namespace) -> None:
    """Run the benchmark with the options parsed by ``scripts/bench_headers.py``."""
    all_pages = pages(MTRAG / "corpora" / "pool" / "cloud.jsonl")
    asked = questions(set(all_pages))
    chosen = sorted({doc for _, _, doc in asked})
    chosen += [d for d in sorted(all_pages) if d not in chosen][: max(0, args.docs - len(chosen))]
    title = {d: all_pages[d].splitlines()[0].strip() for d in chosen}
    results: dict[str, object] = {"docs": len(chosen), "questions": len(asked), "profile": args.profile}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for doc in chosen:
            name = hashlib.sha1(doc.encode()).hexdigest()[:16]
            (folder / f"{name}.txt").write_text(all_pages[doc] + "\n", encoding="utf-8")
        file_doc = {f"{hashlib.sha1(d.encode()).hexdigest()[:16]}.txt": d for d in chosen}
        queries = [f"In {title[doc]}: {text}" for _, text, doc in asked]
        for header in ("none", "title+section"):
            settings = load_settings(args.profile, overrides={
                "indexes_dir": str(Path(tmp) / "indexes"), "index": f"h-{header}", "chunker": {"header": header},
                **({"dense": {"enabled": False}, "retrieval": {"retrievers": ["bm25"]}} if args.sparse_only else {}),
            })
            embedder = None if args.sparse_only else load_embedder(settings.embedder, settings.models_dir)
            started = time.perf_counter()
            manifest = build_index(settings, folder, embedder=embedder, progress=False)
            build_s = time.perf_counter() - started
            index = open_index(settings, model_checksum=embedder.checksum if embedder else None)
            row: dict[str, object] = {"chunks": manifest.chunks, "build_s": round(build_s, 1)}
            retrievers = [BM25Retriever(index)] + ([DenseRetriever(index, embedder)] if embedder else [])
            for retriever in retrievers:
                rows, _ = retriever.search_chunks(queries, 5)
                hit1 = share = rr = 0.0
                for (_, _, doc), ranked in zip(asked, rows, strict=True):
                    docs = [file_doc[index.chunks[r].doc_id] if r >= 0 else "" for r in ranked]
                    hit1 += docs[0] == doc
                    share += sum(d == doc for d in docs) / 5
                    rr += next((1 / (i + 1) for i, d in enumerate(docs) if d == doc), 0.0)
                n = len(asked)
                row[retriever.name] = {"hit@1": round(hit1 / n, 3), "share@5": round(share / n, 3),
                                       "mrr@5": round(rr / n, 3)}
            results[header] = row
            print(header, json.dumps(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")

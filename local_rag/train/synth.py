"""Synthetic queries for a corpus (InPars / GPL style): the local LLM writes a standalone and a follow-up question
for sampled passages; a query is kept only when our retriever ranks its passage in the top ``k`` for it
(consistency filtering). Uses no labels: it adapts the retriever to anyone's own documents.

Generation is cached in a JSONL file keyed by model and passage id (resumable: cached passages are not asked
again). The kept queries become `Example` records (hard negatives mined like the MTRAG ones).

Example:
    >>> kept, dropped = consistency_filter([SynthQuery("p1", "question", "what is bm25?")], search, k=5)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from local_rag.records import Chunk, Hit, Query
from local_rag.subset import by_sha1

log = logging.getLogger("local_rag.train.synth")
KINDS = ("question", "follow_up")


@dataclass
class SynthQuery:
    passage_id: str
    kind: str  # question | follow_up
    text: str
    rank: int = 0  # the passage's rank for the query (0: not in the top k), set by the filter


def sample_passages(records: Sequence[dict[str, Any]], n: int, seed: object = "synth", min_chars: int = 200) -> list[dict[str, Any]]:
    """``n`` passages with at least ``min_chars`` of text, in sha1(seed:id) order (the same on every machine)."""
    usable = [r for r in records if len(str(r.get("text") or "").strip()) >= min_chars]
    return by_sha1(usable, key=lambda r: r["_id"], seed=seed)[:n]


def chunk_records(chunks: Iterable[Chunk]) -> list[dict[str, Any]]:
    """One record a chunk of an index (``_id`` = the chunk id), for an index built from files: there a document is
    one passage of many chunks, and a query is written for, and must find, one chunk."""
    return [{"_id": c.id, "title": c.title, "text": c.text} for c in chunks]


def by_chunk(search: Callable[[list[Query]], list[Hit]]) -> Callable[[list[Query]], list[Hit]]:
    """``search`` with each hit named by its best chunk (``passage_id`` = ``chunk_id``), so the consistency filter and
    the negatives work on chunks, as `chunk_records` does."""

    def wrapped(queries: list[Query]) -> list[Hit]:
        return [replace(h, passage_id=h.chunk_id or h.passage_id) for h in search(queries)]

    return wrapped


class QueryWriter:
    """Asks the LLM for the queries of one passage; results cached in ``cache`` (JSONL) by model and passage id."""

    def __init__(self, llm: Any, model: str, cache: str | Path | None, max_chars: int = 1500) -> None:
        self.llm, self.model, self.max_chars = llm, model, max_chars
        self.cache_path = Path(cache) if cache else None
        self.cache: dict[str, dict[str, str]] = {}
        if self.cache_path is not None and self.cache_path.exists():
            for line in self.cache_path.read_text(encoding="utf-8").splitlines():
                if line.strip().endswith("}"):
                    record = json.loads(line)
                    self.cache[record["key"]] = record["queries"]

    def __call__(self, passage_id: str, text: str) -> list[SynthQuery]:
        key = f"{self.model}|synth_queries|{passage_id}"
        if key not in self.cache:
            from local_rag.llm.prompts import load_prompt

            prompt = load_prompt("synth_queries")
            data, _ = self.llm.run_json(prompt.messages(passage=text[: self.max_chars]), prompt.schema,
                                        stage="synth", max_tokens=prompt.max_tokens)
            queries = {k: str(data.get(k, "")).strip() for k in KINDS} if isinstance(data, dict) else {}
            self.cache[key] = queries
            if self.cache_path is not None:
                self.cache_path.parent.mkdir(parents=True, exist_ok=True)
                with self.cache_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"key": key, "queries": queries}, ensure_ascii=False) + "\n")
        seen: set[str] = set()  # a small model sometimes writes the same question twice: keep it once
        out = []
        for kind, text in self.cache[key].items():
            if text and text.casefold() not in seen:
                seen.add(text.casefold())
                out.append(SynthQuery(passage_id, kind, text))
        return out


def consistency_filter(queries: Iterable[SynthQuery], search: Callable[[list[Query]], list[Hit]], k: int = 5,
                       kinds: Sequence[str] = ("question",)) -> tuple[list[SynthQuery], list[SynthQuery]]:
    """Split ``queries`` of the wanted ``kinds`` into (kept, dropped): kept when the retriever ranks the query's own
    passage within its top ``k`` (``rank`` records where)."""
    kept: list[SynthQuery] = []
    dropped: list[SynthQuery] = []
    for q in queries:
        if q.kind not in kinds:
            continue
        ids = [h.passage_id for h in search([Query(q.text, "lastturn")])[:k]]
        q.rank = ids.index(q.passage_id) + 1 if q.passage_id in ids else 0
        (kept if q.rank else dropped).append(q)
    return kept, dropped


def write_queries(queries: Sequence[SynthQuery], path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(asdict(q), ensure_ascii=False) + "\n" for q in queries), encoding="utf-8")

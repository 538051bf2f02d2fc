"""Synthetic queries for a corpus (InPars / GPL style): the local LLM writes a standalone and a follow-up question
for sampled passages; a query is kept only when our retriever ranks its passage in the top ``k`` for it
(consistency filtering). Uses no labels: it adapts the retriever to anyone's own documents.

Generation is cached in a JSONL file keyed by model and passage id (resumable: cached passages are not asked
again). The kept queries become `Example` records (hard negatives mined like the MTRAG ones). A share of the
documents can be held out (`split_heldout`): their queries, unfiltered, are never trained on and measure a model on
the person's own documents (`rank_of`, `metrics_of_ranks`), with no labels.

Example:
    >>> kept, dropped = consistency_filter([SynthQuery("p1", "question", "what is bm25?")], search, k=5)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError
from local_rag.records import Chunk, Hit, Query
from local_rag.subset import by_sha1, first_by_sha1
from local_rag.train.data import Example, document_of

log = logging.getLogger("local_rag.train.synth")
KINDS = ("question", "follow_up")
UNANSWERABLE = "unanswerable"  # the kind the synth_unanswerable prompt writes beside "question"


@dataclass
class SynthQuery:
    passage_id: str
    kind: str  # question | follow_up | unanswerable
    text: str
    rank: int = 0  # the passage's rank for the query (0: not in the top k), set by the filter


#: a passage shorter than this gets no synthetic queries (`sample_passages`)
MIN_CHARS = 200


def sample_passages(records: Sequence[dict[str, Any]], n: int, seed: object = "synth", min_chars: int = MIN_CHARS,
                    ) -> list[dict[str, Any]]:
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
    """Asks the LLM for the queries of one passage; results cached in ``cache`` (JSONL) by model, prompt and passage
    id. ``prompt``: ``synth_queries`` (question, follow_up) or ``synth_unanswerable`` (question, unanswerable).
    ``llm`` may be a function that loads it: then it is loaded at the first passage the cache lacks (a resumed run
    whose passages are all cached loads no model)."""

    def __init__(self, llm: Any, model: str, cache: str | Path | None, max_chars: int = 1500,
                 prompt: str = "synth_queries", keep_example_copies: bool = False) -> None:
        self.llm, self.model, self.max_chars, self.prompt = llm, model, max_chars, prompt
        # a small model writes about the prompt's example instead of its passage ("the Eiffel Tower", 9% of the 0.5B's)
        self.example_names = set() if keep_example_copies else example_names(prompt)
        self.example_copies = 0
        self.cache_path = Path(cache) if cache else None
        self.cache: dict[str, dict[str, str]] = {}
        if self.cache_path is not None and self.cache_path.exists():
            for line in self.cache_path.read_text(encoding="utf-8").splitlines():
                if line.strip().endswith("}"):
                    record = json.loads(line)
                    self.cache[record["key"]] = record["queries"]

    def __call__(self, passage_id: str, text: str) -> list[SynthQuery]:
        key = f"{self.model}|{self.prompt}|{passage_id}"
        if key not in self.cache:
            from local_rag.llm.prompts import load_prompt

            prompt = load_prompt(self.prompt)
            if callable(self.llm) and not hasattr(self.llm, "run_json"):
                self.llm = self.llm()
            data, _ = self.llm.run_json(prompt.messages(passage=text[: self.max_chars]), prompt.schema,
                                        stage="synth", max_tokens=prompt.max_tokens)
            kinds = list((prompt.schema or {}).get("properties", KINDS))
            queries = {k: str(data.get(k, "")).strip() for k in kinds} if isinstance(data, dict) else {}
            self.cache[key] = queries
            if self.cache_path is not None:
                self.cache_path.parent.mkdir(parents=True, exist_ok=True)
                with self.cache_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"key": key, "queries": queries}, ensure_ascii=False) + "\n")
        seen: set[str] = set()  # a small model sometimes writes the same question twice: keep it once
        in_passage = set(_words(text))
        out = []
        for kind, query in self.cache[key].items():
            if not query or query.casefold() in seen:
                continue
            if self.example_names & (set(_words(query)) - in_passage):  # names the example, not this passage
                self.example_copies += 1
                continue
            seen.add(query.casefold())
            out.append(SynthQuery(passage_id, kind, query))
        return out


def example_names(prompt: str) -> set[str]:
    """The names of a prompt's few-shot passages: words capitalised inside a sentence and never written lower-case
    there ("eiffel", "tower", "paris"; not "world", which also appears lower-case)."""
    from local_rag.llm.prompts import load_prompt

    text = " ".join(user for user, _ in load_prompt(prompt).examples)
    lower = {w for w in re.findall(r"[a-z][\w-]*", text)}
    names = set()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n", text):
        for word in re.findall(r"[A-Za-z][\w-]*", sentence)[1:]:
            if word[0].isupper() and word.casefold() not in lower:
                names.add(word.casefold())
    return names


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def consistency_filter(queries: Iterable[SynthQuery], search: Callable[[list[Query]], list[Hit]], k: int = 5,
                       kinds: Sequence[str] = ("question",)) -> tuple[list[SynthQuery], list[SynthQuery]]:
    """Split ``queries`` of the wanted ``kinds`` into (kept, dropped): kept when the retriever ranks the query's own
    passage within its top ``k`` (``rank`` records where)."""
    kept: list[SynthQuery] = []
    dropped: list[SynthQuery] = []
    for q in queries:
        if q.kind not in kinds:
            continue
        q.rank = rank_of(q, search, k)
        (kept if q.rank else dropped).append(q)
    return kept, dropped


def rank_of(query: SynthQuery, search: Callable[[list[Query]], list[Hit]], depth: int) -> int:
    """Where ``search`` ranks the query's own passage (1-based; 0: not in the top ``depth``)."""
    ids = [h.passage_id for h in search([Query(query.text, "lastturn")])[:depth]]
    return ids.index(query.passage_id) + 1 if query.passage_id in ids else 0


def split_heldout(queries: Sequence[SynthQuery], fraction: float, seed: object = "heldout",
                  ) -> tuple[list[SynthQuery], list[SynthQuery]]:
    """(train, held out): the queries of a ``fraction`` of the documents (sha1 order, at least one when there are two
    or more) are held out, so that no chunk of a held-out document is trained on."""
    if not 0 <= fraction < 1:
        raise BadInputError(f"--holdout must be in [0, 1), got {fraction}")
    per_doc = Counter(document_of(q.passage_id) for q in queries)
    docs = sorted(per_doc)
    n = round(fraction * len(docs))
    n = max(n, 1) if fraction > 0 and len(docs) > 1 else n
    # a document holding more than the whole held-out share of the queries is passed over (one long file of a small
    # folder held out half the queries); in a collection of many documents none is, and the split is as it was
    budget = fraction * len(queries)
    fitting = [d for d in by_sha1(docs, key=lambda d: d) if per_doc[d] <= budget]
    held_docs = set(fitting[:n]) if len(fitting) >= n else (first_by_sha1(docs, n) if n else set())
    held = [q for q in queries if document_of(q.passage_id) in held_docs]
    return [q for q in queries if document_of(q.passage_id) not in held_docs], held


def document_folds(queries: Sequence[SynthQuery], folds: int) -> list[set[str]]:
    """The documents of ``queries`` in ``folds`` groups (fewer when there are fewer documents) of about as many
    queries each: the largest document first (sha1 order among equals), each into the group with the fewest queries
    so far. Cross-validation trains on all groups but one and measures on that one, so no query is measured by a model
    trained on its own document.

    Raises:
        BadInputError: fewer than two folds asked, or the queries come from a single document.
    """
    if folds < 2:
        raise BadInputError(f"--folds must be 0 (one held-out share) or at least 2, got {folds}")
    per_doc = Counter(document_of(q.passage_id) for q in queries)
    if len(per_doc) < 2:
        only = f"all {len(queries)} come from {next(iter(per_doc))}" if per_doc else "there are none"
        raise BadInputError(f"the check measures a model on documents it was not trained on, so it needs queries from "
                            f"two documents or more; {only} (more --passages reaches other documents when the index "
                            f"has them, with chunks of {MIN_CHARS} characters or more; an index of one document cannot "
                            "be checked)")
    groups: list[set[str]] = [set() for _ in range(min(folds, len(per_doc)))]
    sizes = [0] * len(groups)
    order = {d: i for i, d in enumerate(by_sha1(per_doc, key=lambda d: d))}
    for doc in sorted(per_doc, key=lambda d: (-per_doc[d], order[d])):
        smallest = sizes.index(min(sizes))
        groups[smallest].add(doc)
        sizes[smallest] += per_doc[doc]
    return groups


def write_heldout(queries: Sequence[SynthQuery], path: str | Path, unit: str) -> None:
    """Held-out queries, one JSON line each, with the unit their target names (``chunk`` or ``passage``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({**asdict(q), "unit": unit}, ensure_ascii=False) + "\n"
                            for q in queries), encoding="utf-8")


def read_heldout(path: str | Path) -> tuple[list[SynthQuery], str]:
    """The queries of `write_heldout` and their unit.

    Raises:
        BadInputError: a missing or empty file, a line that is not a held-out query, or mixed units.
    """
    path = Path(path)
    if not path.is_file():
        raise BadInputError(f"{path}: no such file (write it with `local-rag synth queries --holdout 0.2 ...`)")
    queries, units = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            queries.append(SynthQuery(str(record["passage_id"]), str(record["kind"]), str(record["text"])))
            units.add(record.get("unit", "passage"))
        except (ValueError, KeyError, TypeError) as exc:
            raise BadInputError(f"{path}:{n}: not a held-out query ({exc.__class__.__name__}: {exc})") from None
    if not queries:
        raise BadInputError(f"{path}: no held-out queries")
    if len(units) > 1 or not units <= {"chunk", "passage"}:
        raise BadInputError(f"{path}: units {sorted(units)}; expected one of chunk, passage")
    return queries, units.pop()


def reciprocal_rank(rank: int, cutoff: int = 10) -> float:
    """1/rank within the ``cutoff`` (a query's MRR@10 term), 0 outside it or when not found (rank 0)."""
    return 1 / rank if 0 < rank <= cutoff else 0.0


def metrics_of_ranks(ranks: Sequence[int], depth: int = 20) -> dict[str, float | int]:
    """MRR@10 and recall@1/5/``depth`` of the ranks `rank_of` gave (0: not in the top ``depth``)."""
    n = max(len(ranks), 1)
    out: dict[str, float | int] = {"queries": len(ranks), "mrr@10": round(sum(map(reciprocal_rank, ranks)) / n, 4)}
    for k in sorted({1, 5, depth}):
        out[f"recall@{k}"] = round(sum(0 < r <= k for r in ranks) / n, 4)
    return out


def unanswerable_examples(queries: Iterable[SynthQuery], texts: dict[str, str]) -> list[Example]:
    """Containment pairs: each unanswerable query with its own passage as the one negative (no positive), for a
    cross-encoder trained with ``bce`` to tell "holds the answer" from "is on topic". Dropped: a query copied from its
    passage, and one written for two passages or more (a generic question, or the prompt's example when the writer
    keeps example copies)."""
    queries = [q for q in queries if q.kind == UNANSWERABLE and q.passage_id in texts]
    seen = Counter(_plain(q.text) for q in queries)
    # a small model copies a sentence of the passage (then it is answered) or writes one question for many passages
    keep = [q for q in queries if _plain(q.text) not in _plain(texts[q.passage_id]) and seen[_plain(q.text)] == 1]
    return [Example(f"synth:{q.passage_id}:{q.kind}", "synth", UNANSWERABLE, q.text, "", "", [texts[q.passage_id]],
                    [q.passage_id]) for q in keep]


def _plain(text: str) -> str:
    return " ".join(_words(text))


def write_queries(queries: Sequence[SynthQuery], path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(asdict(q), ensure_ascii=False) + "\n" for q in queries), encoding="utf-8")

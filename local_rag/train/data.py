"""Training data for the retrieval specialists: (query, gold passage, hard negatives) from MTRAG train conversations.

- Queries: per task, the texts of the chosen modes: ``lastturn`` and ``rewrite`` (the organizers' file; on the train
  split it is training signal, never used at test time) from the task files, ``own`` (the system's own standalone
  rewrite, read from an LLM rewrite cache when it holds the task).
- Hard negatives: our own hybrid retriever's top ``depth`` hits for the query, gold passages excluded; with
  ``drop_same_document`` also every candidate from a gold passage's document (likely false negatives).
- Written as JSONL, one example per (task, mode, gold passage): ``{"task_id", "domain", "mode", "query",
  "positive", "negatives": [...], "negative_ids": [...]}``; `file_digest` names the file in model manifests.

Example:
    >>> document_of("822086267_7384-8758-0-1374"), document_of("ibmcld_00474-7885-8455"), document_of("471123-0-798")
    ('822086267', 'ibmcld_00474', '471123')
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError
from local_rag.mtrag import read_jsonl
from local_rag.records import Hit, Query

QUERY_MODES = ("lastturn", "rewrite", "own")
_OFFSETS = re.compile(r"(-\d+)+$")
_CLAPNQ = re.compile(r"^(\d+)_\d+$")
_CHUNK = re.compile(r"#\d+$")
_PIECE = re.compile(r"#(?:s\d+|p\d+(?:\.\d+)?)$")  # a folder document's section piece or page (corpus.readers)


@dataclass
class Example:
    task_id: str
    domain: str
    mode: str
    query: str
    positive: str
    positive_id: str
    negatives: list[str] = field(default_factory=list)
    negative_ids: list[str] = field(default_factory=list)


def document_of(passage_id: str) -> str:
    """The document a passage comes from: its id without the trailing offsets (MTRAG's id shapes), chunk number,
    page or piece (``notes.md#3`` and ``notes.md#s2#0`` -> ``notes.md``; ``report.pdf#p4.1#0`` -> ``report.pdf``)."""
    stem = _OFFSETS.sub("", _PIECE.sub("", _CHUNK.sub("", passage_id)))
    match = _CLAPNQ.match(stem)
    return match.group(1) if match else stem or passage_id


def passage_text(record: dict[str, Any]) -> str:
    title, text = str(record.get("title") or "").strip(), str(record.get("text") or "").strip()
    return f"{title}\n{text}" if title and not text.startswith(title) else text


def hit_text(hit: Hit) -> str:
    return f"{hit.title}\n{hit.text}" if hit.title and not hit.text.startswith(hit.title) else hit.text


def load_passages(corpus: str | Path, wanted: set[str] | None = None) -> dict[str, str]:
    """Passage id -> text (title first) from a corpus JSONL, only ``wanted`` ids when given."""
    out = {}
    for record in read_jsonl(corpus):
        pid = str(record.get("_id", record.get("id", "")))
        if wanted is None or pid in wanted:
            out[pid] = passage_text(record)
    return out


def own_rewrites(cache: str | Path | None, model: str | None = None) -> dict[str, str]:
    """Task id -> the system's own rewrite, from an `LLMQueries` cache file (``key`` ends with ``|<task id>``)."""
    out: dict[str, str] = {}
    if not cache or not Path(cache).exists():
        return out
    for record in read_jsonl(cache):
        key = str(record.get("key", ""))
        parts = key.split("|")
        if len(parts) < 3 or parts[1] != "rewrite" or (model and parts[0] != model):
            continue
        texts = record.get("queries", {}).get("rewrite") or []
        if texts and texts[0].strip():
            out[parts[-1]] = texts[0]
    return out


def build_examples(
    tasks: Sequence[tuple[str, str, dict[str, str]]],
    qrels: dict[str, dict[str, int]],
    passages: dict[str, str],
    search: Callable[[list[Query]], list[Hit]] | None,
    negatives: int = 8,
    drop_same_document: bool = True,
    judge: Callable[[str, str], bool] | None = None,
    progress: Callable[[Iterable[Any]], Iterable[Any]] = lambda x: x,
) -> list[Example]:
    """One `Example` per (task, query mode, gold passage) of ``tasks`` = ``[(task_id, domain, {mode: text})]``.

    ``search`` mines hard negatives (hits ranked best first); gold passages never become negatives, nor (with
    ``drop_same_document``) passages of a gold passage's document, nor those ``judge(query, text)`` calls relevant.
    """
    out: list[Example] = []
    for task_id, domain, queries in progress(tasks):
        gold = {pid for pid, rel in qrels.get(task_id, {}).items() if rel > 0}
        if not gold:
            continue
        gold_docs = {document_of(pid) for pid in gold}
        for mode, query in queries.items():
            if not query.strip():
                continue
            mined: list[Hit] = search([Query(query, "lastturn")]) if search is not None and negatives else []
            neg_ids: list[str] = []
            neg_texts: list[str] = []
            for hit in mined:
                if len(neg_ids) >= negatives:
                    break
                if hit.passage_id in gold or hit.passage_id in neg_ids:
                    continue
                if drop_same_document and document_of(hit.passage_id) in gold_docs:
                    continue
                text = hit_text(hit)
                if judge is not None and judge(query, text):
                    continue
                neg_ids.append(hit.passage_id)
                neg_texts.append(text)
            for pid in sorted(gold):
                if pid in passages:
                    out.append(Example(task_id, domain, mode, query, passages[pid], pid, list(neg_texts), list(neg_ids)))
    return out


def write_examples(examples: Sequence[Example], path: str | Path) -> str:
    """Write ``examples`` as JSONL (atomically) and return the file's sha256."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for ex in examples:
            fh.write(json.dumps(asdict(ex), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return file_digest(path)


def read_examples(path: str | Path) -> list[Example]:
    """Examples from a JSONL file written by `write_examples`.

    Raises:
        BadInputError: a missing file, a malformed line, or no example at all.
    """
    records = read_jsonl(path)
    try:
        examples = [Example(**r) for r in records]
    except TypeError as exc:
        raise BadInputError(f"{path}: not a training-examples file ({exc})") from exc
    if not examples:
        raise BadInputError(f"{path}: the training set is empty")
    return examples


def file_digest(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def mtrag_tasks(
    mtrag_dir: str | Path, split: str, domain: str, modes: Sequence[str], own_cache: str | Path | None = None,
    llm_model: str | None = None,
) -> tuple[list[tuple[str, str, dict[str, str]]], dict[str, dict[str, int]]]:
    """``[(task_id, domain, {mode: text})]`` and qrels of one domain's retrieval tasks in MTRAG split ``split``.

    Raises:
        BadInputError: an unknown query mode, or missing task files.
    """
    from local_rag.evaluation.splits import load_split
    from local_rag.mtrag import load_retrieval_tasks
    from local_rag.subset import conversation_of

    unknown = [m for m in modes if m not in QUERY_MODES]
    if unknown:
        raise BadInputError(f"unknown query mode(s) {', '.join(unknown)}; valid: {', '.join(QUERY_MODES)}")
    conversations = load_split(mtrag_dir, split)
    file_modes = [m for m in modes if m != "own"] or ["lastturn"]
    loaded = load_retrieval_tasks(Path(mtrag_dir) / "retrieval_tasks", domain, file_modes)
    own = own_rewrites(own_cache, llm_model) if "own" in modes else {}
    out = []
    for task_id in loaded.ids:
        if conversation_of(task_id) not in conversations:
            continue
        texts = {m: loaded.queries[m][task_id] for m in modes if m != "own" and task_id in loaded.queries[m]}
        if task_id in own:
            texts["own"] = own[task_id]
        out.append((task_id, domain, texts))
    return out, loaded.qrels


def term_overlap(examples: Sequence[Example], negatives: int = 3) -> dict[str, float | int]:
    """How much of the query's words the gold passage and its top mined negatives contain (mean share of the query's
    content words, 3+ letters), and how often the gold passage contains more than every one of them. Mined negatives
    that share more of the query than the gold passage teach a cross-encoder that overlap means *irrelevant*."""
    def words(text: str) -> set[str]:
        return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}

    gold, mined, wins, used = 0.0, 0.0, 0, 0
    for ex in examples:
        query = words(ex.query)
        if not query or len(ex.negatives) < negatives:
            continue
        share = [len(query & words(text)) / len(query) for text in [ex.positive, *ex.negatives[:negatives]]]
        gold += share[0]
        mined += sum(share[1:]) / negatives
        wins += share[0] > max(share[1:])
        used += 1
    if not used:
        return {"examples": 0}
    return {"examples": used, "gold_overlap": round(gold / used, 3), "negative_overlap": round(mined / used, 3),
            "gold_beats_all": round(wins / used, 3)}

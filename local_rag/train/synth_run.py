"""The two runs behind ``local-rag synth``: write, filter and keep synthetic queries for an index
(`write_synth_examples`), and measure a model on the held-out ones (`heldout_rows`). `local_rag.train.adapt` chains
them with the embedder's training; the CLI only prints what they return.

Example:
    >>> run = write_synth_examples(settings, "runs/notes-synth.jsonl", SynthRun(passages=200, holdout=0.2))  # doctest: +SKIP
    >>> heldout_rows(settings, *read_heldout(run.heldout_file), reranker_model="notes-emb")  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError
from local_rag.paths import default_runs_dir
from local_rag.settings import Settings
from local_rag.train.synth import SynthQuery


@dataclass
class SynthRun:
    """What `write_synth_examples` writes: the knobs of ``local-rag synth queries``."""

    corpus: str | Path | None = None  # a JSONL corpus (passages); None: the index's own chunks
    passages: int = 200
    k: int = 5
    kinds: Sequence[str] = ("question",)
    filter: bool = True
    negatives: int = 8
    cache: str | Path | None = None  # default runs/synth-cache.jsonl
    holdout: float = 0.0
    unanswerable: bool = False
    keep_example_copies: bool = False


#: the kinds of query the synth prompt writes for a passage
KINDS = ("question", "follow_up")


def check_kinds(kinds: Sequence[str]) -> None:
    unknown = set(kinds) - set(KINDS)
    if unknown or not kinds:
        raise BadInputError(f"--kinds: unknown {sorted(unknown) or 'none given'}; valid: {', '.join(KINDS)}")


def check_run(run: SynthRun) -> None:
    """Refuse knobs that would spend the LLM's time for nothing (before any model loads)."""
    if run.passages < 1:
        raise BadInputError(f"--passages must be at least 1, got {run.passages}")
    if run.k < 1:
        raise BadInputError(f"--k must be at least 1 (a query is kept when its passage is in the top k), got {run.k}")
    if run.negatives < 0:
        raise BadInputError(f"--negatives must be 0 or more, got {run.negatives}")
    if not 0 <= run.holdout < 1:
        raise BadInputError(f"--holdout must be in [0, 1), got {run.holdout}")
    check_kinds(run.kinds)


@dataclass
class SynthResult:
    out_file: Path
    info: dict[str, Any]
    kept: int
    dropped: int
    examples: int
    unanswerable: int
    example_copies: int
    heldout_file: Path | None = None
    heldout: list[SynthQuery] = field(default_factory=list)
    written: list[SynthQuery] = field(default_factory=list)  # every query of the wanted kinds not held out, kept or not


def write_synth_examples(settings: Settings, out_file: str | Path, run: SynthRun, progress: bool = True) -> SynthResult:
    """Queries written by the LLM for sampled passages of ``settings.index`` (or ``run.corpus``), kept when their
    passage ranks in the retriever's top ``run.k``, as training examples in ``out_file`` (with ``<out>.info.json``,
    ``<out>.queries.jsonl`` and, with a holdout, ``<out>.heldout.jsonl``). Resumable through the LLM cache.

    Raises:
        IndexError_: no such index, or one built with another embedder (before any LLM call). BadInputError: a knob
        out of range (`check_run`), before anything loads.
    """
    from tqdm import tqdm

    from local_rag.index.folder import read_chunks
    from local_rag.llm import load_llm
    from local_rag.mtrag import read_jsonl
    from local_rag.retrieve.stack import open_retriever
    from local_rag.train.data import build_examples, passage_text, write_examples
    from local_rag.train.synth import (
        QueryWriter,
        by_chunk,
        chunk_records,
        consistency_filter,
        sample_passages,
        split_heldout,
        unanswerable_examples,
        write_heldout,
        write_queries,
    )

    check_run(run)
    kinds = list(run.kinds)
    retriever = open_retriever(settings)  # first: a wrong index fails before any LLM call
    # without a corpus, the index's chunks: a query must find its own chunk
    records = read_jsonl(run.corpus) if run.corpus else chunk_records(read_chunks(settings.indexes_dir / settings.index))
    sampled = sample_passages(records, run.passages)
    texts = {str(r["_id"]): passage_text(r) for r in sampled}
    writer = QueryWriter(functools.partial(load_llm, settings.llm, settings.models_dir), settings.llm.model,
                         run.cache or default_runs_dir() / "synth-cache.jsonl",
                         prompt="synth_unanswerable" if run.unanswerable else "synth_queries",
                         keep_example_copies=run.keep_example_copies)
    written = [q for pid in tqdm(texts, desc="synth queries", unit="passage", disable=not progress)
               for q in writer(pid, texts[pid])]
    top = functools.partial(retriever.search, top_k=max(run.k, 30))
    search = top if run.corpus else by_chunk(top)
    written, held = split_heldout(written, run.holdout)
    held = [q for q in held if q.kind in kinds]
    kept, dropped = consistency_filter(written, search, run.k, kinds)
    if not run.filter:
        kept, dropped = kept + dropped, []
    write_queries(kept + dropped, str(out_file) + ".queries.jsonl")
    tasks = [(f"synth:{q.passage_id}:{q.kind}", "synth", {"synth": q.text}) for q in kept]
    qrels = {f"synth:{q.passage_id}:{q.kind}": {q.passage_id: 1} for q in kept}
    examples = build_examples(tasks, qrels, texts, search, run.negatives)
    contained = unanswerable_examples(written, texts)  # none unless run.unanswerable
    examples += contained
    digest = write_examples(examples, out_file)
    info = {"corpus": str(run.corpus) if run.corpus else f"index {settings.index} (its chunks)", "passages": len(texts),
            "written": len(written), "kept": len(kept), "dropped": len(dropped), "filter": run.filter, "k": run.k,
            "kinds": ",".join(run.kinds), "model": settings.llm.model, "sha256": digest, "holdout": run.holdout,
            "heldout_queries": len(held), "unanswerable": len(contained), "example_copies_dropped": writer.example_copies}
    Path(str(out_file) + ".info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    heldout_file = None
    if run.holdout:
        heldout_file = Path(str(out_file) + ".heldout.jsonl")
        write_heldout(held, heldout_file, "passage" if run.corpus else "chunk")
    return SynthResult(Path(out_file), info, len(kept), len(dropped), len(examples), len(contained),
                       writer.example_copies, heldout_file, held, [q for q in written if q.kind in kinds])


def heldout_rows(settings: Settings, held: Sequence[SynthQuery], unit: str, reranker_models: Sequence[str] = (),
                 depth: int = 20, progress: bool = True) -> dict[str, dict[str, float | int]]:
    """MRR@10 and recall@1/5/``depth`` of the held-out queries' own passages (``unit``: chunk or passage): the first
    stage alone (row ``first stage``), then with each of ``reranker_models`` under ``settings.reranker`` (its backend,
    candidates, prior weight; row ``+ <name>``). The index is opened once."""
    from local_rag.train.synth import metrics_of_ranks

    ranks = heldout_ranks(settings, held, unit, reranker_models, depth, progress)
    return {row: metrics_of_ranks(values, depth) for row, values in ranks.items()}


def absent_targets(settings: Settings, held: Sequence[SynthQuery], unit: str) -> int:
    """How many of ``held`` name a chunk (or passage) that ``settings.index`` does not hold: their documents were
    removed, or the index was rebuilt, since `write_synth_examples` wrote them. Such a query can only miss.

    Raises:
        BadInputError: none of them is in the index (the file was written for another index).
    """
    from local_rag.index.folder import read_chunks
    from local_rag.index.manifest import IndexManifest

    IndexManifest.load(settings.index_dir)  # no such index: said as such, not as a missing chunks file
    chunks = read_chunks(settings.index_dir)
    present = {c.id for c in chunks} if unit == "chunk" else {c.passage_id for c in chunks}
    absent = sum(q.passage_id not in present for q in held)
    if absent == len(held):
        raise BadInputError(f"none of the {len(held)} held-out queries' {unit}s is in index {settings.index!r}: "
                            "were they written for another index (--index), or before it was rebuilt?")
    return absent


def heldout_ranks(settings: Settings, held: Sequence[SynthQuery], unit: str, reranker_models: Sequence[str] = (),
                  depth: int = 20, progress: bool = True, models_dir: Path | None = None) -> dict[str, list[int]]:
    """`heldout_rows`' rows as each held-out query's rank of its own passage (1-based, 0: not in the top ``depth``),
    in the order of ``held``: what a paired comparison of two rows resamples. ``models_dir`` (default the settings')
    is where ``reranker_models`` are looked up and their query twins go (cross-validation's short-lived models)."""
    from tqdm import tqdm

    from local_rag.llm.pipeline import question_of
    from local_rag.rerank import load_reranker
    from local_rag.rerank.base import reranked
    from local_rag.retrieve.stack import open_retriever
    from local_rag.train.synth import by_chunk, rank_of

    # loaded first: a missing model fails before any search (never a first stage under its name)
    rerankers = {Path(m).name: load_reranker(settings.reranker.model_copy(update={"model": m, "fallback": "error"}),
                                             models_dir or settings.models_dir) for m in reranker_models}
    retriever = open_retriever(settings)
    top = functools.partial(retriever.search, top_k=max(depth, settings.reranker.candidates))
    searches = {"first stage": top if unit == "passage" else by_chunk(top)}
    for name, reranker in rerankers.items():
        search = reranked(top, reranker, question_of)
        searches[f"+ {name}"] = search if unit == "passage" else by_chunk(search)
    return {row: [rank_of(q, search, depth) for q in tqdm(held, desc=row.removeprefix("+ "), unit="query",
                                                          disable=not progress)]
            for row, search in searches.items()}


def mrr_difference(a: list[int], b: list[int], resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """MRR@10 of ranks ``b`` minus ranks ``a`` (the same queries, in the same order) and its 95% interval, by a paired
    bootstrap over the queries (`local_rag.evaluation.retrieval_compare`)."""
    from local_rag.evaluation.retrieval_compare import compare_per_query
    from local_rag.train.synth import reciprocal_rank

    def per_query(ranks: list[int]) -> dict[str, dict[str, float]]:
        return {str(i): {"mrr@10": reciprocal_rank(r)} for i, r in enumerate(ranks)}

    row = compare_per_query(per_query(a), per_query(b), ["mrr@10"], resamples=resamples, seed=seed).rows[0]
    return float(row.diff or 0.0), float(row.low or 0.0), float(row.high or 0.0)

"""``local-rag synth queries``: synthetic training queries for a corpus, written by the local LLM, kept by
consistency filtering (no labels, no network)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import click

from local_rag.cli.main import handle_errors, load, settings_options


@click.group(name="synth")
def synth() -> None:
    """Synthetic training data from your own documents."""


@synth.command()
@settings_options
@click.argument("corpus", required=False, type=click.Path(dir_okay=False, exists=True))
@click.option("--passages", "n_passages", default=200, show_default=True, help="Passages sampled (sha1 order).")
@click.option("--k", default=5, show_default=True, help="Keep a query when its passage is in the retriever's top k.")
@click.option("--kinds", default="question", show_default=True, help="Query kinds kept: question, follow_up.")
@click.option("--filter/--no-filter", "filter_", default=True, show_default=True,
              help="Consistency filtering; --no-filter keeps every written query (the ablation).")
@click.option("--negatives", default=8, show_default=True, help="Hard negatives per kept query.")
@click.option("--cache", type=click.Path(dir_okay=False), help="LLM output cache (default runs/synth-cache.jsonl).")
@click.option("--out", "out_file", required=True, type=click.Path(dir_okay=False), help="Examples JSONL to write.")
@handle_errors
def queries(profile, config_file, index_name, corpus, n_passages, k, kinds, filter_, negatives, cache, out_file):
    """Write queries for sampled CORPUS passages (resumable), keep the consistent ones, mine hard negatives in the
    index (--index, built from CORPUS) and write training examples (`local-rag train reranker|embedder --data`).
    Without CORPUS, the index's own chunks are sampled (an index of files: PDF, DOCX, Markdown)."""
    from tqdm import tqdm

    from local_rag.cli.search import split_csv
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
        write_queries,
    )

    settings = load(profile, config_file, index_name)
    retriever = open_retriever(settings)  # first: a wrong index fails before any LLM call
    # without CORPUS, the index's chunks: a query must find its own chunk
    records = read_jsonl(corpus) if corpus else chunk_records(read_chunks(settings.indexes_dir / settings.index))
    sampled = sample_passages(records, n_passages)
    texts = {str(r["_id"]): passage_text(r) for r in sampled}
    writer = QueryWriter(load_llm(settings.llm, settings.models_dir), settings.llm.model,
                         cache or Path("runs") / "synth-cache.jsonl")
    written = [q for pid in tqdm(texts, desc="synth queries", unit="passage") for q in writer(pid, texts[pid])]
    top = functools.partial(retriever.search, top_k=max(k, 30))
    search = top if corpus else by_chunk(top)
    kept, dropped = consistency_filter(written, search, k, split_csv((kinds,)) or ["question"])
    if not filter_:
        kept, dropped = kept + dropped, []
    write_queries(kept + dropped, str(out_file) + ".queries.jsonl")
    tasks = [(f"synth:{q.passage_id}:{q.kind}", "synth", {"synth": q.text}) for q in kept]
    qrels = {f"synth:{q.passage_id}:{q.kind}": {q.passage_id: 1} for q in kept}
    examples = build_examples(tasks, qrels, texts, search, negatives)
    digest = write_examples(examples, out_file)
    info = {"corpus": str(corpus) if corpus else f"index {settings.index} (its chunks)", "passages": len(texts), "written": len(written), "kept": len(kept),
            "dropped": len(dropped), "filter": filter_, "k": k, "kinds": kinds, "model": settings.llm.model, "sha256": digest}
    Path(str(out_file) + ".info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    rule = f"passage in the top {k}" if filter_ else "no filter"
    click.echo(f"{len(kept)} of {len(kept) + len(dropped)} queries kept ({rule}); "
               f"{len(examples)} examples written to {out_file}")

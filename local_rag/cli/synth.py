"""``local-rag synth queries``: synthetic training queries for a corpus, written by the local LLM, kept by
consistency filtering (no labels, no network); ``local-rag synth eval``: a model measured on the held-out ones."""

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
@click.option("--holdout", default=0.0, show_default=True, type=click.FloatRange(0, 1, max_open=True),
              help="Share of the documents whose queries are held out, unfiltered, for `synth eval` (e.g. 0.2).")
@click.option("--unanswerable", is_flag=True,
              help="Also write a question each passage does NOT answer, as a negative-only example: containment "
                   "pairs for `train reranker --loss bce` (a decline signal for `train decider --cross-encoder`).")
@click.option("--keep-example-copies", is_flag=True,
              help="Keep queries that name the prompt's example (the Eiffel Tower) and not their passage: the runs "
                   "before session 21 kept them, so their commands pass this to reproduce.")
@click.option("--out", "out_file", required=True, type=click.Path(dir_okay=False), help="Examples JSONL to write.")
@handle_errors
def queries(profile, config_file, index_name, corpus, n_passages, k, kinds, filter_, negatives, cache, holdout,
            unanswerable, keep_example_copies, out_file):
    """Write queries for sampled CORPUS passages (resumable), keep the consistent ones, mine hard negatives in the
    index (--index, built from CORPUS) and write training examples (`local-rag train reranker|embedder --data`).
    Without CORPUS, the index's own chunks are sampled (an index of files: PDF, DOCX, Markdown). With --holdout, the
    queries of that share of the documents are not trained on: they go to <out>.heldout.jsonl for `synth eval`."""
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
        split_heldout,
        unanswerable_examples,
        write_heldout,
        write_queries,
    )

    kind_list = split_csv((kinds,)) or ["question"]
    settings = load(profile, config_file, index_name)
    retriever = open_retriever(settings)  # first: a wrong index fails before any LLM call
    # without CORPUS, the index's chunks: a query must find its own chunk
    records = read_jsonl(corpus) if corpus else chunk_records(read_chunks(settings.indexes_dir / settings.index))
    sampled = sample_passages(records, n_passages)
    texts = {str(r["_id"]): passage_text(r) for r in sampled}
    writer = QueryWriter(load_llm(settings.llm, settings.models_dir), settings.llm.model,
                         cache or Path("runs") / "synth-cache.jsonl",
                         prompt="synth_unanswerable" if unanswerable else "synth_queries",
                         keep_example_copies=keep_example_copies)
    written = [q for pid in tqdm(texts, desc="synth queries", unit="passage") for q in writer(pid, texts[pid])]
    top = functools.partial(retriever.search, top_k=max(k, 30))
    search = top if corpus else by_chunk(top)
    written, held = split_heldout(written, holdout)
    held = [q for q in held if q.kind in kind_list]
    kept, dropped = consistency_filter(written, search, k, kind_list)
    if not filter_:
        kept, dropped = kept + dropped, []
    write_queries(kept + dropped, str(out_file) + ".queries.jsonl")
    tasks = [(f"synth:{q.passage_id}:{q.kind}", "synth", {"synth": q.text}) for q in kept]
    qrels = {f"synth:{q.passage_id}:{q.kind}": {q.passage_id: 1} for q in kept}
    examples = build_examples(tasks, qrels, texts, search, negatives)
    contained = unanswerable_examples(written, texts)  # none unless --unanswerable
    examples += contained
    digest = write_examples(examples, out_file)
    info = {"corpus": str(corpus) if corpus else f"index {settings.index} (its chunks)", "passages": len(texts), "written": len(written), "kept": len(kept),
            "dropped": len(dropped), "filter": filter_, "k": k, "kinds": kinds, "model": settings.llm.model, "sha256": digest,
            "holdout": holdout, "heldout_queries": len(held), "unanswerable": len(contained),
            "example_copies_dropped": writer.example_copies}
    Path(str(out_file) + ".info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    rule = f"passage in the top {k}" if filter_ else "no filter"
    if writer.example_copies:
        click.echo(f"{writer.example_copies} queries about the prompt's example, not their passage, dropped")
    click.echo(f"{len(kept)} of {len(kept) + len(dropped)} queries kept ({rule}); "
               f"{len(examples)} examples written to {out_file}"
               + (f" ({len(contained)} of them unanswerable questions, negative only)" if unanswerable else ""))
    if holdout:
        heldout_file = str(out_file) + ".heldout.jsonl"
        write_heldout(held, heldout_file, "passage" if corpus else "chunk")
        click.echo(f"{len(held)} held-out queries written to {heldout_file}: "
                   f"local-rag synth eval {heldout_file} --index {settings.index}")


@synth.command(name="eval")
@settings_options
@click.argument("heldout", type=click.Path(dir_okay=False))
@click.option("--reranker", "reranker_model", help="A model to compare with the first stage: a models/ name or a folder "
              "(e.g. the embedder `train embedder` made, with --reranker-backend bi-encoder).")
@click.option("--reranker-backend", type=click.Choice(["sentence-transformers", "onnx", "bi-encoder"]),
              help="Backend of --reranker (default reranker.backend).")
@click.option("--candidates", type=int, help="First-stage hits --reranker re-scores (default reranker.candidates).")
@click.option("--prior-weight", type=float, help="Weight of the first stage's order fused with --reranker's (default reranker.prior_weight).")
@click.option("--depth", default=20, show_default=True, help="Ranks counted (recall@depth).")
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def eval_heldout(profile, config_file, index_name, heldout, reranker_model, reranker_backend, candidates, prior_weight,
                 depth, as_json):
    """How well the index finds the passages of HELDOUT's queries (`synth queries --holdout`), first stage alone and
    with --reranker: MRR@10, recall@1/5/depth. No labels: the queries were written by the LLM for those passages."""
    from tqdm import tqdm

    from local_rag.llm.pipeline import question_of
    from local_rag.retrieve.stack import open_retriever
    from local_rag.train.synth import by_chunk, rank_metrics, read_heldout

    held, unit = read_heldout(heldout)
    settings = load(profile, config_file, index_name, **{
        "reranker.model": reranker_model, "reranker.backend": reranker_backend, "reranker.candidates": candidates,
        "reranker.prior_weight": prior_weight})
    reranker = None
    if reranker_model:  # loaded first: a missing model fails before any search (never a first stage under its name)
        from local_rag.rerank import load_reranker

        reranker = load_reranker(settings.reranker.model_copy(update={"fallback": "error"}), settings.models_dir)
    retriever = open_retriever(settings)
    top = functools.partial(retriever.search, top_k=max(depth, settings.reranker.candidates))
    first = top if unit == "passage" else by_chunk(top)
    rows = {"first stage": rank_metrics(tqdm(held, desc="first stage", unit="query", disable=as_json), first, depth)}
    if reranker is not None:
        from local_rag.rerank.base import reranked

        search = reranked(top, reranker, question_of)
        rows[f"+ {Path(reranker_model).name}"] = rank_metrics(
            tqdm(held, desc=Path(reranker_model).name, unit="query", disable=as_json),
            search if unit == "passage" else by_chunk(search), depth)
    if as_json:
        click.echo(json.dumps({"heldout": str(heldout), "index": settings.index, "unit": unit, "rows": rows}, indent=2))
        return
    keys = list(next(iter(rows.values())))
    click.echo("| row | " + " | ".join(keys) + " |\n|---|" + "---:|" * len(keys))
    for name, metrics in rows.items():
        click.echo(f"| {name} | " + " | ".join(str(metrics[key]) for key in keys) + " |")

"""``local-rag synth queries``: synthetic training queries for a corpus, written by the local LLM, kept by
consistency filtering (no labels, no network); ``local-rag synth eval``: a model measured on the held-out ones."""

from __future__ import annotations

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
@click.option("--cache", type=click.Path(dir_okay=False), help="LLM output cache (default runs/synth-cache.jsonl; "
              "under the user data directory outside a checkout).")
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
    from local_rag.cli.search import split_csv
    from local_rag.train.synth_run import SynthRun, write_synth_examples

    settings = load(profile, config_file, index_name, shaped=True)
    run = SynthRun(corpus=corpus, passages=n_passages, k=k, kinds=split_csv((kinds,)) or ["question"], filter=filter_,
                   negatives=negatives, cache=cache, holdout=holdout, unanswerable=unanswerable,
                   keep_example_copies=keep_example_copies)
    result = write_synth_examples(settings, out_file, run)
    rule = f"passage in the top {k}" if filter_ else "no filter"
    if result.example_copies:
        click.echo(f"{result.example_copies} queries about the prompt's example, not their passage, dropped")
    click.echo(f"{result.kept} of {result.kept + result.dropped} queries kept ({rule}); "
               f"{result.examples} examples written to {out_file}"
               + (f" ({result.unanswerable} of them unanswerable questions, negative only)" if unanswerable else ""))
    if result.heldout_file is not None:
        click.echo(f"{len(result.heldout)} held-out queries written to {result.heldout_file}: "
                   f"local-rag synth eval {result.heldout_file} --index {settings.index}")


@synth.command(name="eval")
@settings_options
@click.argument("heldout", type=click.Path(dir_okay=False))
@click.option("--reranker", "reranker_model", help="A model to compare with the first stage: a models/ name or a folder "
              "(e.g. the embedder `train embedder` made, with --reranker-backend bi-encoder).")
@click.option("--reranker-backend", type=click.Choice(["sentence-transformers", "onnx", "bi-encoder", "likelihood"]),
              help="Backend of --reranker (default reranker.backend).")
@click.option("--candidates", type=click.IntRange(min=1), help="First-stage hits --reranker re-scores (default reranker.candidates).")
@click.option("--prior-weight", type=float, help="Weight of the first stage's order fused with --reranker's (default reranker.prior_weight).")
@click.option("--depth", default=20, show_default=True, type=click.IntRange(min=1), help="Ranks counted (recall@depth).")
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def eval_heldout(profile, config_file, index_name, heldout, reranker_model, reranker_backend, candidates, prior_weight,
                 depth, as_json):
    """How well the index finds the passages of HELDOUT's queries (`synth queries --holdout`), first stage alone and
    with --reranker: MRR@10, recall@1/5/depth. No labels: the queries were written by the LLM for those passages."""
    from local_rag.train.synth import metrics_of_ranks, read_heldout
    from local_rag.train.synth_run import absent_targets, heldout_ranks, mrr_difference

    held, unit = read_heldout(heldout)
    settings = load(profile, config_file, index_name, shaped=True, **{
        "reranker.model": reranker_model, "reranker.backend": reranker_backend, "reranker.candidates": candidates,
        "reranker.prior_weight": prior_weight})
    absent = absent_targets(settings, held, unit)
    if absent:
        click.echo(f"note: {absent} of the {len(held)} held-out queries name {unit}s index {settings.index} no longer "
                   "holds (removed, or rebuilt since `synth queries`): they count as misses", err=True)
    ranks = heldout_ranks(settings, held, unit, [reranker_model] if reranker_model else [], depth, progress=not as_json)
    rows = {row: metrics_of_ranks(values, depth) for row, values in ranks.items()}
    gain = None
    if reranker_model:  # the re-scorer's MRR@10 gain over the first stage, paired over the queries
        diff, low, high = mrr_difference(ranks["first stage"], ranks[f"+ {Path(reranker_model).name}"])
        gain = {"mrr@10": diff, "low": low, "high": high}
    if as_json:
        click.echo(json.dumps({"heldout": str(heldout), "index": settings.index, "unit": unit, "rows": rows,
                               "gain": gain}, indent=2))
        return
    keys = list(next(iter(rows.values())))
    click.echo("| row | " + " | ".join(keys) + " |\n|---|" + "---:|" * len(keys))
    for name, metrics in rows.items():
        click.echo(f"| {name} | " + " | ".join(str(metrics[key]) for key in keys) + " |")
    if gain is not None:
        click.echo(f"\nMRR@10 of {Path(reranker_model).name}: {gain['mrr@10']:+.4f} over the first stage (95% interval "
                   f"{gain['low']:+.4f} … {gain['high']:+.4f}, paired bootstrap over the {len(held)} queries)")

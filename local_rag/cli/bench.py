"""``local-rag bench``: per-stage latency, tokens/s, TTFT and memory of the pipeline on a fixed conversation set."""

from __future__ import annotations

import shlex
import sys

import click

from local_rag.cli.ask import pipeline_settings, stage_options
from local_rag.cli.main import handle_errors, settings_options
from local_rag.paths import default_reports_dir


@click.command()
@settings_options
@stage_options
@click.option("--conversations", "conversations_file", type=click.Path(dir_okay=False),
              help="MTRAG tasks (.jsonl) or a conversation JSON. Default: MTRAG tasks of an mtrag-<domain> index "
                   "(shared data), else the demo's scripted session on the demo index.")
@click.option("-n", "--limit", type=int, default=6, show_default=True, help="Conversations taken from the set.")
@click.option("--repeats", type=int, default=2, show_default=True, help="Runs of the whole set (after one warm-up turn).")
@click.option("--no-warmup", is_flag=True, help="Measure the first turn too (it includes model loading).")
@click.option("--build-passages", type=int, default=500, show_default=True,
              help="Passages for the index build throughput (0 = skip).")
@click.option("--build-corpus", type=click.Path(), help="Corpus for the build throughput (default: the index's pool "
              "corpus, else the bundled docs).")
@click.option("--no-bandwidth", is_flag=True, help="Skip the memory-bandwidth measurement.")
@click.option("--no-plot", is_flag=True, help="Skip the PNG charts (no matplotlib needed).")
@click.option("--out", "out_dir", default=lambda: str(default_reports_dir()),
              show_default="docs/benchmarks in a checkout, else benchmarks/ in the user data directory",
              help="Folder for the report files.")
@click.option("--name", help="Report file stem (default: bench-<profile>-<index>).")
@click.option("--json", "as_json", is_flag=True, help="Print the headline figures as JSON.")
@handle_errors
def bench(profile, config_file, index_name, conversations_file, limit, repeats, no_warmup, build_passages,
          build_corpus, no_bandwidth, no_plot, out_dir, name, as_json, **stages):
    """Run a fixed set of conversations through the pipeline and report, per stage, latency p50/p95, LLM prefill
    and decode tokens/s, time to first token and peak memory; decode speed against the memory-bandwidth bound;
    index build throughput. Writes JSON, Markdown and PNG charts (waterfall, memory by stage)."""
    import json

    from local_rag.bench.conversations import default_sessions, read_sessions
    from local_rag.bench.report import write_report
    from local_rag.bench.suite import run_bench
    from local_rag.cli.main import as_built_settings
    from local_rag.errors import BadInputError
    from local_rag.index.folder import wants_dense

    if repeats < 1 or limit < 1:
        raise BadInputError("--repeats and --limit must be at least 1")
    settings = pipeline_settings(profile, config_file, index_name or "demo", **stages)  # the stage switches of `ask`
    dense = wants_dense(settings)
    settings = as_built_settings(settings, note=False)  # a --sparse-only index is measured as `ask` runs it: BM25 alone
    if dense and not wants_dense(settings):
        click.echo(f"note: index {settings.index} has no vectors (built with --sparse-only): measured with BM25 alone",
                   err=True)
    if conversations_file:
        sessions, source = read_sessions(conversations_file, limit), f"file {conversations_file}"
    else:
        sessions, source = default_sessions(settings.index, limit)
        if settings.index != "demo" and not settings.index.startswith("mtrag-"):
            click.echo(f"note: no --conversations: the demo's questions (about local-rag's own documents) are asked of "
                       f"index {settings.index}, which may not hold their answers: the timings hold, the answers "
                       "mean little; give --conversations FILE (a conversation JSON, or MTRAG tasks) of your own",
                       err=True)
    if settings.index == "demo":
        from local_rag.demo import ensure_demo_index

        ensure_demo_index(settings, progress=False)
    command = "local-rag " + " ".join(shlex.quote(a) for a in sys.argv[1:])

    def progress(rec):
        click.echo(f"[repeat {rec.repeat + 1}] {rec.session} turn {rec.turn + 1}: {rec.wall_s:.2f} s ({rec.kind})", err=True)

    report = run_bench(settings, sessions, source, repeats=repeats, warmup=not no_warmup, bandwidth=not no_bandwidth,
                       build_passages=build_passages, build_corpus=build_corpus, command=command, progress=progress)
    paths = write_report(report, out_dir, name or f"bench-{settings.profile}-{settings.index}", plot=not no_plot)
    if as_json:
        click.echo(json.dumps({"headline": report["headline"], "files": paths}, indent=2))
        return
    h = report["headline"]
    click.echo(f"turn p50 {h['turn_p50_s']} s, p95 {h['turn_p95_s']} s; retrieval p50 {h['retrieval_p50_ms']} ms; "
               f"TTFT p50 {h['ttft_p50_s']} s; decode {h['generate_decode_tokens_per_s']} tok/s = "
               f"{h['generate_decode_share_of_bandwidth_bound']} of the bandwidth bound; peak RSS {h['peak_rss_mb']} MiB")
    click.echo("written: " + ", ".join(paths.values()))

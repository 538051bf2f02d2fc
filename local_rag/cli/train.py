"""``local-rag train``: build the small trained models of the pipeline (the decision stage, the support check)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from local_rag.cli.main import handle_errors, load, settings_options

MTRAG_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "mtrag"


@click.group()
def train() -> None:
    """Train the pipeline's small models (saved under models/ with a manifest entry)."""


@train.command()
@settings_options
@click.option("--mtrag", "mtrag_dir", type=click.Path(file_okay=False), default=str(MTRAG_DIR), envvar="LOCAL_RAG_MTRAG_DIR",
              show_default=True, help="MTRAG data folder (generation_tasks/, splits/, mtragun-dev/).")
@click.option("--name", default="decider", show_default=True, help="Model name in models/manifest.json.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default="docs/benchmarks/decider",
              show_default=True, help="Where report.json, report.md, confusion.png and predictions.jsonl go.")
@click.option("--index-prefix", default="mtrag-", show_default=True, help="MTRAG tasks retrieve from <prefix><domain>.")
@click.option("--dev-index-prefix", default="i24-mtrag-", show_default=True,
              help="MTRAG-UN tasks retrieve from <prefix><domain> (the pool plus mtragun-dev/corpora/extra).")
@click.option("--synthetic", default=150, show_default=True, help="Synthetic underspecified turns.")
@click.option("--domains", default="clapnq,cloud,fiqa,govt", show_default=True)
@click.option("--work", type=click.Path(file_okay=False), default="runs/decider", show_default=True,
              help="Cache of retrieved evidence (a rerun retrieves nothing twice).")
@handle_errors
def decider(profile, config_file, index_name, mtrag_dir, name, report_dir, index_prefix, dev_index_prefix, synthetic,
            domains, work):
    """Train the decision stage (answer / decline / clarify) and write its figures."""
    from local_rag.decide.experiment import train_decider

    settings = load(profile, config_file, index_name)
    report = train_decider(settings, Path(mtrag_dir), Path(report_dir), name, index_prefix, dev_index_prefix, synthetic,
                           [d.strip() for d in domains.split(",") if d.strip()], work=Path(work))
    click.echo(json.dumps({k: report[k] for k in ("chosen", "examples", "latency", "targets_met")}, indent=2))

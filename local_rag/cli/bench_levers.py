"""``local-rag bench-levers``: the speed levers of issue 26, one at a time and together (`local_rag.bench.lever_runs`)."""

from __future__ import annotations

from pathlib import Path

import click

from local_rag.cli.main import handle_errors

SPLIT = click.option("--split", default="test", show_default=True, type=click.Choice(["train", "test"]))
MODE = click.option("--mode", default="b", show_default=True, type=click.Choice(["b", "c"]),
                    help="b: the tasks' reference passages (Task B); c: retrieved from indexes/mtrag-<domain> (Task C).")
PROFILE = click.option("--profile", default="cpu-qwen", show_default=True)
THREADS = click.option("--threads", type=int, default=0, show_default=True, help="llama.cpp threads (0 = the profile's).")
OUT = click.option("--out", "out_dir", default="docs/benchmarks/levers", show_default=True, help="Folder for the result files.")


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


@click.group("bench-levers")
def bench_levers() -> None:
    """The speed levers measured on MTRAG tasks (docs/benchmarks.md, "Speed levers"); figures in --out."""


@bench_levers.command()
@OUT
@handle_errors
def standalone(out_dir):
    """How often the rewrite-skip rule fires on train and test follow-up turns (seconds, no model)."""
    from local_rag.bench import lever_runs

    lever_runs.standalone(Path(out_dir))


@bench_levers.command()
@PROFILE
@SPLIT
@click.option("--budgets", default="200,300,400,600", show_default=True, help="Evidence token budgets.")
@click.option("--max-tasks", type=int, default=0, show_default=True, help="The first tasks in conversation order (0 = all).")
@OUT
@handle_errors
def compress(profile, split, budgets, max_tasks, out_dir):
    """Evidence tokens and quality proxies per budget (Task B passages)."""
    from local_rag.bench import lever_runs

    lever_runs.compress(profile, split, [int(b) for b in _names(budgets)], max_tasks, Path(out_dir))


@bench_levers.command()
@PROFILE
@SPLIT
@MODE
@click.option("--configs", default="baseline,compress", show_default=True, help="Comma-separated configurations.")
@click.option("--conversations", type=int, default=2, show_default=True, help="Conversations, first by sha1 (0 = all).")
@click.option("--max-turns", type=int, default=0, show_default=True)
@click.option("--domains", default="", help="Comma-separated MTRAG domains (default: all).")
@THREADS
@OUT
@handle_errors
def ablation(profile, split, mode, configs, conversations, max_turns, domains, threads, out_dir):
    """Whole conversations answered in order under each configuration; resumable (one JSON line per turn)."""
    from local_rag.bench import lever_runs
    from local_rag.errors import BadInputError

    if unknown := [c for c in _names(configs) if c not in lever_runs.CONFIGS]:
        raise BadInputError(f"--configs: unknown {unknown}; choose from {', '.join(lever_runs.CONFIGS)}")
    lever_runs.ablation(profile, split, mode, _names(configs), conversations, max_turns, _names(domains), threads, Path(out_dir))


@bench_levers.command()
@PROFILE
@SPLIT
@click.option("--config", "configs", multiple=True, help="A prompt configuration (repeat the option; default: all). "
              "The names hold commas, so one name per flag.")
@MODE
@click.option("--max-turns", type=int, default=0, show_default=True)
@OUT
@handle_errors
def prefix(profile, split, configs, mode, max_turns, out_dir):
    """Every turn's prompt tokens and KV reuse, rendered and tokenized by the real model, nothing generated."""
    from local_rag.bench import lever_runs
    from local_rag.errors import BadInputError

    if unknown := [c for c in configs if c not in lever_runs.PREFIX_CONFIGS]:
        raise BadInputError(f"--config: unknown {unknown}; choose from {'; '.join(lever_runs.PREFIX_CONFIGS)}")
    lever_runs.prefix(profile, split, list(configs), mode, max_turns, Path(out_dir))


@bench_levers.command("profile")
@PROFILE
@click.option("--tokens", type=int, default=64, show_default=True)
@click.option("--repeats", type=int, default=2, show_default=True)
@THREADS
@OUT
@handle_errors
def profile_cmd(profile, tokens, repeats, threads, out_dir):
    """Where a decoded token's time goes: llama_decode, llama-cpp-python's eval and sampling, our loop."""
    from local_rag.bench import lever_runs

    lever_runs.decode_profile(profile, tokens, repeats, threads, Path(out_dir))


@bench_levers.command()
@OUT
@handle_errors
def table(out_dir):
    """The ablation table (table.md, summary.json) from the runs already in --out."""
    from local_rag.bench import lever_runs

    lever_runs.table(Path(out_dir))

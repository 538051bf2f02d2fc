"""``local-rag bench-levers``: the speed levers of issue 26, one at a time and together (`local_rag.bench.lever_runs`)."""

from __future__ import annotations

from pathlib import Path

import click

from local_rag.cli.main import handle_errors
from local_rag.cli.search import positive_ints
from local_rag.paths import default_reports_dir

SPLIT = click.option("--split", default="test", show_default=True, type=click.Choice(["train", "test"]))
MODE = click.option("--mode", default="b", show_default=True, type=click.Choice(["b", "c"]),
                    help="b: the tasks' reference passages (Task B); c: retrieved from indexes/mtrag-<domain> (Task C).")
PROFILE = click.option("--profile", default="cpu-qwen", show_default=True)
THREADS = click.option("--threads", type=click.IntRange(min=0), default=0, show_default=True, help="llama.cpp threads (0 = the profile's).")
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
@click.option("--max-tasks", type=click.IntRange(min=0), default=0, show_default=True, help="The first tasks in conversation order (0 = all).")
@OUT
@handle_errors
def compress(profile, split, budgets, max_tasks, out_dir):
    """Evidence tokens and quality proxies per budget (Task B passages)."""
    from local_rag.bench import lever_runs

    lever_runs.compress(profile, split, positive_ints("--budgets", budgets), max_tasks, Path(out_dir))


@bench_levers.command()
@PROFILE
@SPLIT
@MODE
@click.option("--configs", default="baseline,compress", show_default=True, help="Comma-separated configurations.")
@click.option("--conversations", type=click.IntRange(min=0), default=2, show_default=True, help="Conversations, first by sha1 (0 = all).")
@click.option("--max-turns", type=click.IntRange(min=0), default=0, show_default=True, help="Turns per conversation (0 = all).")
@click.option("--domains", default="", help="Comma-separated MTRAG domains (default: all).")
@THREADS
@OUT
@handle_errors
def ablation(profile, split, mode, configs, conversations, max_turns, domains, threads, out_dir):
    """Whole conversations answered in order under each configuration; resumable (one JSON line per turn)."""
    from local_rag.bench import lever_runs
    from local_rag.errors import BadInputError
    from local_rag.mtrag import DOMAINS

    if unknown := [c for c in _names(configs) if c not in lever_runs.CONFIGS]:
        raise BadInputError(f"--configs: unknown {unknown}; choose from {', '.join(lever_runs.CONFIGS)}")
    if unknown := [d for d in _names(domains) if d not in DOMAINS]:
        raise BadInputError(f"--domains: unknown {unknown}; MTRAG's are {', '.join(DOMAINS)}")
    lever_runs.ablation(profile, split, mode, _names(configs), conversations, max_turns, _names(domains), threads, Path(out_dir))


@bench_levers.command()
@PROFILE
@SPLIT
@click.option("--config", "configs", multiple=True, help="A prompt configuration (repeat the option; default: all). "
              "The names hold commas, so one name per flag.")
@MODE
@click.option("--max-turns", type=click.IntRange(min=0), default=0, show_default=True, help="Turns per conversation (0 = all).")
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
@click.option("--tokens", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--repeats", type=click.IntRange(min=1), default=2, show_default=True)
@THREADS
@OUT
@handle_errors
def profile_cmd(profile, tokens, repeats, threads, out_dir):
    """Where a decoded token's time goes: llama_decode, llama-cpp-python's eval and sampling, our loop."""
    from local_rag.bench import lever_runs

    lever_runs.decode_profile(profile, tokens, repeats, threads, Path(out_dir))


@bench_levers.command("llm-speed")
@click.option("--gguf", "ggufs", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="A GGUF to time (repeatable).")
@click.option("--shape", "shapes", multiple=True, help="A model's shape with random weights (repeatable): "
              "qwen2.5-1.5b, qwen2.5-7b, qwen2.5-14b. Needs --vocab-from.")
@click.option("--vocab-from", type=click.Path(exists=True, dir_okay=False),
              help="A real GGUF (or a vocab-only one) whose tokenizer and chat template the --shape files take.")
@click.option("--work", default="/tmp/local-rag-shapes", show_default=True, help="Folder for the random-weight files.")
@click.option("--prompt-tokens", default="659,1343", show_default=True,
              help="Prompt sizes (the default profile's and cpu-qwen's new prompt tokens per turn).")
@click.option("--new-tokens", type=click.IntRange(1), default=128, show_default=True)
@click.option("--repeats", type=click.IntRange(1), default=2, show_default=True)
@click.option("--gpu-layers", type=int, default=-1, show_default=True, help="-1 = all that fit, 0 = CPU only.")
@THREADS
@click.option("--out", "out_file", default=lambda: str(default_reports_dir() / "levers" / "llm-speed.json"),
              show_default="docs/benchmarks/levers/llm-speed.json in a checkout, else under the user data directory")
@handle_errors
def llm_speed_cmd(ggufs, shapes, vocab_from, work, prompt_tokens, new_tokens, repeats, gpu_layers, threads, out_file):
    """Prefill and decode speed through local-rag's llama.cpp backend, of GGUF files or of model shapes with random
    weights (speed depends on shapes and types, not values: a GPU machine that cannot download can still time a 7B)."""
    from local_rag.bench import shape_gguf
    from local_rag.bench.levers import write_json
    from local_rag.bench.llm_speed import llm_speed
    from local_rag.errors import BadInputError

    unknown = [s for s in shapes if s not in shape_gguf.SHAPES]
    if unknown:
        raise BadInputError(f"unknown shape {unknown[0]!r}: one of {', '.join(shape_gguf.SHAPES)}")
    if shapes and not vocab_from:
        raise BadInputError("--shape needs --vocab-from (a real GGUF of the same tokenizer family)")
    if not ggufs and not shapes:
        raise BadInputError("nothing to time: give --gguf FILE or --shape NAME")
    sizes = positive_ints("--prompt-tokens", prompt_tokens)
    results = []
    out = Path(out_file)
    files = [Path(g) for g in ggufs]
    for name in shapes:
        target = Path(work) / f"{name}-random-q4_k_m.gguf"
        if not target.exists():
            click.echo(f"writing {target} (random weights, {name})", err=True)
            shape_gguf.write_shape_gguf(target, shape_gguf.SHAPES[name], vocab_from, progress=True)
        files.append(target)
    for f in files:
        results.append(llm_speed(f, sizes, new_tokens, repeats=repeats, n_gpu_layers=gpu_layers, n_threads=threads))
        click.echo(" ".join(f"{r['prompt_tokens']}: ttft {r['ttft_s']} s, prefill {r['prefill_tok_s']} tok/s, decode "
                            f"{r['decode_tok_s']} tok/s;" for r in results[-1]["rows"]) + f" ({results[-1]['name']}, "
                   f"{results[-1]['n_gpu_layers']} gpu layers)")
        write_json(out, {"runs": results})  # after each model: a stopped run keeps what it measured


@bench_levers.command()
@OUT
@handle_errors
def table(out_dir):
    """The ablation table (table.md, summary.json) from the runs already in --out."""
    from local_rag.bench import lever_runs

    lever_runs.table(Path(out_dir))

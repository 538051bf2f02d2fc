"""``local-rag plan``: what each profile needs in GPU memory and RAM, estimated before any model is loaded."""

from __future__ import annotations

import json

import click

from local_rag.cli.main import handle_errors, load
from local_rag.errors import BadInputError


@click.command()
@click.option("--vram", help="GPU memory to plan for, e.g. 8GB or 24GB, or none for CPU only (default: the free "
              "memory NVML reports). GB means GiB.")
@click.option("--ram", help="CPU memory to plan for, e.g. 16GB (default: this machine's total).")
@click.option("--profile", "profiles", multiple=True, help="Profile(s) to plan (repeatable; default: every profile).")
@click.option("--all-profiles", is_flag=True, help="Plan every bundled profile (the default without --profile).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Settings file applied to each profile.")
@click.option("--index", "index_name", help="Index whose FAISS/BM25 sizes to count (default: the profile's).")
@click.option("--passages", type=click.IntRange(min=1), help="Estimate the indexes for this many passages instead of reading one.")
@click.option("--n-ctx", type=int, help="Plan for this llm.n_ctx instead of the profile's.")
@click.option("--json", "as_json", is_flag=True, help="The plans as JSON.")
@handle_errors
def plan(vram, ram, profiles, all_profiles, config_file, index_name, passages, n_ctx, as_json):
    """Estimate each profile's memory (LLM weights and KV cache from GGUF metadata, embedder, reranker, FAISS) and
    say what fits, how many layers to offload, and the largest context that fits. Loads no model."""
    from local_rag.bench.plan import parse_size, plan_profile, plan_table
    from local_rag.device import nvml_gpus
    from local_rag.settings import list_profiles

    if vram is not None and vram.strip().lower() in ("none", "cpu"):
        vram_bytes, vram_from = 0, "none: CPU only"
    elif vram is not None:
        vram_bytes = parse_size(vram)
        vram_from = "given"
    else:
        gpus = nvml_gpus()
        vram_bytes = int(str(gpus[0]["free"])) if gpus else 0
        vram_from = f"free on {gpus[0]['name']}" if gpus else "no GPU seen"
    if ram is not None:
        ram_bytes = parse_size(ram)
        if ram_bytes <= 0:
            raise BadInputError(f"--ram {ram}: the plan needs some memory to place things in (e.g. 16GB)")
    else:
        import psutil

        ram_bytes = int(psutil.virtual_memory().total)
    names = list(profiles) if profiles and not all_profiles else list_profiles()
    plans = []
    for name in names:
        settings = load(name, config_file, index_name, **{"llm.n_ctx": n_ctx})
        if index_name and passages is None and not settings.index_dir.is_dir():
            raise BadInputError(f"no index {index_name!r} under {settings.indexes_dir} to count (see `local-rag index "
                                "list`), or give --passages N to estimate one")
        plans.append(plan_profile(settings, vram_bytes, ram_bytes, passages))
    if as_json:
        click.echo(json.dumps({"vram_bytes": vram_bytes, "vram_from": vram_from, "ram_bytes": ram_bytes,
                               "plans": [p.to_json() for p in plans]}, indent=2))
        return
    click.echo(f"VRAM {vram_bytes / 2**30:.1f} GiB ({vram_from}), RAM {ram_bytes / 2**30:.1f} GiB. "
               "Estimates from GGUF headers and model files; nothing is loaded.\n")
    for p in plans:
        click.echo(plan_table(p))

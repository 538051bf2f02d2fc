"""``local-rag index build|add|remove|info|verify``."""

from __future__ import annotations

import json
import sys
import time

import click

from local_rag.cli.main import handle_errors, load, settings_options


def _embedder_for(settings):
    if not settings.dense.enabled or "dense" not in settings.retrieval.retrievers:
        return None
    from local_rag.embed import load_embedder

    return load_embedder(settings.embedder, settings.models_dir)


def _dense_flag(settings, sparse_only: bool):
    if sparse_only:
        settings.dense.enabled = False
        settings.retrieval.retrievers = ["bm25"]
    return settings


@click.group()
def index() -> None:
    """Build and maintain index folders under indexes/."""


@index.command()
@click.argument("corpus", type=click.Path())
@settings_options
@click.option("--chunk-size", type=int, help="Tokens per chunk (settings: chunker.size).")
@click.option("--chunk-overlap", type=int, help="Tokens of overlap (settings: chunker.overlap).")
@click.option("--factory", help="FAISS index factory string, e.g. Flat, HNSW32, IVF1024,Flat.")
@click.option("--sparse-only", is_flag=True, help="Build only the BM25 index (no embedding model needed).")
@click.option("--skip-bad", is_flag=True, help="Skip malformed, empty or duplicate records instead of stopping.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
@handle_errors
def build(corpus, profile, config_file, index_name, chunk_size, chunk_overlap, factory, sparse_only, skip_bad, as_json):
    """Build an index from CORPUS (MTRAG/BEIR .jsonl[.zip|.gz], a BEIR folder, or a folder of .txt/.md/.html)."""
    from local_rag.index import build_index

    settings = load(profile, config_file, index_name, **{
        "chunker.size": chunk_size, "chunker.overlap": chunk_overlap, "dense.factory": factory,
    })
    settings = _dense_flag(settings, sparse_only)
    started = time.perf_counter()
    manifest = build_index(settings, corpus, embedder=_embedder_for(settings), skip_bad=skip_bad, progress=not as_json)
    elapsed = time.perf_counter() - started
    if as_json:
        click.echo(json.dumps(manifest.to_json(), indent=2))
        return
    click.echo(
        f"built {settings.index_dir}: {manifest.passages} passages, {manifest.chunks} chunks in {elapsed:.1f}s "
        f"({manifest.passages / elapsed:.1f} passages/s); skipped {manifest.skipped}"
    )


@index.command()
@click.argument("corpus", type=click.Path())
@settings_options
@click.option("--replace", is_flag=True, help="Replace passages whose ids are already indexed.")
@click.option("--skip-bad", is_flag=True, help="Skip malformed, empty or duplicate records.")
@handle_errors
def add(corpus, profile, config_file, index_name, replace, skip_bad):
    """Add the passages of CORPUS to an index, embedding only them."""
    from local_rag.index import add_documents

    settings = load(profile, config_file, index_name)
    manifest = add_documents(settings, corpus, embedder=_embedder_for(settings), skip_bad=skip_bad, replace=replace)
    click.echo(f"{settings.index_dir}: now {manifest.passages} passages, {manifest.chunks} chunks")


@index.command()
@click.argument("ids", nargs=-1)
@settings_options
@click.option("--by", type=click.Choice(["passage", "doc"]), default="passage", show_default=True)
@click.option("--from-file", type=click.File("r"), help="Read ids, one per line ('-' for stdin).")
@handle_errors
def remove(ids, profile, config_file, index_name, by, from_file):
    """Remove passages (or whole documents with --by doc) without re-embedding the rest."""
    from local_rag.errors import BadInputError
    from local_rag.index import remove_documents

    wanted = list(ids) + ([line.strip() for line in from_file if line.strip()] if from_file else [])
    if not wanted:
        raise BadInputError("give ids to remove (arguments or --from-file)")
    settings = load(profile, config_file, index_name)
    settings.retrieval.retrievers = []  # nothing to query: do not load or check the embedder
    manifest = remove_documents(settings, wanted, by=by)
    click.echo(f"{settings.index_dir}: now {manifest.passages} passages, {manifest.chunks} chunks")


@index.command()
@settings_options
@click.option("--factory", help="New FAISS index factory string.")
@handle_errors
def rebuild(profile, config_file, index_name, factory):
    """Rebuild BM25 and FAISS with the current settings from stored chunks and vectors (no re-embedding)."""
    from local_rag.index.folder import rebuild_index

    settings = load(profile, config_file, index_name, **{"dense.factory": factory})
    started = time.perf_counter()
    manifest = rebuild_index(settings)
    click.echo(f"rebuilt {settings.index_dir} in {time.perf_counter() - started:.1f}s: sparse {manifest.sparse}, FAISS {manifest.dense and manifest.dense['factory']}")


@index.command()
@settings_options
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def info(profile, config_file, index_name, as_json):
    """Show an index's manifest."""
    from local_rag.index.manifest import IndexManifest

    settings = load(profile, config_file, index_name)
    manifest = IndexManifest.load(settings.index_dir)
    if as_json:
        click.echo(json.dumps(manifest.to_json(), indent=2))
        return
    data = manifest.to_json()
    for key in ("name", "created", "package_version", "corpus_source", "corpus_hash", "passages", "chunks", "skipped"):
        click.echo(f"{key:16} {data[key]}")
    click.echo(f"{'chunker':16} {data['chunker']}")
    click.echo(f"{'sparse':16} {data['sparse']}")
    click.echo(f"{'dense':16} {data['dense']}")
    click.echo(f"{'build stats':16} {data['stats']}")


@index.command()
@settings_options
@click.option("--deep", is_flag=True, help="Also check contents: vector norms, NaN/inf, FAISS, BM25 structure, chunk texts.")
@handle_errors
def verify(profile, config_file, index_name, deep):
    """Check an index folder's files against the sha256 in its manifest (exit 3 on problems)."""
    from local_rag.errors import IndexError_
    from local_rag.index.verify import verify_index

    settings = load(profile, config_file, index_name)
    problems = verify_index(settings.index_dir, deep=deep)
    if problems:
        for problem in problems:
            click.echo(f"problem: {problem}", err=True)
        raise IndexError_(f"{settings.index_dir}: {len(problems)} problem(s)")
    click.echo(f"{settings.index_dir}: ok")
    sys.exit(0)

"""``local-rag index build|add|remove|sync|rebuild|list|documents|info|delete|verify``."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from local_rag.cli.main import (
    check_images,
    code_option,
    exclude_option,
    exclude_patterns,
    git_log_option,
    gitignore_option,
    handle_errors,
    images_option,
    load,
    settings_options,
    sparse_only_settings,
)
from local_rag.errors import LocalRagError
from local_rag.patterns import in_folder

if TYPE_CHECKING:
    from local_rag.index.manifest import IndexManifest


def _named(index_name: str | None, name: str | None) -> str | None:
    """The index a command acts on: NAME (as `index delete NAMES` takes it) or --index, not two different ones (NAME
    wins over $LOCAL_RAG_INDEX)."""
    from local_rag.errors import BadInputError

    if name and index_name and name != index_name and _given_on_command_line("index_name"):
        raise BadInputError(f"two indexes named: {name!r} and --index {index_name!r}; give one")
    return name or index_name


def _embedder_for(settings):
    if not settings.dense.enabled or "dense" not in settings.retrieval.retrievers:
        return None
    from local_rag.embed import load_embedder

    return load_embedder(settings.embedder, settings.models_dir)


@click.group()
def index() -> None:
    """Build and maintain index folders under indexes/."""


@index.command()
@click.argument("corpus", type=click.Path())
@settings_options
@click.option("--chunk-size", type=int, help="Tokens per chunk (settings: chunker.size).")
@click.option("--chunk-overlap", type=int, help="Tokens of overlap (settings: chunker.overlap).")
@click.option("--factory", help="FAISS index factory string, e.g. Flat, HNSW32, IVF1024,Flat.")
@click.option("--sparse-only", is_flag=True, help="Build only the BM25 index: no vectors (the chunks are still cut with "
              "the embedder's tokenizer, unless LOCAL_RAG_CHUNKER__TOKENIZER=whitespace).")
@click.option("--skip-bad", is_flag=True, help="Skip malformed, empty or duplicate records instead of stopping.")
@click.option("--backend", type=click.Choice(["local", "qdrant"]), help="Where vectors and BM25 terms live "
              "(settings: backend.name; qdrant needs the `qdrant` extra).")
@click.option("--backend-url", help="Qdrant server/cluster URL (settings: backend.url; default: embedded in the folder).")
@click.option("--replace", is_flag=True, help="Rebuild an index of this name that was built from another corpus.")
@exclude_option
@images_option
@code_option
@gitignore_option
@git_log_option
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
@handle_errors
def build(corpus, profile, config_file, index_name, chunk_size, chunk_overlap, factory, sparse_only, skip_bad, backend,
          backend_url, replace, exclude, exclude_from, images, code, gitignore, git_log, as_json):
    """Build an index from CORPUS (MTRAG/BEIR .jsonl[.zip|.gz], a .json array of passages, a BEIR folder, a folder of documents:
    .pdf/.docx/.doc/.rtf/.odt/.pptx/.ppt/.odp/.epub/.html/.md/.mdx/.qmd/.rst/.adoc/.org/.tex/.bib/.ipynb/.eml/.msg/.mbox/.pst/.ics/.vcf/.enex/.mht/.vtt/.srt/.csv/.tsv/.xlsx/.xls/.ods/.txt, or one such document, a Slack export's
    folder, a Discord or Telegram chat export; scanned PDFs, and with --images pictures, are read by OCR with the ocr extra; with --code, source code). Files that cannot be read are listed
    at the end; the build goes on. Building again from the same CORPUS rebuilds the index; from another, it needs --replace."""
    from local_rag.corpus.options import ReadOptions
    from local_rag.corpus.readers import check_corpus_path
    from local_rag.errors import BadInputError
    from local_rag.index import build_index
    from local_rag.index.folder import chunk_limit_note
    from local_rag.index.manifest import built_from_elsewhere

    check_corpus_path(corpus)  # a web address or a mistyped path before any model is looked for
    check_images(images)
    settings = load(profile, config_file, index_name, **{
        "chunker.size": chunk_size, "chunker.overlap": chunk_overlap, "dense.factory": factory,
        "backend.name": backend, "backend.url": backend_url,
    })
    other = built_from_elsewhere(settings.index_dir, corpus)
    if other is not None and not replace:
        raise BadInputError(f"index {settings.index} exists, built from {other}: building it from {corpus} would replace "
                            f"it; give another --index, or --replace")
    if other is None and (settings.index_dir / "files.json").is_file() and Path(corpus).is_dir():
        click.echo(f"note: index {settings.index} already holds {corpus}: `local-rag index sync {corpus} --index "
                   f"{settings.index}` reads and embeds only what changed; this build reads and embeds it all again",
                   err=True)
    settings = sparse_only_settings(settings) if sparse_only else settings
    exclude = exclude_patterns(exclude, exclude_from)
    _note_dropped_excludes(settings, [in_folder(p, str(corpus)) for p in exclude])  # as the manifest keeps them
    _note_gitignore(corpus, code, exclude_from, gitignore)
    embedder = _embedder_for(settings)
    note = chunk_limit_note(settings, embedder)
    if note:
        click.echo(f"note: {note}", err=True)
    started = time.perf_counter()
    read = ReadOptions(tuple(exclude), images, code, gitignore, git_log)
    manifest = build_index(settings, corpus, embedder=embedder, skip_bad=skip_bad, progress=not as_json, options=read)
    elapsed = time.perf_counter() - started
    if other is not None:
        _drop_adaptation(settings, other)
    if as_json:
        click.echo(json.dumps(manifest.to_json(), indent=2))
        return
    click.echo(
        f"built {settings.index_dir}: {manifest.passages} passages, {manifest.chunks} chunks in {elapsed:.1f}s "
        f"({manifest.passages / elapsed:.1f} passages/s); skipped {manifest.skipped}"
    )
    echo_report(manifest)


def _note_dropped_excludes(settings, exclude: list[str]) -> None:
    """A rebuild without the --exclude patterns the index kept reads what they left out: said, not done in silence."""
    from local_rag.index.manifest import MANIFEST_FILE, IndexManifest

    if not (settings.index_dir / MANIFEST_FILE).is_file():
        return
    try:
        kept = IndexManifest.load(settings.index_dir).exclude
    except LocalRagError:
        return
    if dropped := [p for p in kept if p not in exclude]:
        click.echo(f"note: index {settings.index} left out {' '.join(map(repr, dropped))} (--exclude); this build "
                   "reads them: give --exclude again to leave them out", err=True)


def _code_words_note(manifest: IndexManifest) -> str | None:
    """A note for an index that reads source code but whose BM25 does not split identifiers: one that `index sync
    --code` turned to code, or built with --code before BM25 split them (session 59). None otherwise."""
    if not manifest.code or manifest.sparse is None or manifest.sparse.get("identifiers"):
        return None
    return (f"note: BM25 of {manifest.name} does not index the words of identifiers (read_code: read, code), which "
            f"helps a question find the code it is about; `local-rag index rebuild --index {manifest.name}` does "
            "(it re-embeds nothing)")


def _note_gitignore(folder: str, code: bool, exclude_from: str | None, gitignore: bool) -> None:
    """``--code`` over a repository without ``--gitignore`` or ``--exclude-from``: its ``.gitignore`` names what git
    leaves out (build output, generated code, vendored packages), which the build would read; said with the option,
    not applied unasked (the index keeps what it is told, for every sync)."""
    ignore = Path(folder) / ".gitignore"
    if code and not gitignore and exclude_from is None and ignore.is_file():
        click.echo(f"note: {ignore} names the files git leaves out (build output, generated or vendored code); "
                   "`--gitignore` leaves them out of the index too (with what any .gitignore below it names)",
                   err=True)


def _drop_adaptation(settings, other: str) -> None:
    """An index rebuilt from another corpus loses the re-scorer `train adapt` kept for the old one's documents (the
    model stays in models/): its check measured those documents, not these."""
    from local_rag.adaptation import adaptation_file

    path = adaptation_file(settings.indexes_dir, settings.index)
    if path.is_file():
        path.unlink()
        click.echo(f"note: removed {path}: its re-scorer was adapted to the documents of {other}; run `local-rag train "
                   f"adapt --index {settings.index}` for these", err=True)


# what a format's "pages" are, where they are no pages (a mailbox's or a chat's messages, a calendar's events)
_UNITS = dict.fromkeys(("mbox", "pst", "ost", "slack", "discord", "telegram", "whatsapp"), "message") | {
    "kindle": "clipping", "bib": "entry", "gitlog": "commit",
    "ics": "event", "vcf": "contact", "keep": "note", "enex": "note", "chatgpt": "conversation", "claude": "conversation"
}


def echo_report(manifest, echo=click.echo) -> None:
    """The end-of-build report: pages a second per format and every file that could not be read, with its reason."""
    stats = manifest.stats
    formats = sorted(k.removeprefix("pages_per_s_") for k in stats if k.startswith("pages_per_s_"))
    if formats:
        from local_rag.corpus.code import CODE_KINDS

        units = _UNITS | {kind.lstrip("."): "file" for kind in CODE_KINDS}  # a source file has no pages (`--code`)
        ocr = f" ({stats['pages_ocr']:.0f} scanned, read by OCR)" if stats.get("pages_ocr") else ""
        echo("read: " + ", ".join(
            f"{fmt} {stats[f'pages_{fmt}']:.0f} {units.get(fmt, 'page')}(s) at {stats[f'pages_per_s_{fmt}']:.1f}/s"
            + (ocr if fmt == "pdf" else "") for fmt in formats
        ))
    unspaced = int(stats.get("unspaced_chunks", 0))
    if unspaced:
        english = manifest.dense is not None and manifest.dense.get("model") == "all-MiniLM-L6-v2"
        echo(f"note: {unspaced} of {manifest.chunks} chunks are mostly in a script written without spaces (Chinese, "
             "Japanese, Thai...): BM25 takes a whole phrase there for one word and finds little in them"
             + (", and all-MiniLM-L6-v2 reads English: a multilingual embedder (BGE-M3, the GPU profiles') serves "
                "them better" if english else "") + "; see docs/design.md, \"Languages\"")
    if manifest.unreadable:
        echo(f"could not read {len(manifest.unreadable)} file(s) (not indexed):")
        for name, reason in sorted(manifest.unreadable.items()):
            echo(f"  {name}: {reason}")


@index.command()
@click.argument("corpus", type=click.Path())
@settings_options
@click.option("--replace", is_flag=True, help="Replace passages whose ids are already indexed.")
@click.option("--skip-bad", is_flag=True, help="Skip malformed, empty or duplicate records.")
@exclude_option
@handle_errors
def add(corpus, profile, config_file, index_name, replace, skip_bad, exclude, exclude_from):
    """Add the passages of CORPUS to an index, embedding only them."""
    from local_rag.corpus.readers import check_corpus_path
    from local_rag.index import add_documents

    check_corpus_path(corpus)
    settings = load(profile, config_file, index_name, as_built=True)
    manifest = add_documents(settings, corpus, embedder=_embedder_for(settings), skip_bad=skip_bad, replace=replace,
                             exclude=exclude_patterns(exclude, exclude_from))
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
    from local_rag.index.manifest import IndexManifest

    wanted = list(ids) + ([line.strip() for line in from_file if line.strip()] if from_file else [])
    if not wanted:
        raise BadInputError("give ids to remove (arguments or --from-file)")
    settings = load(profile, config_file, index_name)
    settings.retrieval.retrievers = []  # nothing to query: do not load or check the embedder
    before = set(IndexManifest.load(settings.index_dir).left_out)
    manifest = remove_documents(settings, wanted, by=by)
    click.echo(f"{settings.index_dir}: now {manifest.passages} passages, {manifest.chunks} chunks")
    if gone := [d for d in manifest.left_out if d not in before]:
        click.echo(f"`index sync` of its folder leaves {', '.join(gone[:3])}{' ...' * (len(gone) > 3)} out "
                   "(`index sync FOLDER --restore` brings back what was removed)")


@index.command()
@click.argument("folder", type=click.Path(file_okay=False), required=False)
@settings_options
@click.option("--all", "every", is_flag=True, help="Sync every index that follows a folder, each with the options it "
              "keeps (with --watch: watch them all in one process).")
@click.option("--watch", is_flag=True, help="Keep syncing on every change of FOLDER until Ctrl-C (watchfiles).")
@click.option("--json", "as_json", is_flag=True, help="Print what the sync did as JSON (with --all: a line an index).")
@click.option("--restore", is_flag=True, help="Index again the files `index remove --by doc` took out and those the "
              "index's --exclude patterns left out, forgetting the patterns (without it, sync leaves them out).")
@click.option("--replace", is_flag=True, help="Make the index follow FOLDER even though it holds none of the index's "
              "files (without it, syncing another folder that would remove them all is refused).")
@click.option("--sparse-only", is_flag=True, help="A new index: BM25 only, as `index build --sparse-only` (an index "
              "that exists keeps what it has).")
@exclude_option
@images_option
@code_option
@gitignore_option
@git_log_option
@handle_errors
def sync(folder, profile, config_file, index_name, every, watch, as_json, restore, replace, sparse_only, exclude,
         exclude_from, images, code, gitignore, git_log):
    """Bring an index in step with FOLDER: add new files, re-embed changed ones, remove deleted ones (by content
    digest; unchanged files are not read). A second run with nothing changed does nothing and says so. Files taken
    out with `index remove --by doc` stay out (--restore brings them back). --all: every index that follows a folder."""
    from local_rag.corpus.options import ReadOptions
    from local_rag.corpus.readers import check_corpus_path
    from local_rag.errors import BadInputError
    from local_rag.index import sync as sync_mod
    from local_rag.index.manifest import MANIFEST_FILE, IndexManifest

    if every:
        given = [name for name, on in (("FOLDER", folder), ("--restore", restore), ("--replace", replace),
                                       ("--sparse-only", sparse_only), ("--exclude", exclude),
                                       ("--exclude-from", exclude_from), ("--images", images), ("--code", code),
                                       ("--gitignore", gitignore), ("--git-log", git_log)) if on]
        if given or _given_on_command_line("index_name"):
            raise BadInputError(f"--all syncs every index with the options it keeps; {', '.join(given or ['--index'])} "
                                "belongs to one index's sync: `local-rag index sync FOLDER --index NAME ...`")
        return _sync_all(profile, config_file, watch, as_json)
    if folder is None:
        raise BadInputError("give the FOLDER to sync (`local-rag index sync ~/notes --index notes`), or --all to sync "
                            "every index that follows a folder")
    check_corpus_path(folder)
    check_images(images)
    settings = load(profile, config_file, index_name, as_built=True)
    if sparse_only:
        exists = (settings.index_dir / MANIFEST_FILE).exists()
        if exists and IndexManifest.load(settings.index_dir).dense is not None:
            raise BadInputError(f"--sparse-only is for a new index; {settings.index} has vectors, which a sync keeps "
                                f"(`local-rag index build {folder} --index {settings.index} --sparse-only` "
                                "rebuilds it without them)")
        settings = sparse_only_settings(settings)
    embedder = _embedder_for(settings)
    read = ReadOptions(tuple(exclude_patterns(exclude, exclude_from)), images, code, gitignore, git_log)
    if not (settings.index_dir / MANIFEST_FILE).exists():  # a sync that builds: as `index build` says it
        _note_gitignore(folder, code, exclude_from, gitignore)
    once = _syncer(settings, folder, embedder, read, restore, replace, as_json)
    once()
    if watch:
        click.echo(f"watching {folder} (Ctrl-C to stop)")
        kept = IndexManifest.load(settings.index_dir)  # as the first sync kept them
        sync_mod.watch(folder, once, options=kept.read_options())
        click.echo("stopped watching")


def _given_on_command_line(name: str) -> bool:
    """Whether the option ``name`` was typed (not taken from its variable, e.g. $LOCAL_RAG_INDEX, or its default)."""
    from click.core import ParameterSource

    return click.get_current_context().get_parameter_source(name) == ParameterSource.COMMANDLINE


def _syncer(settings, folder, embedder, read, restore: bool, replace: bool, as_json: bool):
    """One sync of ``folder`` into ``settings.index``, reported as `index sync` reports it (``restore`` at the first
    call only: a watch's later syncs leave out what it brought back then)."""
    from local_rag.index import sync as sync_mod

    first = [restore]
    said: list[str] = []

    def once() -> None:
        result = sync_mod.sync_index(settings, folder, embedder=embedder, progress=not as_json, restore=first.pop()
                                     if first else False, replace=replace, options=read)
        if as_json:
            click.echo(json.dumps({
                "index": settings.index, "folder": str(folder), "built": result.built, "added": result.plan.added,
                "changed": result.plan.changed, "removed": result.plan.removed, "unchanged": result.plan.unchanged,
                "left_out": result.plan.left_out, "excluded": result.plan.excluded, "ignored": result.plan.ignored,
                "copies": result.plan.copies,
                "embedded_chunks": result.embedded_chunks, "reused_chunks": result.reused_chunks,
                "seconds": round(result.seconds, 3),
                "unreadable": result.unreadable, "passages": result.manifest.passages, "chunks": result.manifest.chunks,
            }))
        elif result.built:
            click.echo(f"no index {settings.index} yet: built it from {folder} in {result.seconds:.1f}s "
                       f"({result.manifest.passages} passages, {result.manifest.chunks} chunks)")
        elif result.plan.empty:
            left = (f", {len(result.plan.left_out)} left out (removed with `index remove`; --restore brings them "
                    "back)") if result.plan.left_out else ""
            left += f", {len(result.plan.excluded)} left out by --exclude" if result.plan.excluded else ""
            left += f", {len(result.plan.ignored)} left out by .gitignore" if result.plan.ignored else ""
            click.echo(f"{settings.index} is up to date with {folder}: {result.plan.unchanged} file(s) unchanged{left}, "
                       "nothing to do")
        else:
            click.echo(f"synced {settings.index} with {folder} in {result.seconds:.1f}s: {result.plan.summary()}; "
                       f"embedded {result.embedded_chunks} chunk(s)"
                       f"{f', {result.reused_chunks} kept their vectors (the same text, moved or renamed)' if result.reused_chunks else ''}"
                       f"; now {result.manifest.passages} passages, "
                       f"{result.manifest.chunks} chunks")
        if not as_json and result.unreadable:
            click.echo(f"could not read {len(result.unreadable)} file(s) (not indexed):")
            for name, reason in sorted(result.unreadable.items()):
                click.echo(f"  {name}: {reason}")
        if not as_json and not said and (words := _code_words_note(result.manifest)):
            said.append(words)
            click.echo(words, err=True)

    return once


def _sync_all(profile, config_file, watch: bool, as_json: bool) -> None:
    """`index sync --all`: each index under the indexes folder that follows a folder of documents, synced with the
    options it keeps (one embedder loaded per model); an index that follows none, or whose folder is gone, is named
    and passed over. A failed sync is said on one line and the others go on; the exit code is 2 when one failed.
    With ``watch``, every folder is watched in one process, and a change syncs the indexes that follow it."""
    from local_rag.corpus.options import ReadOptions
    from local_rag.errors import BadInputError, LocalRagError
    from local_rag.index import sync as sync_mod
    from local_rag.index.catalog import list_indexes
    from local_rag.index.manifest import IndexManifest

    base = load(profile, config_file)
    syncs: list[tuple[Path, Callable[[], None], ReadOptions, str]] = []
    embedders: dict[tuple[str, str], object] = {}
    failed: list[str] = []
    for summary in list_indexes(base.indexes_dir):
        if summary.problem:
            continue
        manifest = IndexManifest.load(base.indexes_dir / summary.name)
        followed = manifest.followed_folder()
        if followed is None:
            why = ("a corpus of records, not a folder" if manifest.of_records() else f"{manifest.followed_source()!r}, a "
                   "path relative to where it was built: sync it once with the folder's full path")
            click.echo(f"note: {summary.name} passed over: it follows {why}", err=True)
            continue
        if not followed.is_dir():
            click.echo(f"note: {summary.name} passed over: its folder {followed} is gone", err=True)
            continue
        settings = load(profile, config_file, summary.name, as_built=True)
        key = (settings.embedder.backend, settings.embedder.model) if manifest.dense is not None else ("", "")
        if key not in embedders:
            try:
                embedders[key] = _embedder_for(settings)
            except LocalRagError as exc:  # a missing model: this index is not synced, the others are
                click.echo(f"error: {summary.name}: {exc}", err=True)
                failed.append(summary.name)
                continue
        once = _syncer(settings, followed, embedders[key], ReadOptions(), False, False, as_json)
        syncs.append((followed, once, manifest.read_options(), summary.name))
    unready = len(failed)  # indexes passed over for want of their model
    if not syncs and not failed:
        raise BadInputError(f"no index in {base.indexes_dir} follows a folder of documents: `local-rag index sync "
                            "FOLDER --index NAME` makes one")

    def safely(name: str, once: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                once()
            except LocalRagError as exc:  # one index's trouble is said, the others are synced
                click.echo(f"error: {name}: {exc}", err=True)
                failed.append(name)
        return run

    runs = [(folder, safely(name, once), read, name) for folder, once, read, name in syncs]
    for _, run, _, _ in runs:
        run()
    if watch and runs:
        click.echo(f"watching {len(runs)} folder(s) for {', '.join(name for *_, name in runs)} (Ctrl-C to stop)")
        sync_mod.watch_many([(folder, run, read) for folder, run, read, _ in runs])
        click.echo("stopped watching")
    if failed:
        names = list(dict.fromkeys(failed))  # a watched index may fail more than once
        raise BadInputError(f"{len(names)} of {len(runs) + unready} index(es) could not be synced: {', '.join(names)}")


@index.command()
@settings_options
@click.option("--factory", help="New FAISS index factory string.")
@click.option("--backend", type=click.Choice(["local", "qdrant"]), help="Move the index to this backend (default: it "
              "stays where it is).")
@click.option("--backend-url", help="Move the index to this Qdrant server/cluster (--backend qdrant without it: embedded "
              "in the folder).")
@click.argument("name", required=False)
@handle_errors
def rebuild(profile, config_file, index_name, factory, backend, backend_url, name):
    """Rebuild BM25 and FAISS (or the Qdrant collection) of index NAME (or --index) with the current settings from
    stored chunks and vectors (no re-embedding)."""
    from local_rag.errors import BadInputError
    from local_rag.index.folder import rebuild_index
    from local_rag.index.manifest import IndexManifest
    from local_rag.settings import BackendConfig

    settings = load(profile, config_file, _named(index_name, name), as_built=True, bm25=False, **{"dense.factory": factory})
    if backend == "local" and backend_url:
        raise BadInputError("--backend-url is a Qdrant server's address: give it with --backend qdrant, not local")
    move = BackendConfig(name=backend or "qdrant", url=backend_url or "") if backend or backend_url else None
    before = IndexManifest.load(settings.index_dir).sparse or {}
    started = time.perf_counter()
    manifest = rebuild_index(settings, backend=move)
    split = (manifest.sparse or {}).get("identifiers") and not before.get("identifiers")
    changed = [f"{k} {before[k]!r} -> {v!r}" for k, v in (manifest.sparse or {}).items()
               if k in before and k != "bm25s_version" and before[k] != v and not (k == "identifiers" and split)]
    if split:
        click.echo("note: BM25 now indexes the words of identifiers too (read_code: read, code), as for every index "
                   "that reads source code (--code)", err=True)
    if changed:  # the settings are the new parameters; a rebuild for another reason should not change them unseen
        click.echo(f"note: BM25 {', '.join(changed)} (the settings'; the index had the others)", err=True)
    dense = ("no vectors (sparse only)" if manifest.dense is None else "Qdrant collection" if manifest.backend == "qdrant"
             else f"FAISS {manifest.dense['factory']}")
    click.echo(f"rebuilt {settings.index_dir} in {time.perf_counter() - started:.1f}s: sparse {manifest.sparse}, {dense}")


@index.command("list")
@settings_options
@click.option("--json", "as_json", is_flag=True)
@handle_errors
def list_(profile, config_file, index_name, as_json):
    """The indexes under the indexes folder: size, what they were built from, when last changed."""
    from local_rag.cli.models import human_size
    from local_rag.index.catalog import list_indexes

    settings = load(profile, config_file, index_name)
    found = list_indexes(settings.indexes_dir)
    if as_json:
        click.echo(json.dumps([s.to_json() for s in found], indent=2))
        return
    if not found:
        click.echo(f"no index in {settings.indexes_dir}; build one with `local-rag index build CORPUS --index NAME`")
        return
    width = max(len(s.name) for s in found)
    for s in found:
        if s.problem:
            click.echo(f"{s.name:{width}}  {human_size(s.size):>9}  {s.problem}")
            continue
        kind = s.dense or "sparse only"
        notes = "".join((", adapted (train adapt)" if s.adapted else "",
                         ", vectors kept by an interrupted build" if s.kept_vectors else ""))
        click.echo(f"{s.name:{width}}  {human_size(s.size):>9}  {s.passages} passages, {s.chunks} chunks, {kind}"
                   f"{'' if s.backend == 'local' else ', ' + s.backend}{notes}; from {s.source}, changed {s.changed}")
    click.echo(f"({len(found)} in {settings.indexes_dir})")


@index.command()
@click.argument("names", nargs=-1, required=True)
@settings_options
@click.option("--yes", "-y", is_flag=True, help="Do not ask before deleting.")
@handle_errors
def delete(names, profile, config_file, index_name, yes):
    """Delete indexes NAMES with their lock files, the adaptation `train adapt` kept for them and the vectors an
    interrupted build kept (a trained re-scorer stays in models/: `local-rag models remove`)."""
    from local_rag.cli.models import human_size
    from local_rag.index.catalog import delete_index, index_folder
    from local_rag.modelstore.manifest import folder_bytes

    settings = load(profile, config_file, index_name)
    names = tuple(dict.fromkeys(names))
    folders = [index_folder(settings.indexes_dir, name) for name in names]  # every name checked before any deletion
    if not yes:
        size = sum(folder_bytes(f) for f in folders)
        click.confirm(f"delete {', '.join(names)} ({human_size(size)}) from {settings.indexes_dir}?", abort=True)
    for name in names:
        freed = delete_index(settings.indexes_dir, name, settings.index_lock_timeout_s)
        click.echo(f"deleted index {name}: {human_size(freed)} freed")


@index.command()
@settings_options
@click.option("--only", "only", multiple=True, metavar="PATTERN",
              help="The documents these patterns name, as `--only` of search/ask/chat/serve would search them.")
@click.option("--json", "as_json", is_flag=True, help="A JSON list of {document, chunks, title}.")
@click.argument("name", required=False)
@handle_errors
def documents(profile, config_file, index_name, only, as_json, name):
    """The documents of index NAME (or --index), each with its chunk count and title: the names `--only` takes."""
    from local_rag.retrieve.scope import index_documents

    settings = load(profile, config_file, _named(index_name, name))
    found = index_documents(settings.index_dir, only)
    if as_json:
        click.echo(json.dumps([d._asdict() for d in found], indent=2, ensure_ascii=False))
        return
    for doc in found:
        named = doc.title and doc.title.casefold() != Path(doc.document).stem.casefold()  # a title the name does not say
        click.echo(f"{doc.chunks:8d}  {doc.document}" + (f"  ({doc.title})" if named else ""))
    click.echo(f"{len(found)} document(s), {sum(d.chunks for d in found)} chunk(s)", err=True)


@index.command()
@settings_options
@click.option("--json", "as_json", is_flag=True)
@click.argument("name", required=False)
@handle_errors
def info(profile, config_file, index_name, as_json, name):
    """Show the manifest of index NAME (or --index)."""
    from local_rag.adaptation import adaptation_file, adaptations
    from local_rag.index.manifest import IndexManifest

    settings = load(profile, config_file, _named(index_name, name))
    manifest = IndexManifest.load(settings.index_dir)
    path = adaptation_file(settings.indexes_dir, settings.index)
    adapted = adaptations(settings.indexes_dir, settings.models_dir, settings.index).get(settings.index)
    if as_json:
        extra = {"adaptation": {"file": str(path), "state": adapted}} if adapted else {}
        click.echo(json.dumps({**manifest.to_json(), **extra}, indent=2))
        return
    data = manifest.to_json()
    for key in ("name", "created", "package_version", "corpus_source", "corpus_hash", "passages", "chunks", "skipped", "backend"):
        click.echo(f"{key:16} {data[key]}")
    followed = manifest.followed_folder()
    click.echo(f"{'folder':16} " + (f"{followed} (`index sync --all` syncs it)" if followed is not None else
                                    "none known: `index sync --all` passes it over (a corpus of records, or a folder "
                                    "given as a relative path: one sync with its full path records it)"))
    for name, reason in sorted(manifest.unreadable.items()):
        click.echo(f"{'unreadable':16} {name}: {reason}")
    for name in manifest.left_out:
        click.echo(f"{'left out':16} {name}: removed with `index remove`; `index sync` leaves it out until --restore")
    if manifest.exclude:
        click.echo(f"{'exclude':16} {' '.join(manifest.exclude)} (adds and syncs leave these out; `index sync "
                   "--restore` forgets them)")
    if manifest.images:
        click.echo(f"{'images':16} pictures are read by OCR (--images: at every add and sync)")
    if manifest.gitignore:
        click.echo(f"{'gitignore':16} what the folder's .gitignore files name is left out (--gitignore: at every add "
                   "and sync)")
    if manifest.code:
        click.echo(f"{'code':16} source and configuration files are read (--code: at every add and sync)")
        if words := _code_words_note(manifest):
            click.echo(words, err=True)
    if manifest.git_log:
        click.echo(f"{'git log':16} the repository's commit messages are read (--git-log: at every add and sync)")
    for name, pages in sorted(manifest.unread_scans.items()):
        click.echo(f"{'scans unread':16} {name}: page(s) {', '.join(map(str, pages))} have no text layer; with the ocr "
                   "extra, `index sync` reads them")
    click.echo(f"{'chunker':16} {data['chunker']}")
    click.echo(f"{'sparse':16} {data['sparse']}")
    click.echo(f"{'dense':16} {data['dense']}")
    click.echo(f"{'build stats':16} {data['stats']}")
    if adapted:
        click.echo(f"{'adaptation':16} {adapted}: {path}")


@index.command()
@settings_options
@click.option("--deep", is_flag=True, help="Also check contents: vector norms, NaN/inf, FAISS, BM25 structure, chunk texts.")
@click.option("--json", "as_json", is_flag=True, help="Print {index, ok, problems} as JSON (for a scheduled check; exit 3 "
              "on problems as without it).")
@click.argument("name", required=False)
@handle_errors
def verify(profile, config_file, index_name, deep, as_json, name):
    """Check the files of index NAME (or --index) against the sha256 in its manifest (exit 3 on problems)."""
    from local_rag.errors import IndexError_
    from local_rag.index.verify import verify_index

    settings = load(profile, config_file, _named(index_name, name))
    problems = verify_index(settings.index_dir, deep=deep)
    if as_json:
        click.echo(json.dumps({"index": settings.index, "path": str(settings.index_dir), "deep": deep,
                               "ok": not problems, "problems": problems}, indent=2))
        sys.exit(IndexError_.exit_code if problems else 0)
    if problems:
        for problem in problems:
            click.echo(f"problem: {problem}", err=True)
        raise IndexError_(f"{settings.index_dir}: {len(problems)} problem(s)")
    from local_rag.index.manifest import IndexManifest

    if not IndexManifest.load(settings.index_dir).integrity:
        click.echo("note: no file checksums recorded (written by an older local-rag); `local-rag index rebuild` "
                   "records them", err=True)
    click.echo(f"{settings.index_dir}: ok")
    sys.exit(0)

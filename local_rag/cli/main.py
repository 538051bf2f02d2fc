"""``local-rag``: the root command group, shared options and error handling.

Exit codes: 0 success; 1 a user-fixable error; 2 bad input; 3 index problem; 4 model problem; 5 missing optional
dependency; 6 invalid settings; 130 interrupted. Errors print one line on stderr, never a traceback
(``LOCAL_RAG_DEBUG=1`` shows it, and the INFO notes of the stages: what a token budget cut, what was skipped).
"""

from __future__ import annotations

import errno
import functools
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import click

from local_rag import __version__
from local_rag.errors import LocalRagError

# subcommand name -> "module:attribute"; modules are imported only when the subcommand runs
SUBCOMMANDS: dict[str, str] = {
    "doctor": "local_rag.cli.doctor:doctor",
    "index": "local_rag.cli.index:index",
    "search": "local_rag.cli.search:search",
    "eval": "local_rag.cli.evaluate:evaluate",
    "models": "local_rag.cli.models:models",
    "demo": "local_rag.cli.demo:demo",
    "ask": "local_rag.cli.ask:ask",
    "chat": "local_rag.cli.ask:chat",
    "serve": "local_rag.cli.serve:serve",
    "mcp": "local_rag.cli.mcp:mcp",
    "bench": "local_rag.cli.bench:bench",
    "bench-scale": "local_rag.cli.bench_scale:bench_scale",
    "bench-levers": "local_rag.cli.bench_levers:bench_levers",
    "plan": "local_rag.cli.plan:plan",
    "train": "local_rag.cli.train:train",
    "synth": "local_rag.cli.synth:synth",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(SUBCOMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        if name not in SUBCOMMANDS:
            return None
        module, attr = SUBCOMMANDS[name].split(":")
        try:
            return cast(click.Command, getattr(importlib.import_module(module), attr))
        except ModuleNotFoundError as exc:
            if exc.name == module:
                return None
            raise


def settings_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--profile``, ``--config`` and ``--index``, shared by every command that loads settings."""
    func = click.option("--index", "index_name", envvar="LOCAL_RAG_INDEX", help="Index name under indexes/.")(func)
    func = click.option(
        "--config", "config_file", type=click.Path(dir_okay=False), envvar="LOCAL_RAG_CONFIG",
        help="Settings file (YAML or JSON).",
    )(func)
    func = click.option("--profile", envvar="LOCAL_RAG_PROFILE", help="Named settings profile (see `doctor`).")(func)
    return func


def load(profile: str | None, config_file: str | None, index_name: str | None = None, *, adapted: bool = False,
         as_built: bool = False, shaped: bool = False, bm25: bool = True, **overrides: Any):
    """Load settings from the shared options plus command-specific overrides (None values ignored); ``adapted``: with
    the index's adaptation from `train adapt` (the commands that answer: ask, chat, search, serve); ``as_built`` (and
    ``adapted``): BM25 alone on an index built with ``--sparse-only`` (`sparse_only_settings`), and the index's own
    shape; ``shaped``: the index's own shape only (`train adapt`, `synth` on one's own index). The shape: its
    chunking and (unless ``bm25`` is false: `index rebuild`, whose settings are the new ones) its BM25 parameters."""
    from local_rag.settings import deep_merge, dotted, load_settings

    data = deep_merge({"index": index_name} if index_name else {}, dotted({k: v for k, v in overrides.items() if v is not None}))
    settings = load_settings(profile, config_file, data, adapted=adapted)
    if as_built or adapted:
        return as_built_settings(settings, note=adapted, bm25=bm25)
    return index_shape(settings) if shaped else settings


def index_shape(settings: Any, bm25: bool = True, manifest: Any = None) -> Any:
    """``settings`` with the chunking and (``bm25``) the BM25 parameters of the index they name, from its manifest
    (`local_rag.index.folder.with_index_chunking`, `with_index_bm25`): nothing re-chunks the chunks an index has, and
    a query is tokenized as its passages were. Without a readable manifest, the settings as they are (the
    command's own check speaks)."""
    from local_rag.errors import IndexError_
    from local_rag.index.folder import with_index_bm25, with_index_chunking
    from local_rag.index.manifest import MANIFEST_FILE, IndexManifest

    if manifest is None:
        if not (settings.index_dir / MANIFEST_FILE).exists():
            return settings
        try:
            manifest = IndexManifest.load(settings.index_dir)
        except IndexError_:
            return settings
    settings = with_index_chunking(settings, manifest)
    return with_index_bm25(settings, manifest) if bm25 else settings


def sparse_only_settings(settings: Any) -> Any:
    """``settings`` with the dense retrievers off: what ``--sparse-only`` builds and what queries such an index."""
    settings.dense.enabled = False
    settings.retrieval.retrievers = [r for r in settings.retrieval.retrievers if r == "bm25"] or ["bm25"]
    return settings


def as_built_settings(settings: Any, note: bool, bm25: bool = True) -> Any:
    """An index built with ``--sparse-only`` has no vectors, so every command on it runs BM25 alone: `index add` and
    `sync` add to it without embedding, and `ask`, `chat`, `search` and `serve` search it (``note``: saying so once on
    stderr) instead of failing "has no dense index: rebuild it". Its shape is in its manifest, which the commands
    that answer (``note``) read before anything else. Every index is also read and added to with the chunking and
    (``bm25``) the BM25 parameters it was built with (`index_shape`).

    Raises:
        IndexError_: (``note``) no index, or a manifest that cannot be read.
    """
    from local_rag.index.folder import wants_dense
    from local_rag.index.manifest import MANIFEST_FILE, IndexManifest

    if not note and not (settings.index_dir / MANIFEST_FILE).exists():
        return settings  # `index add` and `sync` build one
    # a command that answers: a missing or broken index is one line now (before, `chat` greeted, answered "hello"
    # and stopped at the first question, the conversation lost; `serve` loaded the LLM first)
    manifest = IndexManifest.load(settings.index_dir)
    settings = index_shape(settings, bm25, manifest)  # its chunks are made and its BM25 scores stored
    if manifest.dense is not None:
        return settings
    if note and wants_dense(settings):
        click.echo(f"note: index {settings.index} has no vectors (built with --sparse-only): searching with BM25 alone",
                   err=True)
    return sparse_only_settings(settings)


def adaptation_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--adaptation/--no-adaptation`` (settings: index_adaptation), for the commands that answer from an index."""
    return click.option("--adaptation/--no-adaptation", "adaptation", default=None,
                        help="Use the re-scorer `train adapt` kept for this index (default: index_adaptation, on).")(func)


def only_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--only PATTERN`` (settings: retrieval.only), for the commands that search an index."""
    return click.option("--only", "only", multiple=True, metavar="PATTERN",
                        help="Search only these documents: a file's path in the indexed folder, a folder of them, or a "
                             "pattern ('reports/2024', '*.pdf'); repeat or comma-separate.")(func)


def also_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--also NAME`` (settings: retrieval.also), for the commands that search an index: other indexes searched
    with it, as one (`local_rag.retrieve.joint`)."""
    return click.option("--also", "also", multiple=True, metavar="INDEX",
                        help="Search this index too, as one with --index (notes and mail together): its passages are "
                             "named INDEX:document; repeat or comma-separate.")(func)


def also_list(also: tuple[str, ...]) -> list[str] | None:
    """``--also`` values as the ``retrieval.also`` setting (None: not given, the settings' own stay)."""
    return [n.strip() for value in also for n in value.split(",") if n.strip()] or None


def exclude_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--exclude PATTERN`` and ``--exclude-from FILE`` of `index build`, `add` and `sync`: files the index leaves
    out, kept in its manifest (`exclude_patterns` joins them)."""
    func = click.option("--exclude-from", "exclude_from", type=click.Path(dir_okay=False), metavar="FILE",
                        help="Leave out what a .gitignore-style FILE names (comments and blank lines skipped; a name "
                             "without a slash at any depth; negations '!x' cannot be said and are named).")(func)
    return click.option("--exclude", "exclude", multiple=True, metavar="PATTERN",
                        help="Leave out these files: a path in the folder, a folder, or a pattern ('drafts', '*.log'; "
                             "repeat or comma-separate). The index keeps them: later adds and syncs leave them out "
                             "too (`index sync --restore` forgets them).")(func)


def images_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--images`` of `index build` and `sync`: pictures are read too, by OCR (`check_images` first)."""
    return click.option("--images", is_flag=True,
                        help="Also read the text in pictures (.png .jpg .tif .webp .bmp: a scanned page, a fax, a "
                             "screenshot) by OCR (the ocr extra). The index keeps it: later adds and syncs read them "
                             "too.")(func)


def code_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--code`` of `index build` and `sync`: source and configuration files are read too (`local_rag.corpus.code`)."""
    return click.option("--code", is_flag=True,
                        help="Also read source code and configuration files (.py .js .ts .go .rs .java .c .sh .sql "
                             ".yaml .toml, Makefile, Dockerfile ...), a definition a heading: a repository, a project "
                             "folder. The index keeps it: later adds and syncs read them too.")(func)


def gitignore_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--gitignore`` of `index build` and `sync`: what the folder's ``.gitignore`` files name is left out
    (`local_rag.corpus.gitignore`)."""
    return click.option("--gitignore", is_flag=True,
                        help="Leave out what the folder's .gitignore files name (each one, at any depth, with git's "
                             "rules: build output, generated or vendored code). The index keeps it: later adds and "
                             "syncs read the .gitignore files again.")(func)


def git_log_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--git-log`` of `index build` and `sync`: the repository's commit messages are read too
    (`local_rag.corpus.git_log`)."""
    return click.option("--git-log", "git_log", is_flag=True,
                        help="Also read the repository's history (git log: a commit a section, its message and the "
                             "files it changed), where a team says why the code is as it is. Needs git. The index "
                             "keeps it: later syncs read the new commits.")(func)


def check_images(images: bool) -> None:
    """``--images`` without the ``ocr`` extra: one line before any model loads (each picture would be unreadable)."""
    from local_rag.corpus.ocr import INSTALL, ocr_missing
    from local_rag.errors import BadInputError

    if images and ocr_missing():
        raise BadInputError(f"--images reads the text in pictures by OCR, which needs the ocr extra: {INSTALL}")


def exclude_patterns(exclude: tuple[str, ...], exclude_from: str | None) -> list[str]:
    """``--exclude`` values and the patterns of ``--exclude-from`` (`local_rag.patterns.ignore_file_patterns`); the
    lines those cannot say are named on stderr.

    Raises:
        BadInputError: the file cannot be read.
    """
    from local_rag.errors import BadInputError
    from local_rag.patterns import ignore_file_patterns, patterns_of

    patterns = list(patterns_of(exclude))
    if exclude_from:
        try:
            text = Path(exclude_from).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise BadInputError(f"--exclude-from {exclude_from}: cannot read it ({why})") from exc
        found, unsaid = ignore_file_patterns(text)
        patterns += [p for p in found if p not in patterns]
        if unsaid:
            click.echo(f"note: --exclude-from {exclude_from}: {len(unsaid)} line(s) it cannot say, not applied: "
                       f"{', '.join(unsaid[:5])} (local-rag leaves files out and never takes them back in)", err=True)
    return patterns


def only_list(only: tuple[str, ...]) -> list[str] | None:
    """``--only`` values as the ``retrieval.only`` setting (None: not given, the settings' own stay)."""
    from local_rag.patterns import patterns_of

    return list(patterns_of(only)) or None


_MACHINE_ERRNOS = {  # -> what the user can do
    errno.ENOSPC: "free space there and run the command again",
    errno.EDQUOT: "free space there and run the command again",
    errno.EFBIG: "the file system there holds no file this large (FAT32: 4 GiB); choose another place",
    errno.EROFS: "choose a writable place",
    errno.EACCES: "check its permissions",
    errno.EPERM: "check its permissions",
}


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn `LocalRagError`, and an `OSError` of the machine (a full disk, a read-only or forbidden path), into one
    line on stderr and an exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except LocalRagError as exc:
            if os.environ.get("LOCAL_RAG_DEBUG", "") not in ("", "0", "false"):
                raise
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except OSError as exc:  # the machine's, not a bug: a full disk, a quota, a read-only or forbidden path
            if exc.errno not in _MACHINE_ERRNOS or os.environ.get("LOCAL_RAG_DEBUG", "") not in ("", "0", "false"):
                raise
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"error: {exc.strerror}{where} ({_MACHINE_ERRNOS[exc.errno]})", err=True)
            sys.exit(1)

    return wrapper


@click.group(cls=LazyGroup)
@click.version_option(__version__, prog_name="local-rag")
def cli() -> None:
    """local-rag: offline multi-turn RAG with hybrid retrieval on one machine."""


def main() -> None:
    import faulthandler

    # a crash inside native code (llama.cpp, FAISS, torch) prints the Python stack that led to it, not only
    # "Segmentation fault": the stage and the call are in the report (the CUDA load crash of sessions 25-37)
    if not faulthandler.is_enabled():
        faulthandler.enable()
    if os.environ.get("LOCAL_RAG_DEBUG", "") not in ("", "0", "false"):
        import logging

        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    cli.main(prog_name="local-rag")

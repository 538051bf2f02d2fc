"""``local-rag serve``: the OpenAI-compatible HTTP server (docs/server.md).

The server flags (``--host``, ``--port``, ``--api-key``, ``--queue``...) are made from the fields of
`ServerConfig`, as llama-cpp-python's server makes its flags from its settings model: the settings stay the one
source of defaults and help texts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from local_rag.cli.ask import pipeline_settings, stage_options
from local_rag.cli.main import (
    adaptation_option,
    also_list,
    also_option,
    handle_errors,
    only_list,
    only_option,
    settings_options,
)
from local_rag.settings import ServerConfig

ENVVARS = {"api_key": "LOCAL_RAG_API_KEY"}  # besides LOCAL_RAG_SERVER__API_KEY (the settings' own variable)


def parse_collections(values: tuple[str, ...]) -> dict[str, list[str]]:
    """``("reports=reports/2024,*.pdf", "hr=handbook")`` -> ``{"reports": ["reports/2024", "*.pdf"], "hr": ["handbook"]}``.

    Raises:
        BadInputError: a value without ``NAME=``, or a name given twice.
    """
    from local_rag.errors import BadInputError
    from local_rag.patterns import patterns_of

    out: dict[str, list[str]] = {}
    for value in values:
        name, sep, patterns = value.partition("=")
        if not sep or not name.strip() or not patterns_of([patterns]):
            raise BadInputError(f"--collection {value!r}: expected NAME=PATTERN[,PATTERN], e.g. --collection "
                                "reports=reports/2024,'*.pdf'")
        if name.strip() in out:
            raise BadInputError(f"--collection {name.strip()!r} is given twice: one --collection per name, its "
                                "patterns comma-separated")
        out[name.strip()] = list(patterns_of([patterns]))
    return out


def server_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """One option per `ServerConfig` field, ``None`` by default so the profile/file/environment value stands."""
    for name, field in reversed(ServerConfig.model_fields.items()):
        if name == "collections":  # a mapping: `--collection NAME=PATTERN[,PATTERN]`, repeated (`collection_option`)
            continue
        if field.annotation is bool:  # --x/--no-x, None when neither is given
            flag = name.replace("_", "-")
            func = click.option(f"--{flag}/--no-{flag}", name, default=None,
                                help=f"{field.description} [default: {field.default}]")(func)
            continue
        kind: Any = field.annotation if field.annotation in (int, str, float) else str
        low = next((m.ge for m in field.metadata if hasattr(m, "ge")), None)
        high = next((m.le for m in field.metadata if hasattr(m, "le")), None)
        if kind is int and (low is not None or high is not None):  # "--queue: -1 is not in the range x>=0", not
            kind = click.IntRange(low, high)  # "server.queue: Input should be ..." after the settings loaded
        func = click.option(
            f"--{name.replace('_', '-')}", name, type=kind, default=None, envvar=ENVVARS.get(name),
            help=f"{field.description} [default: {field.default}]",
        )(func)
    return func


@click.command()
@settings_options
@stage_options  # --mode pipeline|agentic and the stage switches, as in `ask`
@adaptation_option
@only_option
@also_option
@click.option("--collection", "collections", multiple=True, metavar="NAME=PATTERN[,PATTERN]",
              help="A part of the index as a model of its own ('<model>:NAME' in /v1/models): a client that picks it "
                   "asks about those documents only (patterns as --only; setting server.collections). Repeat for more.")
@server_options
@handle_errors
def serve(profile, config_file, index_name, rewrite, cross_encoder, llm_rerank, judge, mode, adaptation, only, also,
          collections, **server):
    """Serve the index over an OpenAI-compatible API (POST /v1/chat/completions, GET /v1/models, GET /healthz) and a
    chat page for the browser at /."""
    from local_rag.adaptation import in_use
    from local_rag.server import check_bind, check_port
    from local_rag.server import serve as run_server

    settings = pipeline_settings(profile, config_file, index_name, rewrite, cross_encoder, llm_rerank, judge, mode,
                                 adapted=True, index_adaptation=adaptation, **{"retrieval.only": only_list(only), "retrieval.also": also_list(also)},
                                 **{f"server.{k}": v for k, v in server.items()},
                                 **{"server.collections": parse_collections(collections) or None})
    cfg = settings.server
    check_bind(cfg)
    check_port(cfg)  # a port in use is said now, not after the models load
    adapted = in_use(settings)
    click.echo(
        f"local-rag serve: index {settings.index}"
        f"{' with ' + ', '.join(settings.retrieval.also) if settings.retrieval.also else ''}{', ' + adapted if adapted else ''}"
        f"{' (only ' + ', '.join(settings.retrieval.only) + ')' if settings.retrieval.only else ''}, model {settings.llm.model}, "
        f"mode {settings.pipeline.mode}, "
        f"queue {cfg.queue}, API key {'required' if cfg.api_key else 'off'}, browser pages: localhost"
        f"{' and ' + cfg.cors_origins.replace(',', ', ') if cfg.cors_origins else ''}; loading the pipeline...", err=True,
    )
    if cfg.ui:
        host = "localhost" if cfg.host in ("0.0.0.0", "::") else f"[{cfg.host}]" if ":" in cfg.host else cfg.host
        where = f"http://{host}:{cfg.port}/" if cfg.port else "the address uvicorn prints below"
        click.echo(f"chat page: {where} (open it in a browser; --no-ui leaves it out)", err=True)
    run_server(settings)

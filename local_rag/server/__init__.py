"""An OpenAI-compatible HTTP server over the RAG pipeline (``local-rag serve``; docs/server.md).

- ``protocol``: OpenAI chat-completions requests -> `Conversation`; responses and stream chunks.
- ``turns``: one generation at a time, a bounded wait queue, a worker thread that stops when its client leaves.
- ``app``: the FastAPI routes, bearer key, size limit, errors in the OpenAI shape.

FastAPI and uvicorn come with the ``server`` extra and are imported only here, when a server starts.

Example:
    >>> serve(load_settings("cpu-test", overrides={"index": "docs"}))  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

from local_rag.errors import MissingDependencyError, SettingsError
from local_rag.origins import ANY, is_loopback
from local_rag.settings import ServerConfig, Settings

log = logging.getLogger("local_rag.server")


def require_server() -> ModuleType:
    """uvicorn (and FastAPI), or `MissingDependencyError` naming the ``server`` extra."""
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError as exc:
        raise MissingDependencyError(
            f"{exc.name or 'fastapi'} is needed for the HTTP server but is not installed. "
            "Install it with: pip install 'local-rag[server]'"
        ) from exc
    return uvicorn


def check_bind(config: ServerConfig) -> None:
    """Refuse to listen beyond loopback, or to answer any web page (``cors_origins`` ``*``), without an API key."""
    if not is_loopback(config.host) and not config.api_key:
        raise SettingsError(
            f"refusing to bind {config.host} without an API key: set --api-key or LOCAL_RAG_API_KEY "
            "(or bind 127.0.0.1)"
        )
    if ANY in config.origins and not config.api_key:
        raise SettingsError(
            "refusing --cors-origins '*' without an API key: any web page you open could make the server answer "
            "from your documents; name the pages' origins (e.g. http://192.168.1.5:3000) or set --api-key"
        )


def check_port(config: ServerConfig) -> None:
    """Bind ``host:port`` once and let it go, before the models load: a port in use, or a host that is not an address
    of this machine, was found by uvicorn only after the pipeline had loaded (a raw ``ERROR: [Errno 98]`` log line).

    Raises:
        SettingsError: one line naming the address and the way out.
    """
    import errno
    import socket

    if config.port == 0:
        return  # any free port
    where = f"{config.host}:{config.port}"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(config.host, config.port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise SettingsError(f"cannot listen on {where}: {exc.strerror} (--host takes a name or address of this "
                            "machine)") from None
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            sock.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise SettingsError(f"cannot listen on {where}: the port is in use (another `local-rag serve`?); "
                                    "choose another --port, or --port 0 for any free one") from None
            raise SettingsError(f"cannot listen on {where}: {exc.strerror}") from None


def create_app(settings: Settings, pipeline: Any = None, load: bool = True) -> Any:
    """The FastAPI app (see `local_rag.server.app.create_app`)."""
    require_server()
    from local_rag.server.app import create_app as _create_app

    return _create_app(settings, pipeline, load)


def serve(settings: Settings, pipeline: Any = None) -> None:
    """Load the pipeline's stages, then serve until interrupted (Ctrl-C)."""
    cfg = settings.server
    check_bind(cfg)
    check_port(cfg)
    uvicorn = require_server()
    app = create_app(settings, pipeline)
    log.info("serving index %s with %s", settings.index, settings.llm.model)
    uvicorn.run(app, host=cfg.host, port=cfg.port, log_level="info", timeout_graceful_shutdown=3)

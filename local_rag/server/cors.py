"""Browser pages: a gate that refuses the pages `local_rag.origins` does not allow, then Starlette's
``CORSMiddleware`` for the others (the preflight ``OPTIONS`` and the ``Access-Control-Allow-*`` headers).

Without it a page at ``http://localhost:3000`` got 405 for its preflight (the browser said only "Failed to fetch"),
while any site one opened could still send a "simple" cross-site POST that the server answered in full, a whole
turn of the one generation slot each, unseen.
"""

from __future__ import annotations

import json
import logging
from inspect import signature
from typing import Any
from urllib.parse import urlsplit

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from local_rag.origins import FILE_PAGE, origin_allowed
from local_rag.server.errors import error_body

log = logging.getLogger("local_rag.server")


def refusal(origin: str) -> str:
    """The one-line reason a page's request is refused, with the flag that allows it."""
    page = "a page opened from a file (origin null)" if origin == FILE_PAGE else f"the web page at {origin}"
    return (f"{page} may not use this server: allow it with `local-rag serve --cors-origins {origin}` "
            "(setting server.cors_origins)")


def own_page(origin: str, scope: Scope, headers: dict[bytes, bytes]) -> bool:
    """Whether ``origin`` is the server's own (the chat page at ``/``, opened as ``http://192.168.1.5:8000/`` on the
    LAN): its scheme and host:port those the request was sent to. `OriginGate` asks only when the server has an API
    key: a page of a DNS-rebound name passes this test, and only the key stops it."""
    parts = urlsplit(origin)
    return parts.scheme == scope.get("scheme", "http") and parts.netloc.lower() == headers.get(b"host", b"").decode(
        "latin-1").lower()


class OriginGate:
    """ASGI middleware: a request with an ``Origin`` header that is not allowed gets 403 (in the OpenAI error shape),
    and the server log says once per origin how to allow it; others go on to ``CORSMiddleware``. ``same_origin``:
    the server's own pages are allowed too, wherever it is reached (a server with an API key: `own_page`)."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...], same_origin: bool = False) -> None:
        self.allowed = allowed
        self.same_origin = same_origin
        # Chrome asks a page of the LAN before it lets it reach localhost (Private Network Access); Starlette
        # answers that when it knows how (newer releases)
        more: dict[str, Any] = {"allow_private_network": True} if "allow_private_network" in signature(CORSMiddleware).parameters else {}
        self.app = CORSMiddleware(app, allow_origins=["*"], allow_methods=["GET", "POST"], allow_headers=["*"],
                                  max_age=600, **more)
        self.warned: set[str] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        origin = headers.get(b"origin", b"").decode("latin-1")
        if not origin or origin_allowed(origin, self.allowed) or (self.same_origin and own_page(origin, scope, headers)):
            await self.app(scope, receive, send)
            return
        message = refusal(origin)
        if origin not in self.warned and len(self.warned) < 100:  # a page at a time, not a log flood
            self.warned.add(origin)
            log.warning("refused %s %s: %s", scope.get("method"), scope.get("path"), message)
        body = json.dumps(error_body(403, message, "origin_not_allowed")).encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

"""The chat page: ``GET /`` of ``local-rag serve`` (setting ``server.ui``, ``serve --no-ui`` to leave it out).

One HTML page, its script and its style sheet, package data in ``local_rag/server/page/``. The page asks through the
server's own API (``/healthz``, ``/v1/models``, ``/v1/chat/completions`` streamed), so it needs nothing the API does
not already give, and the API key guards it the same way: the page itself is static and says nothing secret, and
asks for the key when the API refuses it. Nothing is fetched from elsewhere (air-gapped machines), which the
``Content-Security-Policy`` header enforces in the browser: scripts, styles and requests of this server only, no
frames, no forms sent elsewhere.

Example:
    >>> sorted(FILES)
    ['chat.css', 'chat.js', 'index.html']
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from local_rag.server.errors import ApiError

FILES = {"index.html": "text/html; charset=utf-8", "chat.js": "text/javascript; charset=utf-8",
         "chat.css": "text/css; charset=utf-8"}
POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
          "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": POLICY, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-cache"}
OFF = "the chat page is off on this server (`local-rag serve --no-ui`, setting server.ui); the API is at /v1"


@cache
def page_file(name: str) -> bytes:
    """The bytes of one of the page's files.

    Raises:
        ApiError: 404 for a name that is not one of them.
    """
    if name not in FILES:
        raise ApiError(404, f"no file {name!r} in the chat page (it has {', '.join(sorted(FILES))})", "not_found")
    return (resources.files("local_rag.server") / "page" / name).read_bytes()

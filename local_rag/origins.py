"""Which web pages may use ``local-rag serve`` from a browser: the rule of ``server.cors_origins``.

A browser sends the page's origin (``http://localhost:3000``) with every request it makes for a script. Pages of
this machine (``localhost``, ``127.0.0.1``, ``[::1]``, any port, http or https) are allowed, as Ollama allows them;
``server.cors_origins`` names more (``http://192.168.1.5:3000``, ``null`` for a page opened from a file, ``*`` for
any, which needs an API key). Any other page is refused, so a site one happens to open cannot make the server
answer from one's documents. Clients that are not browsers (the OpenAI SDK, curl, Open WebUI's backend) send no
origin and are not concerned.

Example:
    >>> parse_origins("http://192.168.1.5:3000/, https://chat.lan")
    ('http://192.168.1.5:3000', 'https://chat.lan')
    >>> origin_allowed("http://localhost:5173", ()), origin_allowed("https://evil.example", ())
    (True, False)
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

ANY = "*"
FILE_PAGE = "null"  # the Origin of a page opened from a file, or of a sandboxed frame


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1); any other name or address is not."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_origins(text: str) -> tuple[str, ...]:
    """The origins of a comma-separated list, each ``scheme://host[:port]`` (a trailing ``/`` dropped), ``null`` or
    ``*``.

    Raises:
        ValueError: one line naming an entry that is not an origin (a path, no scheme, a space inside).
    """
    origins: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if item in (ANY, FILE_PAGE):
            origins.append(item)
            continue
        origin = item[:-1] if item.endswith("/") else item
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query or " " in origin:
            raise ValueError(f"{item!r} is not a web page's origin: give scheme://host[:port] as the browser's "
                             "address bar shows it, without a path (e.g. http://192.168.1.5:3000), 'null' for a "
                             "page opened from a file, or '*'")
        origins.append(origin.lower())
    return tuple(dict.fromkeys(origins))


def origin_allowed(origin: str, allowed: tuple[str, ...]) -> bool:
    """Whether a request sent by the page at ``origin`` may be answered: a page of this machine, or one ``allowed``."""
    if ANY in allowed or origin.lower() in allowed:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and is_loopback(parts.hostname or "")

"""Errors of the HTTP API, always in the OpenAI shape ``{"error": {"message", "type", "code"}}``."""

from __future__ import annotations

from typing import Any

# status -> the OpenAI error ``type`` clients look at
_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "invalid_request_error",
          405: "invalid_request_error", 413: "invalid_request_error", 415: "invalid_request_error",
          429: "rate_limit_error", 500: "server_error", 503: "server_error"}


class ApiError(Exception):
    """An error answered with ``status`` and the OpenAI error body (``headers`` e.g. ``Retry-After``)."""

    def __init__(self, status: int, message: str, code: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return error_body(self.status, self.message, self.code)


def strings_request(body: bytes, key: str, what: str, hint: str = "", code: str = "invalid_request"
                    ) -> tuple[dict[str, Any], list[str]]:
    """A request body's JSON object and its ``key``: a string or a non-empty list of strings (the embeddings'
    ``input``, a vector store search's ``query``); `ApiError` 400 otherwise: JSON nested 200,000 deep or a 5,000-digit
    number as well (``invalid_json``), as the chat route reads its body. ``what``: the request, for the message;
    ``hint``: said after a wrong value (``code`` its error code)."""
    from local_rag import safejson
    from local_rag.errors import BadInputError

    try:
        data = safejson.loads(body, "the request body")
    except BadInputError as exc:
        raise ApiError(400, str(exc), "invalid_json") from exc
    if not isinstance(data, dict) or key not in data:
        raise ApiError(400, f"{what} needs '{key}': a string or a list of strings", "invalid_request")
    raw = data[key]
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise ApiError(400, f"'{key}' must be a non-empty string or list of strings{hint}", code)
    return data, texts


def error_body(status: int, message: str, code: str) -> dict[str, Any]:
    """The OpenAI error object for ``status``.

    Example:
        >>> error_body(400, "messages: field required", "invalid_request")["error"]["type"]
        'invalid_request_error'
    """
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


ROUTES = ("POST /v1/chat/completions", "POST /v1/embeddings", "GET /v1/models", "GET /v1/models/{id}",
          "GET /v1/vector_stores", "GET /v1/vector_stores/{id}", "POST /v1/vector_stores/{id}/search",
          "GET /v1/vector_stores/{id}/files[/{file}[/content]]",
          "POST /mcp (serve --mcp)", "GET /healthz", "GET / (the chat page)")


def route_message(method: str, path: str, status: int) -> str:
    """What a 404 or 405 says: the routes served, and the likely slip (a base URL without ``/v1``, the legacy
    completions API, a GET of a POST route).

    Example:
        >>> print(route_message("POST", "/chat/completions", 404).split(": ")[0])
        no route POST /chat/completions (the client's base URL lacks /v1
    """
    if status == 405:
        allowed = [r.split()[0] for r in ROUTES if r.split()[1] == path]
        return f"{method} {path} is not served: use {' or '.join(allowed) or 'another method'}"
    hint = ""
    if f"POST /v1{path}" in ROUTES or f"GET /v1{path}" in ROUTES:
        hint = " (the client's base URL lacks /v1: give http://HOST:PORT/v1)"
    elif path.rstrip("/") in ("/v1/completions", "/completions"):
        hint = " (the legacy completions API is not served: use chat completions)"
    return f"no route {method} {path}{hint}: local-rag serves {', '.join(ROUTES)}"


class ClientGone(Exception):  # noqa: N818 - not an error of the server: the reader left
    """Raised from the token callback when the client disconnected: it stops the generation."""

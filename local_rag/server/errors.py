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


def error_body(status: int, message: str, code: str) -> dict[str, Any]:
    """The OpenAI error object for ``status``.

    Example:
        >>> error_body(400, "messages: field required", "invalid_request")["error"]["type"]
        'invalid_request_error'
    """
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class ClientGone(Exception):  # noqa: N818 - not an error of the server: the reader left
    """Raised from the token callback when the client disconnected: it stops the generation."""

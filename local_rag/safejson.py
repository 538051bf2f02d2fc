"""JSON from users (conversation files, request bodies), with every failure as one line.

`json.loads` fails in more ways than `JSONDecodeError`: a document nested 100,000 deep raises `RecursionError`,
an integer of more than 4,300 digits a `ValueError`, and a UTF-8 BOM is refused. Here all of them become a
`BadInputError` (exit 2 at the CLI; the server maps the message to a 400), a leading BOM is dropped, and
`depth` / `big_int` check what parsed.

Example:
    >>> loads('{"a": [1, 2]}', "x.json")
    {'a': [1, 2]}
"""

from __future__ import annotations

import json
from typing import Any

from local_rag.errors import BadInputError

MAX_DEPTH = 64  # conversations and request bodies nest 4 deep; anything past this is hostile
MAX_INT = 2**63 - 1


def problem(exc: Exception) -> str:
    """What is wrong with a JSON text, from the exception `json.loads` raised."""
    if isinstance(exc, json.JSONDecodeError):
        # some messages end in "at" ("Invalid control character at"): do not say "at at"
        return f"{exc.msg.removesuffix(' at')} at line {exc.lineno}, column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 ({exc.reason} at byte {exc.start})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__  # e.g. an integer of too many digits


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deep ``value`` nests (1 for a scalar), counting no further than ``limit + 1``; iterative."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
    return deepest


def big_int(value: Any, limit: int = MAX_INT) -> int | None:
    """The first integer in ``value`` beyond +-``limit`` (JSON allows any size; nothing here needs more than 64
    bits), else None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) > limit:
            return item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def loads(text: str | bytes, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """Parse ``text``; `BadInputError` naming ``where`` for anything but a sound JSON document of at most
    ``max_depth`` levels with 64-bit integers."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        data = json.loads(text.removeprefix("\ufeff"))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise BadInputError(f"{where}: not valid JSON ({problem(exc)})") from exc
    if depth(data, max_depth) > max_depth:
        raise BadInputError(f"{where}: JSON nested more than {max_depth} levels deep")
    number = big_int(data)
    if number is not None:
        raise BadInputError(f"{where}: an integer of {len(str(abs(number)))} digits (at most 64-bit integers)")
    return data

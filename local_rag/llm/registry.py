"""An explicit registry of named stages and modes that refuses unknown names and lists the valid ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from local_rag.errors import SettingsError

T = TypeVar("T")


class Registry(Generic[T]):
    """Names to implementations, e.g. rewrite modes.

    Example:
        >>> modes: Registry[int] = Registry("rewrite mode")
        >>> _ = modes.register("rewrite")(1)
        >>> modes.get("rewritten")
        Traceback (most recent call last):
        ...
        local_rag.errors.SettingsError: unknown rewrite mode 'rewritten'; valid: rewrite
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def decorator(item: T) -> T:
            if name in self._items:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = item
            return item

        return decorator

    def get(self, name: str) -> T:
        if name not in self._items:
            raise SettingsError(f"unknown {self.kind} {name!r}; valid: {', '.join(self.names())}")
        return self._items[name]

    def check(self, names: list[str]) -> list[str]:
        """``names`` unchanged when all are registered; `SettingsError` naming the first unknown one otherwise."""
        for name in names:
            self.get(name)
        return names

    def names(self) -> list[str]:
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

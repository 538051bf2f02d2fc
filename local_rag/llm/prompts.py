"""Prompts are package data: ``local_rag/prompts/<name>.yaml``, each with its output schema beside the text.

A prompt file holds ``system``, a ``user`` template (``str.format`` fields, ``{{``/``}}`` for literal braces),
optional few-shot ``examples`` (user/assistant pairs: small models need them), ``schema`` (the JSON schema the reply
must follow; absent for free text) and ``max_tokens``.

Example:
    >>> p = load_prompt("rewrite")
    >>> messages = p.messages(conversation="User: who wrote it?", question="who wrote it?")
    >>> messages[0]["role"]
    'system'
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml

from local_rag.errors import SettingsError
from local_rag.llm.base import Message


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    user: str
    examples: tuple[tuple[str, str], ...] = ()
    schema: dict[str, Any] | None = None
    max_tokens: int = 128
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def render_user(self, **fields: Any) -> str:
        try:
            return self.user.format(**fields)
        except KeyError as exc:
            raise SettingsError(f"prompt {self.name!r} needs the field {exc.args[0]!r}") from exc

    def messages(self, **fields: Any) -> list[Message]:
        """System message, the few-shot turns, then the rendered user message."""
        out: list[Message] = [{"role": "system", "content": self.system.strip()}]
        for user, assistant in self.examples:
            out.append({"role": "user", "content": user.strip()})
            out.append({"role": "assistant", "content": assistant.strip()})
        out.append({"role": "user", "content": self.render_user(**fields).strip()})
        return out


_KNOWN = {"system", "user", "examples", "schema", "max_tokens", "description"}


def list_prompt_files(folder: Traversable) -> list[str]:
    """Names of the ``<name>.yaml`` prompt files in a package-data folder."""
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def read_prompt_file(folder: Traversable, name: str, kind: str = "prompt") -> Prompt:
    """The prompt ``name`` of a package-data folder; `SettingsError` listing the valid names if there is none."""
    names = list_prompt_files(folder)
    if name not in names:
        raise SettingsError(f"unknown {kind} {name!r}; valid {kind}s: {', '.join(names)}")
    raw = yaml.safe_load((folder / f"{name}.yaml").read_text(encoding="utf-8"))
    return Prompt(
        name=name,
        system=raw["system"],
        user=raw["user"],
        examples=tuple((e["user"], e["assistant"]) for e in raw.get("examples") or []),
        schema=raw.get("schema"),
        max_tokens=int(raw.get("max_tokens", 128)),
        description=raw.get("description", ""),
        extra={k: v for k, v in raw.items() if k not in _KNOWN},
    )


def _bundled() -> Traversable:
    return resources.files("local_rag") / "prompts"


def list_prompts() -> list[str]:
    return list_prompt_files(_bundled())


@functools.cache
def load_prompt(name: str) -> Prompt:
    """The bundled prompt ``name``; `SettingsError` listing the valid names if there is none."""
    return read_prompt_file(_bundled(), name, "prompt")


def prompt_fingerprint(name: str) -> str:
    """The first 12 hex digits of the sha256 of the bundled prompt file ``name`` (its text, ``max_tokens``...), or ""
    when there is none."""
    try:
        data = (_bundled() / f"{name}.yaml").read_bytes()
    except OSError:
        return ""
    return hashlib.sha256(data).hexdigest()[:12]

"""The judge prompts of the generation scorer, as package data beside this file (``<name>.yaml``), in the format of
`local_rag.llm.prompts` (system, user template, few-shot examples, JSON schema, max_tokens).

They follow the official MTRAG judges' questions (IDK, RAGAS faithfulness, the 1-10 reference judge) in our own
words, with JSON-schema constrained replies instead of free text parsed by regular expressions.

Example:
    >>> load_eval_prompt("rb_llm").schema["properties"]["rating"]["maximum"]
    10
"""

from __future__ import annotations

import functools
from importlib import resources

import yaml

from local_rag.errors import SettingsError
from local_rag.llm.prompts import Prompt

_KNOWN = {"system", "user", "examples", "schema", "max_tokens", "description"}


def list_eval_prompts() -> list[str]:
    folder = resources.files(__name__)
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


@functools.cache
def load_eval_prompt(name: str) -> Prompt:
    """The judge prompt ``name``; `SettingsError` listing the valid names if there is none."""
    names = list_eval_prompts()
    if name not in names:
        raise SettingsError(f"unknown judge prompt {name!r}; valid: {', '.join(names)}")
    raw = yaml.safe_load((resources.files(__name__) / f"{name}.yaml").read_text(encoding="utf-8"))
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

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

from local_rag.llm.prompts import Prompt, list_prompt_files, read_prompt_file


def list_eval_prompts() -> list[str]:
    return list_prompt_files(resources.files(__name__))


@functools.cache
def load_eval_prompt(name: str) -> Prompt:
    """The judge prompt ``name``; `SettingsError` listing the valid names if there is none."""
    return read_prompt_file(resources.files(__name__), name, "judge prompt")

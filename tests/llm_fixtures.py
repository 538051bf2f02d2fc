"""Fixtures and fakes for the LLM and model-store tests (imported by tests/test_llm_*.py and tests/test_models*.py).

- `ScriptedLLM`: a deterministic fake `LLM` whose replies come from a function of the messages; it records
  `LLMCall`s like a real backend, so stage logic is tested without a model.
- `tiny_gguf`: writes a small valid GGUF (a few float tensors) with the `gguf` package, for header checks.
- `smollm`: the real SmolLM2-135M on llama.cpp (session-scoped), skipped with a reason when llama_cpp or the
  model is missing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from local_rag.llm.base import LLM, Completion, Message
from local_rag.records import LLMCall

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
SMOLLM = "smollm2-135m-instruct"
QWEN15 = "qwen2.5-coder-1.5b-instruct-q4_k_m"

Reply = Callable[[list[Message], dict[str, Any] | None], str]


class ScriptedLLM(LLM):
    """A fake LLM: ``reply(messages, schema)`` gives the text; tokens are whitespace words."""

    def __init__(self, reply: Reply | str, n_ctx: int = 4096) -> None:
        super().__init__()
        self.reply = reply if callable(reply) else (lambda m, s: reply)
        self.n_ctx = n_ctx
        self.seen: list[list[Message]] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def complete(self, messages: list[Message], *, stage: str, schema: dict[str, Any] | None = None,
                 max_tokens: int | None = None, on_token: Callable[[str], None] | None = None,
                 stop: list[str] | None = None) -> Completion:
        self.seen.append(messages)
        text = self.reply(messages, schema)
        ends = [text.find(s) + len(s) for s in stop or [] if s and s in text]
        if ends:  # like a backend: cut after the first stop string, which is kept
            text = text[: min(ends)]
        for piece in re.findall(r"\S+\s*", text):
            if on_token is not None:
                on_token(piece)
        prompt = "\n".join(m["content"] for m in messages)
        call = LLMCall(stage, self.count_tokens(prompt), self.count_tokens(text), 0.01, 0.01, 0.02, prompt, text)
        return Completion(text, call)


def shown_ids(messages: list[Message]) -> dict[int, str]:
    """``{id: passage text}`` as a rerank/judge prompt shows them (the last user message)."""
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^\[(\d+)\] (.*)$", messages[-1]["content"], re.M)}


def order_by_keyword(keyword: str) -> Reply:
    """A 'perfect' reranker: passages containing ``keyword`` first, then the rest by their shown id."""

    def reply(messages: list[Message], schema: dict[str, Any] | None) -> str:
        ids = shown_ids(messages)
        order = sorted(ids, key=lambda i: (keyword not in ids[i], i))
        return json.dumps({"order": order})

    return reply


def write_tiny_gguf(path: Path, n_tensors: int = 3, template: str | None = "{{ messages }}") -> Path:
    """A small valid GGUF file (float32 tensors of 64x32) with an architecture, a name and a chat template."""
    gguf = pytest.importorskip("gguf")
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny test model")
    writer.add_block_count(n_tensors)
    writer.add_context_length(256)
    if template:
        writer.add_chat_template(template)
    for i in range(n_tensors):
        writer.add_tensor(f"blk.{i}.weight", np.full((64, 32), i, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture
def tiny_gguf(tmp_path: Path) -> Path:
    return write_tiny_gguf(tmp_path / "tiny.gguf")


def llama_cpp_or_skip() -> None:
    from local_rag.llm.native import make_cxx_runtime_global

    make_cxx_runtime_global()  # as local-rag imports it: a CUDA build crashes at load otherwise (session 37)
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"llama_cpp is not importable ({exc}); run scripts/install_llama_cpp.sh")


def model_or_skip(name: str) -> None:
    from local_rag.modelstore import Manifest

    manifest = Manifest.load(MODELS)
    if name not in manifest.entries or not manifest.is_present(manifest.entries[name]):
        pytest.skip(f"model {name} is not in {MODELS}; run `local-rag models import {name}`")


def load_real(name: str, **llm: Any) -> LLM:
    llama_cpp_or_skip()
    model_or_skip(name)
    from local_rag.llm import load_llm
    from local_rag.settings import load_settings

    settings = load_settings("cpu-test", overrides={"models_dir": str(MODELS), "llm": {"model": name, **llm}})
    return load_llm(settings.llm, settings.models_dir)


@pytest.fixture(scope="session")
def smollm() -> LLM:
    """SmolLM2-135M on llama.cpp: temperature 0, seed 0, 2048-token context."""
    return load_real(SMOLLM, n_ctx=2048, temperature=0.0, seed=0)

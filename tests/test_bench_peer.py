"""scripts/bench_peer.py's settings overrides (`--set`), which pick the speed levers for both sides of the peer
benchmark; the benchmark itself needs .venv-peer (LlamaIndex) and the Qwen GGUF, so it runs by hand (docs/peer.md)."""

from __future__ import annotations

import pytest

from local_rag.bench.peer import parse_sets
from local_rag.settings import deep_merge, load_settings


def test_sets_become_nested_overrides_that_the_settings_accept() -> None:
    overrides = parse_sets(["llm.model=qwen2.5-coder-1.5b-instruct-q4_k_m", "evidence.budget_tokens=300",
                            "rewrite.skip_standalone=false"])
    assert overrides == {"llm": {"model": "qwen2.5-coder-1.5b-instruct-q4_k_m"}, "evidence": {"budget_tokens": 300},
                         "rewrite": {"skip_standalone": False}}
    settings = load_settings("cpu-fast", overrides=deep_merge(overrides, {"models_dir": "models"}))
    assert settings.llm.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"  # the profile's 0.5B replaced
    assert settings.evidence.compress and settings.evidence.budget_tokens == 300  # the rest of the profile kept
    assert not settings.rewrite.skip_standalone
    assert settings.generate.prompt == "answer_history_first"


@pytest.mark.parametrize("item", ["llm.model", "=x", "llm..model=x"])
def test_a_malformed_set_is_refused(item: str) -> None:
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_sets([item])

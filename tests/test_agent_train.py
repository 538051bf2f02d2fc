"""GRPO training of the agentic policy for real, at toy scale: SmolLM2-135M (its GGUF, loaded by transformers), a
few MTRAG conversations (or the tiny corpus's questions without MTRAG), a BM25 index over a tiny corpus, two steps
on the CPU. Slow: minutes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from local_rag.agent.data import AgentTask, load_agent_tasks
from local_rag.agent.pipeline import AgenticPipeline
from local_rag.index import build_index
from local_rag.records import Conversation, Turn

from .conftest import CORPUS, MTRAG, make_settings, write_jsonl
from .llm_fixtures import MODELS

pytestmark = pytest.mark.slow


def smollm_gguf() -> Path:
    found = sorted((MODELS / "smollm2-135m-instruct").glob("*.gguf"))
    if not found:
        pytest.skip("smollm2-135m-instruct is not in models/")
    return found[0]


def toy_tasks(tmp_path: Path) -> tuple[list[AgentTask], Path]:
    """A few MTRAG govt conversations over their own gold passages, else questions about the tiny corpus."""
    if MTRAG.exists():
        tasks = load_agent_tasks(MTRAG, ["govt"], limit=2, seed=0)
        from local_rag.mtrag import read_jsonl

        pool = {p["_id"]: p for p in read_jsonl(MTRAG / "corpora" / "pool" / "govt.jsonl")}
        wanted = {pid for t in tasks for pid in t.gold_ids} | set(list(pool)[:20])
        corpus = [pool[p] for p in sorted(wanted) if p in pool]
        return tasks, write_jsonl(tmp_path / "corpus.jsonl", corpus)
    tasks = [AgentTask(f"t{i}", "toy", Conversation([Turn("user", q)]), a, r, {pid: 1})
             for i, (q, a, r, pid) in enumerate([
                 ("How long do cats sleep?", "twelve to sixteen hours a day", "how long do cats sleep", "d1-1"),
                 ("What is BM25?", "a ranking function used by search engines", "what is BM25", "d3-0")])]
    return tasks, write_jsonl(tmp_path / "corpus.jsonl", CORPUS)


def test_grpo_toy_run_gives_finite_loss_and_reward_and_a_loadable_checkpoint(tmp_path: Path) -> None:
    pytest.importorskip("trl")
    pytest.importorskip("gguf")
    from local_rag.agent.train import TrainConfig, load_policy, train_policy

    model = smollm_gguf()
    tasks, corpus = toy_tasks(tmp_path)
    settings = make_settings(tmp_path, dense={"enabled": False}, retrieval={"retrievers": ["bm25"]},
                             chunker={"tokenizer": "whitespace", "size": 200, "overlap": 20},
                             agent={"max_searches": 1, "max_steps": 2, "passage_tokens": 48, "history_tokens": 120})
    build_index(settings, corpus, progress=False)
    search = AgenticPipeline(settings).search
    config = TrainConfig(model=str(model), out=str(tmp_path / "policy"), steps=2, num_generations=2, step_tokens=24,
                         extra={"gradient_checkpointing": False})
    result = train_policy(config, settings, tasks, search)
    assert len(result.losses) == 2 and all(math.isfinite(v) for v in result.losses)
    assert len(result.rewards) == 2 and all(math.isfinite(v) and v >= 0 for v in result.rewards)
    assert any("rewards/answer_f1/mean" in h for h in result.log_history)
    policy, tokenizer = load_policy(str(result.out))
    ids = tokenizer("<search>cats</search>", return_tensors="pt")
    assert math.isfinite(float(policy(**ids).logits.detach().abs().max()))

"""The agentic answering mode (ChatR1): the LLM reasons, decides when and what to search, reads, answers.

- `local_rag.agent.tags`: the ``<think>/<search>/<information>/<answer>`` protocol, one step parsed into an action;
- `local_rag.agent.rollout`: the bounded loop (`AgentLoop`), shared by inference and training;
- `local_rag.agent.pipeline`: `AgenticPipeline`, selected by ``pipeline.mode: agentic``;
- `local_rag.agent.rewards`: ChatR1's rewards (answer F1, intent, retrieval) over traces;
- `local_rag.agent.train`: GRPO fine-tuning of a transformers policy with TRL, the search tool in the loop.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AgenticPipeline", "AgentLoop", "parse_step"]


def __getattr__(name: str) -> Any:  # lazy: importing the package must not load the pipeline stack
    if name == "AgenticPipeline":
        from local_rag.agent.pipeline import AgenticPipeline

        return AgenticPipeline
    if name == "AgentLoop":
        from local_rag.agent.rollout import AgentLoop

        return AgentLoop
    if name == "parse_step":
        from local_rag.agent.tags import parse_step

        return parse_step
    raise AttributeError(name)

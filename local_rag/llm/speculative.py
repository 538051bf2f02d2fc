"""Prompt-lookup speculative decoding (llama-cpp-python's `LlamaPromptLookupDecoding`), counted.

A RAG answer copies phrases from its passages. After each token, the last n-gram of the text so far is looked up
in the prompt and the tokens that followed it there are proposed as a draft; the model checks the whole draft in
one batch and keeps the prefix it agrees with. With greedy sampling the text is the same as plain decoding; each
accepted draft token saves one decode step. llama-cpp-python computes logits for every position once a draft model
is set (``logits_all``), which costs prefill time and state size: ``scripts/bench_levers.py lookup`` measures both.

Example:
    >>> prompt_lookup(0, 2) is None
    True
"""

from __future__ import annotations

from typing import Any


def prompt_lookup(num_pred_tokens: int, max_ngram_size: int) -> Any:
    """A `CountingLookup` drafting ``num_pred_tokens`` tokens a step, or None when off (``0``)."""
    if num_pred_tokens <= 0:
        return None
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    class CountingLookup(LlamaPromptLookupDecoding):  # type: ignore[misc]
        """Counts decode steps (one draft lookup each) and draft tokens proposed."""

        def reset(self) -> CountingLookup:
            self.steps = 0
            self.drafted = 0
            return self

        def __call__(self, input_ids: Any, /, **kwargs: Any) -> Any:
            draft = super().__call__(input_ids, **kwargs)
            self.steps += 1
            self.drafted += len(draft)
            return draft

        def figures(self, generated: int) -> dict[str, int]:
            """``drafted_tokens`` and ``accepted_tokens`` (tokens generated beyond one a step) of the last call."""
            return {"drafted_tokens": self.drafted, "accepted_tokens": max(0, min(self.drafted, generated - self.steps))}

    return CountingLookup(max_ngram_size=max_ngram_size, num_pred_tokens=num_pred_tokens).reset()

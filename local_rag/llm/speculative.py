"""Prompt-lookup speculative decoding for greedy replies, on llama-cpp-python's context.

A RAG answer copies phrases from its passages. After each token, the last n-gram of the text so far is looked up in
the prompt (and the reply so far) and the tokens that followed it there are proposed as a draft
(`LlamaPromptLookupDecoding.find_candidate_pred_tokens`, llama-cpp-python's own lookup). The model checks the
draft in one batch, keeps the prefix it agrees with, and the KV cells of the rejected rest are removed. With
greedy decoding (temperature 0, no grammar) the text is the one plain decoding gives; each accepted draft token
saves one decode pass over the weights.

Why not llama-cpp-python's ``Llama(draft_model=...)``: setting a draft model makes it compute and copy logits for
every prompt position (``logits_all``), which on a CPU costs about 15% more prefill for Qwen2.5 (a 152k-token
output head) and, in 0.3.36, fails on prompts longer than ``n_batch`` (its score buffer has ``n_batch`` rows).
Here the prompt is prefilled as usual (`Llama.generate` gives the first token) and only the draft batches ask
for logits at every position.

Example:
    >>> draft = Drafts(num_pred_tokens=4, max_ngram_size=2)
    >>> draft.propose([5, 6, 7, 8, 9, 5, 6])
    [7, 8, 9, 5]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

AUTO_DRAFT_TOKENS = 10  # ``llm.prompt_lookup: -1`` where the build uses AMX (measured in session 29)


def lookup_tokens_for(setting: int, build: list[str]) -> int:
    """Draft tokens for the ``llm.prompt_lookup`` setting on a llama.cpp build using the CPU extensions ``build``
    (`local_rag.llm.cpu_build.build_features`): the setting itself, or for ``-1`` (auto) `AUTO_DRAFT_TOKENS` where the
    build uses AMX, else 0. With llama.cpp's AMX kernels a 12-token draft batch costs ~2.2x a single token on 2 cores,
    and decoding gained 9-14% in paired runs; without them a batch cost more than the passes it saved
    (docs/benchmarks.md).

    Example:
        >>> lookup_tokens_for(-1, ["AVX2", "AMX_INT8"]), lookup_tokens_for(-1, ["AVX2"]), lookup_tokens_for(4, [])
        (10, 0, 4)
    """
    if setting >= 0:
        return setting
    return AUTO_DRAFT_TOKENS if "AMX_INT8" in build else 0


class Drafts:
    """Draft proposals by prompt lookup, and the counts of one reply (proposed, accepted, verification passes)."""

    def __init__(self, num_pred_tokens: int, max_ngram_size: int = 2, min_ngram_size: int = 1) -> None:
        self.num_pred_tokens = num_pred_tokens
        self.max_ngram_size = max_ngram_size
        self.min_ngram_size = min_ngram_size  # shorter matches propose nothing (a single token rarely predicts the next)
        self.reset()

    def reset(self) -> Drafts:
        self.drafted = 0
        self.accepted = 0
        self.steps = 0
        return self

    def propose(self, ids: Sequence[int]) -> list[int]:
        """The tokens that followed the latest earlier occurrence of the last n-gram of ``ids`` (longest n first)."""
        seq = np.asarray(ids, dtype=np.int64)
        for n in range(min(self.max_ngram_size, len(seq) - 1), self.min_ngram_size - 1, -1):
            tail = seq[-n:]
            windows = np.lib.stride_tricks.sliding_window_view(seq[:-1], n)
            hits = np.flatnonzero((windows == tail).all(axis=1))
            for start in hits[::-1]:
                follow = seq[start + n : start + n + self.num_pred_tokens]
                if len(follow):
                    return [int(t) for t in follow]
        return []

    def figures(self) -> dict[str, int]:
        return {"drafted_tokens": self.drafted, "accepted_tokens": self.accepted}


def batch_logits(llama: Any, batch: Sequence[int], n_past: int) -> np.ndarray:
    """Decode ``batch`` after the first ``n_past`` cells of a llama-cpp-python ``Llama``'s KV cache (the cells past
    them dropped first) and return the logits of every position, one row a token. The caller sets ``n_tokens`` and
    ``_requires_eval`` for what it keeps."""
    n_vocab = llama._n_vocab
    llama._ctx.kv_cache_seq_rm(-1, n_past, -1)
    llama._batch.set_batch(batch=batch, n_past=n_past, logits_all=True)
    llama._ctx.decode(llama._batch)
    return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(len(batch) * n_vocab,)).reshape(len(batch), n_vocab)


def lookup_tokens(llama: Any, prompt: Sequence[int], drafts: Drafts) -> Iterator[int]:
    """Greedy tokens after ``prompt`` from a llama-cpp-python ``Llama``, verified in draft batches (see the module).

    The caller stops when it has enough (end-of-generation, a stop string, ``max_tokens``); the context then holds
    the prompt and the tokens verified so far, as after `Llama.generate`.
    """
    first = llama.generate(prompt, temp=0.0, top_k=1, repeat_penalty=1.0)
    try:
        last = next(first)  # the prompt prefilled as usual (prefix reuse included); its greedy next token
    finally:
        first.close()
    history = list(prompt)
    while True:
        yield last
        history.append(last)
        draft = drafts.propose(history)[: max(0, llama._n_ctx - llama.n_tokens - 2)]
        batch = [last, *draft]
        n_past = llama.n_tokens
        best = batch_logits(llama, batch, n_past).argmax(axis=1)
        taken = 0
        while taken < len(draft) and int(best[taken]) == draft[taken]:
            taken += 1
        drafts.steps += 1
        drafts.drafted += len(draft)
        drafts.accepted += taken
        llama.input_ids[n_past : n_past + 1 + taken] = batch[: 1 + taken]
        llama.n_tokens = n_past + 1 + taken
        llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)  # the rejected draft's cells
        llama._requires_eval = True  # the context's logits are a draft batch's, not the last token's
        for token in draft[:taken]:
            yield token
            history.append(token)
        last = int(best[taken])

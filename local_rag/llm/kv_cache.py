"""Prompt-prefix reuse across stages: a few saved llama.cpp KV states, restored when they share a longer prefix.

llama-cpp-python already skips the part of a prompt that the live KV cache holds (the longest common token prefix
with the previous call). The pipeline alternates stages, though: rewrite, generate, the next turn's rewrite... Each
stage's prompt starts with the same system text and worked example, but the live cache always holds the *other*
stage's prompt, so that prefix was prefilled again on every call (~350 tokens, ~7 s with Qwen 1.5B on 2 cores).

`PrefixStates` keeps the KV state of the last call of each stage (at most ``slots``, least recently used out).
Before a call, the state sharing the longest prefix with the new prompt is restored when it beats the live cache
by at least ``min_gain`` tokens; llama-cpp-python then drops the tail that differs and prefills only the rest.

A state holds the KV cells in use (Qwen2.5-1.5B: 28 KiB a token, so ~60 MB for a 2,000-token prompt); saving and
restoring it copies that much memory (milliseconds), far less than prefilling the prefix again.

Example:
    >>> cache = PrefixStates(slots=4)
    >>> cache.best([1, 2, 3]) is None
    True
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token lists.

    Example:
        >>> common_prefix([1, 2, 3], [1, 2, 4, 5])
        2
    """
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class SavedState:
    """The KV state of one llama.cpp context after a call: the tokens it holds and the raw state (``size`` bytes of
    the ctypes buffer llama.cpp wrote, handed back to it as is on restore: no copy either way)."""

    tokens: list[int]
    data: Any
    size: int


class PrefixStates:
    """Saved KV states by key (the stage), restored when their tokens share the longest prefix with a prompt."""

    def __init__(self, slots: int = 4, min_gain: int = 32) -> None:
        self.slots = slots
        self.min_gain = min_gain
        self.states: OrderedDict[str, SavedState] = OrderedDict()

    def best(self, tokens: Sequence[int]) -> tuple[str, int] | None:
        """The key of the saved state sharing the longest prefix with ``tokens``, and that length."""
        found = None
        for key, state in self.states.items():
            n = common_prefix(state.tokens, tokens)
            if n and (found is None or n > found[1]):
                found = (key, n)
        return found

    def put(self, key: str, state: SavedState) -> None:
        self.states.pop(key, None)
        self.states[key] = state
        while len(self.states) > self.slots:
            self.states.popitem(last=False)

    def clear(self) -> None:
        self.states.clear()

    # -- llama-cpp-python glue ----------------------------------------------------------------------------------

    def before(self, llama: Any, tokens: Sequence[int]) -> int:
        """Restore the best saved state into ``llama`` when it beats the live cache; returns the tokens reused."""
        live = common_prefix(llama._input_ids.tolist(), tokens) if llama.n_tokens else 0
        best = self.best(tokens)
        if best is None or best[1] < live + self.min_gain:
            return live
        key, n = best
        if not _load(llama, self.states[key]):
            return 0  # the context was reset: nothing is reused
        self.states.move_to_end(key)
        return n

    def after(self, llama: Any, key: str) -> None:
        """Save the state ``llama`` holds now (the prompt and reply just processed) under ``key``."""
        if self.slots <= 0 or not llama.n_tokens:
            return
        state = _save(llama)
        if state is not None:
            self.put(key, state)


def _save(llama: Any) -> SavedState | None:
    import llama_cpp

    ctx = llama._ctx.ctx
    size = llama_cpp.llama_state_get_size(ctx)
    buf = (ctypes.c_uint8 * int(size))()
    n = llama_cpp.llama_state_get_data(ctx, buf, size)
    if not n or int(n) > int(size):
        return None
    return SavedState(tokens=llama._input_ids.tolist(), data=buf, size=int(n))


def _load(llama: Any, state: SavedState) -> bool:
    import llama_cpp

    if llama_cpp.llama_state_set_data(llama._ctx.ctx, state.data, state.size) != state.size:
        llama.reset()  # a half-written state is unusable: start from an empty cache
        return False
    n = len(state.tokens)
    llama.input_ids[:n] = state.tokens
    llama.n_tokens = n
    llama._requires_eval = True  # the logits are the saved ones: llama-cpp-python evaluates at least one token
    return True

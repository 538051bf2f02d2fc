"""Fitting conversation history and passages into the context window, and saying what was cut.

The prompt budget is ``n_ctx - max_tokens - the fixed part of the prompt``. History loses its oldest turns first
(the last user turn is always kept, cut at its head if it alone is too long); long agent turns are shortened before
that. Passages are first cut to a per-passage cap, then to an equal share of what is left; none is dropped, so a
ranking stage still sees every candidate. Every cut is returned as a note and logged: the configured caps on agent
turns and passages at INFO, anything forced by the context window at WARNING.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from local_rag.records import Turn

log = logging.getLogger("local_rag.llm.budget")

TokenCounter = Callable[[str], int]


@dataclass
class Cuts:
    """Notes on what a fit removed; empty when nothing was."""

    notes: list[str] = field(default_factory=list)

    def add(self, stage: str, note: str, level: int = logging.WARNING) -> None:
        self.notes.append(note)
        log.log(level, "%s: token budget: %s", stage, note)

    def __bool__(self) -> bool:
        return bool(self.notes)


def truncate(text: str, max_tokens: int, count: TokenCounter) -> str:
    """``text`` cut (at a word boundary, from the end) to at most ``max_tokens`` tokens by ``count``."""
    n = count(text)
    if n <= max_tokens:
        return text
    if max_tokens <= 0:
        return ""
    cut = text
    for _ in range(6):  # proportional cuts converge in a step or two; the loop bounds the tokenizer calls
        keep = max(1, int(len(cut) * max_tokens / max(n, 1) * 0.97))
        cut = cut[:keep]
        if " " in cut[keep // 2:]:
            cut = cut[: cut.rindex(" ")]
        n = count(cut)
        if n <= max_tokens:
            return cut + " …"
    return cut[: max_tokens] + " …"


def fit_turns(
    turns: list[Turn], budget: int, count: TokenCounter, max_agent_tokens: int = 0, stage: str = "", step: int = 1,
    level: int = logging.WARNING,
) -> tuple[list[Turn], Cuts]:
    """Keep the most recent turns that fit in ``budget`` tokens.

    Args:
        turns: the conversation, oldest first; its last user turn is always kept.
        budget: tokens available for the rendered turns.
        count: the model's token counter.
        max_agent_tokens: agent turns are first shortened to this (0 = no cap).
        stage: named in the log lines.
        step: the oldest turns are dropped so that the kept part starts at a multiple of ``step`` turns: the next
            turn of the conversation then often keeps the same start, so its prompt shares the history with this
            one as a prefix the KV cache reuses (1 = drop exactly what does not fit).
        level: of the note on dropped turns: INFO when ``budget`` is a configured cap on history (a long chat drops
            its oldest turns at every turn by design: a warning each turn was noise on a chat's screen), WARNING
            when the context window forced it.
    """
    cuts = Cuts()
    out = list(turns)
    if max_agent_tokens:
        shortened = 0
        for i, t in enumerate(out):
            if t.speaker == "agent" and count(t.text) > max_agent_tokens:
                out[i] = Turn(t.speaker, truncate(t.text, max_agent_tokens, count))
                shortened += 1
        if shortened:
            cuts.add(stage, f"shortened {shortened} agent turns to {max_agent_tokens} tokens", logging.INFO)
    sizes = [count(t.text) + 4 for t in out]  # + role label and separators
    dropped = 0
    while len(out) > 1 and sum(sizes) > budget:
        n = min(len(out) - 1, step - dropped % step if step > 1 else 1)
        del out[:n], sizes[:n]
        dropped += n
    if dropped:
        cuts.add(stage, f"dropped the {dropped} oldest of {len(turns)} turns", level)
    if out and sum(sizes) > budget:
        last = out[-1]
        out[-1] = Turn(last.speaker, truncate(last.text, max(budget - 4, 1), count))
        cuts.add(stage, f"cut the last turn from {sizes[-1] - 4} tokens to {max(budget - 4, 1)}")
    return out, cuts


def fit_passages(
    texts: list[str], budget: int, count: TokenCounter, max_each: int = 0, stage: str = ""
) -> tuple[list[str], Cuts]:
    """Cut each passage to ``max_each`` tokens, then all to an equal share of ``budget`` if they still do not fit."""
    cuts = Cuts()
    out = list(texts)
    if max_each:
        n_cut = 0
        for i, t in enumerate(out):
            if count(t) > max_each:
                out[i] = truncate(t, max_each, count)
                n_cut += 1
        if n_cut:
            cuts.add(stage, f"cut {n_cut} of {len(texts)} passages to {max_each} tokens each", logging.INFO)
    sizes = [count(t) + 6 for t in out]  # + the id label and separators
    if out and sum(sizes) > budget:
        share = max(budget // len(out) - 6, 8)
        out = [truncate(t, share, count) for t in out]
        cuts.add(stage, f"{len(out)} passages ({sum(sizes)} tokens) exceed the budget of {budget}: "
                        f"cut each to {share} tokens")
    return out, cuts

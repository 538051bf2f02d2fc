"""Loop guard: find where a reply has fallen into a loop, and keep one copy of it.

Greedy decoding with a small model can loop until ``max_tokens``: "[5] the appeal is not timely filed, [6] the appeal
is not timely filed, [7] ...". A backend checks the tail of the reply as it decodes (`cut_loop`), stops at the first
loop and keeps the reply up to one copy of the looping block, cut at the nearest line, sentence or clause break.

What counts as a loop:

- a block of 16 to 400 characters that ends the reply ``repeats`` times back to back (``llm.loop_repeats``), or
  twice when the block is 64 characters or more (two identical long stretches in a row are never prose);
- a shorter block of 8 to 15 characters with a word in it (a letter and a space) at its 8th copy in a row: "a passage
  is a passage is a passage is ..." (SmolLM2, session 37);
- compared exactly, except that citation markers (``[12]``) and list numbers at the start of a line (``12.``) count
  as one and the same symbol: a loop that numbers its copies is still a loop;
- the shortest repeating block decides, so a table rule (``|---|---|...``, ``|:-------|:-------|...``) or a run of
  dots is never a loop, and
  lines that differ in their figures ("Q1 revenue: $5.1 billion", "Q2 revenue: $5.3 billion") are not repeats.

Example:
    >>> cut_loop("Grounds: [1] late, [2] the fee is unpaid, [3] the fee is unpaid, [4] the fee is unpaid, [5] the", 3)
    'Grounds: [1] late, [2] the fee is unpaid,'
    >>> cut_loop("Grounds: [1] late, [2] the fee is unpaid, [3] the fee is unpaid,", 3) is None
    True
"""

from __future__ import annotations

import re

#: a looping block has at least, at most this many characters (a marker counts as one)
LOOP_CHARS = (16, 400)
#: a block at least this long is a loop at its second copy
LONG_LOOP = 64
#: a block this long (up to LOOP_CHARS' floor) is a loop at this many copies, when it holds a word
SHORT_LOOP, SHORT_COPIES = 8, 8
#: a copy ends at one of these when it can
BREAKS = "\n.!?;,"

_MARKER = re.compile(r"\[\d+\]|^[ \t]*\d+[.)]", re.MULTILINE)
_SAME = "\0"  # what every marker becomes


def units(text: str) -> tuple[list[str], list[int]]:
    """``text`` as a list of characters in which each citation marker or list number is one `_SAME` symbol, and the
    offset in ``text`` just after each unit."""
    out: list[str] = []
    ends: list[int] = []
    pos = 0
    for match in _MARKER.finditer(text):
        out.extend(text[pos:match.start()])
        ends.extend(range(pos + 1, match.start() + 1))
        out.append(_SAME)
        ends.append(match.end())
        pos = match.end()
    out.extend(text[pos:])
    ends.extend(range(pos + 1, len(text) + 1))
    return out, ends


def loop_period(seq: list[str], repeats: int) -> int | None:
    """The length of the shortest block that ends ``seq`` ``repeats`` times in a row (twice from `LONG_LOOP` on),
    when it is a loop (`LOOP_CHARS`); else None."""
    if repeats < 2:
        return None
    low, high = LOOP_CHARS
    for period in range(1, min(high, len(seq) // 2) + 1):
        copies = min(repeats, 2) if period >= LONG_LOOP else repeats
        if seq[-1] != seq[-1 - period]:  # a cheap filter before comparing blocks
            continue
        if _ends_in_copies(seq, period, copies):
            if period >= low:
                return period
            block = seq[-period:]
            wordy = any(c.isalpha() for c in block) and any(c.isspace() for c in block)
            short = period >= SHORT_LOOP and wordy and _ends_in_copies(seq, period, SHORT_COPIES)
            return period if short else None
    return None


def _ends_in_copies(seq: list[str], period: int, copies: int) -> bool:
    """Whether the last ``period`` units of ``seq`` end it ``copies`` times back to back."""
    block = seq[-period:]
    return period * copies <= len(seq) and all(seq[-(k + 1) * period:-k * period] == block for k in range(1, copies))


def cut_loop(text: str, repeats: int) -> str | None:
    """``text`` with the loop at its end kept once, or None when it does not end in a loop (see the module)."""
    seq, ends = units(text)
    period = loop_period(seq, repeats)
    if period is None:
        return None
    block = seq[-period:]  # a long block found at its second copy may itself be copies of a shorter one
    period = next(q for q in range(1, period + 1) if period % q == 0 and block == block[:q] * (period // q))
    start = len(seq) - period
    while start > 0 and seq[start - 1] == seq[start - 1 + period]:  # back to where the loop begins
        start -= 1
    target = start + period  # the end of the first copy; the loop may have begun mid-phrase, so aim for a break
    stops = [i + 1 for i in range(start, min(len(seq), target + period)) if seq[i] in BREAKS]
    end = min(stops, key=lambda stop: abs(stop - target), default=target)
    return text[:ends[end - 1]].rstrip()

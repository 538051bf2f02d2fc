"""Long sections of a person's documents cut into passage-sized pieces, at headings and paragraph breaks.

Retrieval ranks chunks and hands on passages, each scored by its best chunk (the MTRAG convention), so a passage is
also the unit of what the generator can get: one chunk per passage. MTRAG's passages are ~512 tokens; a Markdown,
text, HTML or Word file read whole is one passage however long it is, so on a folder of a few long files the top 5
were the best chunk of 5 files, never two parts of one. Measured on this repository's 13 docs files with 137
questions Qwen2.5-Coder-1.5B wrote for their chunks (session 35, `bash docs/benchmarks/pieces/run.sh`): the chunk a
question was written for was in the top 5 for 16.1% of them with one passage a file, 29.9% with these pieces (top 1:
10.9% against 17.5%); pieces of at most 1,000 or 2,000 characters did the same.

A section of at most ``split_above`` characters stays whole; a longer one is cut at its headings, then at paragraph
breaks (blank lines), and the parts are packed in order into pieces of at most ``target`` characters (a single
longer paragraph stays whole: the chunker windows it; a piece is not closed under ``min_chars``). A part of more than
`HUGE_CHARS` with no blank line (a log, a transcript, text hard-wrapped without paragraphs, one long line) is also cut
at its line breaks, and a line of more than that at spaces (or anywhere, in text without spaces): read whole, a 15 MB
text file of single lines was one passage that took 2.5 GB of memory to chunk (session 51).

Example:
    >>> text = "# A\\n" + "x" * 1200 + "\\n\\n# B\\n" + "y" * 1200 + "\\n"
    >>> piece_bounds(text, [(0, "A"), (1206, "B")])
    [(0, 1206), (1206, 2411)]
    >>> piece_bounds("short text", [])
    [(0, 10)]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TARGET_CHARS = 1500  # ~350-400 tokens: about two 256-token chunks, under MTRAG's 512-token passages
SPLIT_ABOVE_CHARS = 2000  # sections up to this long stay one passage (most pages, slides and short files)
MIN_CHARS = 300  # a piece is not closed shorter than this (a heading alone is no passage)
HUGE_CHARS = 10 * TARGET_CHARS  # a part without a blank line longer than this is cut at line breaks, then spaces
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_LINE_BREAK = re.compile(r"\n")


def piece_bounds(text: str, headings: Sequence[tuple[int, str]], target: int = TARGET_CHARS,
                 split_above: int = SPLIT_ABOVE_CHARS, min_chars: int = MIN_CHARS) -> list[tuple[int, int]]:
    """(start, end) character offsets of the pieces of ``text`` (``headings``: their offsets, as `Section` has them)."""
    if len(text) <= split_above:
        return [(0, len(text))]
    cuts = {0, len(text)}
    cuts.update(offset for offset, _ in headings if 0 < offset < len(text))
    cuts.update(m.end() for m in _PARAGRAPH_BREAK.finditer(text) if m.end() < len(text))
    for start, end in _spans(cuts):
        if end - start > HUGE_CHARS:
            lines = {m.end() for m in _LINE_BREAK.finditer(text, start, end) if m.end() < end}
            cuts |= lines
            cuts.update(cut for a, b in _spans(lines | {start, end}) if b - a > HUGE_CHARS
                        for cut in _space_cuts(text, a, b, target))
    parts = sorted(cuts)
    pieces: list[tuple[int, int]] = []
    start = 0
    for end, nxt in zip(parts[1:], parts[2:] + [None], strict=True):
        # close the piece here when the next part would take it past the target (and it is not too short)
        if nxt is None or (nxt - start > target and end - start >= min_chars):
            pieces.append((start, end))
            start = end
    return pieces


def _spans(cuts: set[int]) -> list[tuple[int, int]]:
    ordered = sorted(cuts)
    return list(zip(ordered, ordered[1:], strict=False))


def _space_cuts(text: str, start: int, end: int, target: int) -> list[int]:
    """Offsets in ``text[start:end]`` (one line longer than `HUGE_CHARS`) after the first space at or past every
    ``target`` characters; where there is no space (text without spaces), every ``target`` characters."""
    out = []
    position = start + target
    while position < end:
        space = text.find(" ", position, end)
        cut = space + 1 if space >= 0 else position
        if cut >= end:
            break
        out.append(cut)
        position = cut + target
    return out


def heading_at(offset: int, headings: Sequence[tuple[int, str]], default: str = "") -> str:
    """The heading in effect at ``offset``: the last one at or before it, else ``default``."""
    current = default
    for position, heading in headings:
        if position > offset:
            break
        current = heading
    return current

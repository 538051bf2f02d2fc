"""Citations for an answer that the model wrote without any: each sentence is attributed to the passage that
contains most of its content words (post-hoc attribution), when one contains at least ``min_share`` of them.

Small models often answer correctly from the passages and forget the ``[n]`` markers; a reader then cannot check the
answer. The added markers are counted apart (`Answer.attributed`), so reports can tell them from the model's own.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")
_STOP = frozenset(
    "the a an and or of to in on for with by from at as is are was were be been it its this that these those you your "
    "can will not no do does did has have had which what when where how who than then there their they them so if "
    "into over under about also more most such use used using".split()
)


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def sentences(text: str) -> list[str]:
    """The sentences `attribute` cites one by one.

    Example:
        >>> sentences("Writes go to a folder [1]. Then it renames.")
        ['Writes go to a folder [1].', 'Then it renames.']
    """
    return _SENTENCE.split(text.strip())


def attribute(text: str, passages: list[str], min_share: float = 0.5) -> tuple[str, list[int]]:
    """``text`` with ``[n]`` after each sentence that a passage supports, and the numbers used (1-based, in order).

    Example:
        >>> attribute("Writes go to a temporary folder. Then it renames.", ["a build writes a temporary folder", "x"])
        ('Writes go to a temporary folder [1]. Then it renames.', [1])
    """
    words = [content_words(p) for p in passages]
    out, used = [], []
    for sentence in sentences(text):
        mine = content_words(sentence)
        best, share = 0, 0.0
        for n, theirs in enumerate(words, start=1):
            if mine and len(mine & theirs) / len(mine) > share:
                best, share = n, len(mine & theirs) / len(mine)
        if best and share >= min_share:
            body, end = re.match(r"(.*?)([.!?]*)$", sentence, re.S).groups()  # type: ignore[union-attr]
            sentence = f"{body} [{best}]{end}"
            if best not in used:
                used.append(best)
        out.append(sentence)
    return " ".join(out), used

"""Sentences of a text, shared by the stages that read passages sentence by sentence (evidence compression, a
cross-encoder scoring a passage by its best sentence) and by training data built from them."""

from __future__ import annotations

import re
from collections.abc import Callable

TokenCounter = Callable[[str], int]

# a sentence ends at . ! ? (closing quotes or brackets may follow) before a space and an upper-case letter, digit,
# quote or bracket; a line break always ends one
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])|\s*\n+\s*")


def split_sentences(text: str, count: TokenCounter | None = None, max_tokens: int = 0) -> list[str]:
    """``text`` cut into sentences (whitespace tidied); with ``count`` and ``max_tokens``, longer ones are cut
    further at word boundaries (tables and lists often have no full stop).

    Example:
        >>> split_sentences("It rains. It pours!\\nUmbrellas (big ones) help.")
        ['It rains.', 'It pours!', 'Umbrellas (big ones) help.']
    """
    out: list[str] = []
    for part in _BOUNDARY.split(text):
        sentence = " ".join(part.split())
        if not sentence:
            continue
        if count is None or not max_tokens or count(sentence) <= max_tokens:
            out.append(sentence)
            continue
        words, piece = sentence.split(" "), list[str]()
        for word in words:
            if piece and count(" ".join([*piece, word])) > max_tokens:
                out.append(" ".join(piece))
                piece = []
            piece.append(word)
        if piece:
            out.append(" ".join(piece))
    return out

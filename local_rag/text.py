"""Sentences of a text, shared by the stages that read passages sentence by sentence (evidence compression, a
cross-encoder scoring a passage by its best sentence) and by training data built from them."""

from __future__ import annotations

import re
from collections.abc import Callable

TokenCounter = Callable[[str], int]

# a citation in an answer: "[2]" or "[1, 3]"; group 1 holds the numbers
CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")

# a sentence ends at . ! ? (closing quotes or brackets may follow) before a space and an upper-case letter, digit,
# quote or bracket; a line break always ends one
_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])")  # a sentence end within a line
_BOUNDARY = re.compile(_END.pattern + r"|\s*\n+\s*")
# a full stop after these ends no sentence: an initial ("Gordon D. Schaber") or a title ("Dr. Smith")
_NOT_AN_END = re.compile(r"(?:^|[\s(])(?:[A-Z]|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs)\.[\"')\]]*$")
# a line that ends with one of these words was cut mid-sentence (English; other text keeps its line breaks)
_OPEN_WORDS = frozenset("a an the of to and or nor but in on at for with by from as into than that per via".split())


# scripts written without spaces between words: Han (CJK ideographs), Hiragana, Katakana, Thai, Lao, Myanmar, Khmer
_UNSPACED = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]")


# what PDF text layers, word processors and web pages put inside words that is not a letter of them: typeset
# ligatures (U+FB00-FB06: "ﬁnancial" is not the word "financial" for BM25 or the embedder's tokenizer), soft
# hyphens (HTML ``&shy;``), zero-width spaces, word joiners and stray byte-order marks; ZWJ/ZWNJ (U+200C/D) stay:
# they are part of Persian, Indic and emoji spelling
_TYPESET = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                          "\ufb05": "st", "\ufb06": "st", "\u00ad": None, "\u200b": None, "\u2060": None,
                          "\ufeff": None})


def plain_letters(text: str) -> str:
    """``text`` with typeset ligatures spelt out and invisible characters inside words dropped.

    Example:
        >>> plain_letters("The \ufb01nancial of\ufb01ce: infor\u00admation")
        'The financial office: information'
    """
    return text.translate(_TYPESET)


def unspaced_share(text: str) -> float:
    """The share of the letters of ``text`` in scripts written without spaces between words (Chinese, Japanese,
    Thai, ...), where BM25's word tokens (runs of letters between spaces and punctuation) are whole phrases.

    Example:
        >>> unspaced_share("猫每天睡十二个小时。"), unspaced_share("Cats sleep."), unspaced_share("猫 cats")
        (1.0, 0.0, 0.2)
    """
    unspaced = len(_UNSPACED.findall(text))
    if not unspaced:  # most text: one scan in C, no count of letters
        return 0.0
    return unspaced / sum(ch.isalpha() for ch in text)


def wrapped_lines(text: str) -> list[str]:
    """The lines of ``text`` (whitespace tidied, blank ones dropped), a line joined to the one before it where a hard
    wrap cut a sentence: it starts with a lower-case letter, or the line before ends with a comma, semicolon,
    colon, opening bracket, ampersand, an initial or title ("D.", "Dr.") or one of a few English function words
    ("of the", "and a").

    Example:
        >>> wrapped_lines("Filing Fee\\nYou pay a\\nfee by: Check,\\nCash or\\nCard.\\nWhere?")
        ['Filing Fee', 'You pay a fee by: Check, Cash or Card.', 'Where?']
    """
    out: list[str] = []
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line:
            continue
        if out and (line[0].islower() or out[-1][-1] in ",;:(&" or out[-1].rsplit(" ", 1)[-1].lower() in _OPEN_WORDS
                    or _NOT_AN_END.search(out[-1])):
            out[-1] += " " + line
        else:
            out.append(line)
    return out


def _prose_sentences(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    for match in _END.finditer(line):
        if _NOT_AN_END.search(line[start : match.start()]):
            continue
        out.append(line[start : match.end()].rstrip())  # its closing quote or bracket kept
        start = match.end()
    out.append(line[start:])
    return out


def split_sentences(text: str, count: TokenCounter | None = None, max_tokens: int = 0, *,
                    join_wrapped: bool = False) -> list[str]:
    """``text`` cut into sentences (whitespace tidied); with ``count`` and ``max_tokens``, longer ones are cut
    further at word boundaries (tables and lists often have no full stop).

    With ``join_wrapped``, text hard-wrapped mid-sentence (web pages and PDFs often are) is read as prose: a line break
    ends a sentence only where the line could end one (see `wrapped_lines`), and an initial such as "D." or a title
    such as "Dr." never ends one.

    Example:
        >>> split_sentences("It rains. It pours!\\nUmbrellas (big ones) help.")
        ['It rains.', 'It pours!', 'Umbrellas (big ones) help.']
        >>> split_sentences("You pay a\\nfee at the\\nGordon D. Schaber Courthouse.\\nHours", join_wrapped=True)
        ['You pay a fee at the Gordon D. Schaber Courthouse.', 'Hours']
    """
    out: list[str] = []
    parts = _BOUNDARY.split(text) if not join_wrapped else [
        s for line in wrapped_lines(text) for s in _prose_sentences(line)]
    for part in parts:
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

"""What a reader is shown under an answer: its sources, one line per document place, in `ask`, `chat`, the demo and
the server's plain-text footer.

- The citations, or, for an answer that cites none, the passages it was written from (`Answer.sources`).
- Passages with the same label (pieces of one file under one heading) on one line: ``[1][3][4] Building an index
  (indexing.md)``, not three identical lines.
- A cited passage that shares no content word with any sentence citing it is marked: the model cited it for what it
  does not say ("The capital of France is Paris [1]" over a page about settings). The answer is not changed: this
  is what the reader is told, not a check of the answer.

Example:
    >>> from local_rag.records import Answer, Hit
    >>> hits = [Hit("a.md#s0", 1.0, title="Keys", text="Rotate the keys every 90 days.", doc_id="a.md")]
    >>> [s.numbers for s in source_lines(Answer("Keys rotate every 90 days [1].", passages=hits,
    ...                                         citations=[Citation.of(1, hits[0])]))[1]]
    [[1]]
"""

from __future__ import annotations

from typing import NamedTuple

from local_rag.llm.attribute import content_words, sentences
from local_rag.records import Answer, Citation
from local_rag.text import CITATION

UNCITED = "the answer cites no passage; it was written from these"
BASELESS = "cited, but no word of the sentence citing it is in this passage"


class SourceLine(NamedTuple):
    numbers: list[int]  # the passages' numbers in the prompt, as the answer cites them
    label: str  # `Citation.label`: title and where (file, page, section)
    url: str
    baseless: bool  # cited, and no sentence citing it shares a content word with it


def baseless(answer: Answer) -> set[int]:
    """The cited numbers whose passage shares no content word with any sentence of ``answer`` that cites it."""
    texts = {n: content_words(hit.text) for n, hit in enumerate(answer.passages, 1)}
    said: dict[int, set[str]] = {}
    for sentence in sentences(answer.text):
        words = content_words(CITATION.sub(" ", sentence))
        for match in CITATION.finditer(sentence):
            for n in (int(x) for x in match.group(1).split(",")):
                said.setdefault(n, set()).update(words)
    return {n for n, words in said.items() if n in texts and words and not words & texts[n]}


def page_link(url: str, page: int) -> str:
    """A PDF file's link at the cited page (``#page=12``: browsers' and most PDF viewers' own anchor), so that a
    click in the terminal or the chat client opens the page the answer came from; other links as they are.

    Example:
        >>> page_link("file:///home/me/docs/report.pdf", 12), page_link("file:///home/me/notes.md", 0)
        ('file:///home/me/docs/report.pdf#page=12', 'file:///home/me/notes.md')
    """
    if page and url.lower().endswith(".pdf") and "#" not in url:
        return f"{url}#page={page}"
    return url


def source_lines(answer: Answer) -> tuple[str, list[SourceLine]]:
    """(a heading for passages listed though uncited, or ""; the lines, one per distinct label, in order)."""
    citations: list[Citation]
    citations, cited = answer.sources()
    marked = baseless(answer) if cited else set()
    lines: dict[tuple[str, str], SourceLine] = {}
    for c in citations:
        key = (c.label, page_link(c.url, c.page))
        if key in lines:
            lines[key].numbers.append(c.n)
            lines[key] = lines[key]._replace(baseless=lines[key].baseless and c.n in marked)
        else:
            lines[key] = SourceLine([c.n], c.label, key[1], c.n in marked)
    heading = f"{UNCITED} {len(citations)}" if len(citations) > 1 else "the answer cites no passage; it was written from this one"
    return ("" if cited or not citations else heading), list(lines.values())


def numbers(line: SourceLine) -> str:
    """``[1]`` or ``[1][3][4]``."""
    return "".join(f"[{n}]" for n in line.numbers)


def line_text(line: SourceLine, angled: bool = True) -> str:
    """One source as plain text: ``[1][3] Title (file.md) <file:///...> (cited, but ...)``; ``angled`` off: the link
    bare (the server's footer, which clients turn into a link themselves).

    Example:
        >>> line_text(SourceLine([2], "Keys (a.md)", "file:///a.md", False), angled=False)
        '[2] Keys (a.md) file:///a.md'
    """
    link = (f" <{line.url}>" if angled else f" {line.url}") if line.url else ""
    return f"{numbers(line)} {line.label}{link}" + (f" ({BASELESS})" if line.baseless else "")


__all__ = ["BASELESS", "UNCITED", "SourceLine", "baseless", "line_text", "numbers", "page_link", "source_lines"]

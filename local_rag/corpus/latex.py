"""LaTeX sources (``.tex``: a paper's or a thesis's drafts, an Overleaf project downloaded): read at their sectioning
commands (``\\chapter``, ``\\section``, ``\\subsection`` ...: Markdown headings), ``\\title`` the title, the rest turned
into the text it typesets by pylatexenc (the ``docs`` extra): accents and symbols as characters, math as Unicode where
it can be (``$\\tau = 40\\,ms$`` "τ = 40 ms"), lists as bullets, comments and the preamble left out. A citation keeps its
keys ("[smith2020]"), which name the work cited; ``\\maketitle`` is dropped (pylatexenc would print today's date).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.corpus.sections import Document, UnreadableFile, decode_text, markdown_document, meaningful_name

__all__ = ["read_latex"]

_LEVELS = {"part": 1, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4, "paragraph": 5}
_SECTIONING = re.compile(r"\\(part|chapter|section|subsection|subsubsection|paragraph)\*?\s*(?:\[[^\]]*\])?\s*\{")
_COMMENT = re.compile(r"(?<!\\)%.*")
_CITE = re.compile(r"~?\\(?:cite|citep|citet|parencite|textcite|autocite)\*?(?:\[[^\]]*\]){0,2}\{([^}]*)\}")
_DROPPED = re.compile(r"\\(?:maketitle|tableofcontents|listoffigures|listoftables|printbibliography|clearpage|newpage)\b"
                      r"|\\(?:bibliography|bibliographystyle|label)\{[^}]*\}"
                      r"|\\(?:input|include|includeonly)\b(?:\s*\{[^}]*\})?")  # the files it inputs are read as their own


def read_latex(path: Path) -> Document:
    """A LaTeX file, a Markdown heading for each sectioning command, its text as typeset.

    Raises:
        UnreadableFile: no text once typeset (a file of macros only).
    """
    source, encoding = decode_text(path.read_bytes())
    source = "\n".join(_COMMENT.sub("", line) for line in source.splitlines())
    title = _argument(source, "title")
    body = source
    begin, end = source.find("\\begin{document}"), source.find("\\end{document}")
    if begin >= 0:
        body = source[begin + len("\\begin{document}"):end if end > begin else None]
    body = _CITE.sub(lambda m: " [" + ", ".join(k.strip() for k in m.group(1).split(",")) + "]", _DROPPED.sub("", body))
    converter = require("pylatexenc.latex2text", "reading LaTeX files (.tex)").LatexNodes2Text()
    logging.getLogger("pylatexenc").setLevel(logging.ERROR)  # its notes on odd macros ("\input" without argument) went to the console
    parts = []
    position = 0
    for found in _SECTIONING.finditer(body):
        if found.start() < position:
            continue  # a sectioning command inside the title of another
        heading, after = _braced(body, found.end())
        parts.append(_typeset(converter, body[position:found.start()]))
        parts.append("#" * _LEVELS[found.group(1)] + " " + " ".join(_typeset(converter, heading).split()))
        position = after
    parts.append(_typeset(converter, body[position:]))
    text = re.sub(r"\n{3,}", "\n\n", "\n\n".join(p.strip() for p in parts if p.strip())).strip()
    if not text:
        raise UnreadableFile("no text once typeset (a file of macros only)")
    shown = " ".join(_typeset(converter, title).split()) if title else ""
    document = markdown_document(text, path.stem, shown or (path.stem if meaningful_name(path.stem) else ""))
    document.encoding = encoding
    return document


def _typeset(converter: Any, latex: str) -> str:
    """The text ``latex`` typesets, a tie (``~``, typeset as a no-break space) a space."""
    return str(converter.latex_to_text(latex)).replace("\xa0", " ")


def _argument(source: str, command: str) -> str:
    """The braced argument of the first ``\\command{...}`` in ``source`` (braces nested), or ""."""
    found = re.search(rf"\\{command}\s*(?:\[[^\]]*\])?\s*\{{", source)
    return _braced(source, found.end())[0] if found else ""


def _braced(text: str, start: int) -> tuple[str, int]:
    """(the text up to the brace that closes the one opened just before ``start``, the offset after it).

    Example:
        >>> _braced("{Valve {timing}} rest", 1)
        ('Valve {timing}', 16)
    """
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "{" and text[i - 1] != "\\":
            depth += 1
        elif text[i] == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start:i], i + 1
    return text[start:], len(text)

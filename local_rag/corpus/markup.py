"""Headings of the plain-text markups of software documentation: reStructuredText (Sphinx: ``.rst``) and AsciiDoc
(Antora, Asciidoctor: ``.adoc``). Before, a Sphinx or Antora docs folder was skipped whole ("note: 40 file(s) of
.rst skipped"; "no ... files found" when it held nothing else).

Example:
    >>> rst_headings("Install\\n=======\\n\\nRun pip.\\n\\nUpgrade\\n-------\\nRun it again.")
    [(0, 'Install'), (27, 'Upgrade')]
    >>> asciidoc_heading("== Upgrade"), asciidoc_heading("====")
    ('Upgrade', None)
"""

from __future__ import annotations

import re

_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:._])\1{2,}\s*$")  # a line of one repeated punctuation mark, 3 or more
_ADOC_HEADING = re.compile(r"^(={1,6}|#{1,6}) (\S.*?)\s*$")


def rst_headings(text: str) -> list[tuple[int, str]]:
    """(offset, heading) of each reStructuredText section title: a line of text under (and maybe over) a line of one
    repeated punctuation mark at least as long; an indented line (a literal block's, after ``::``) is none."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines(keepends=True)
    offset = 0
    for i, line in enumerate(lines):
        title = line.strip()
        under = lines[i + 1].rstrip() if i + 1 < len(lines) else ""
        if (title and not _ADORNMENT.match(title) and not line[0].isspace() and _ADORNMENT.match(under)
                and len(under) >= len(title)):
            out.append((offset, title))
        offset += len(line)
    return out


def asciidoc_heading(line: str) -> str | None:
    """The title of an AsciiDoc section line (``== Upgrade``; ``=`` is the document title), else None."""
    match = _ADOC_HEADING.match(line)
    return match.group(2) if match else None

"""Org-mode files (``.org``: Emacs notes, org-roam, Logseq's org pages, Orgzly on a phone) as the Markdown the
document readers already cut at headings: ``* Heading`` a ``#`` heading (a TODO keyword kept, priority cookie and tags
dropped), ``#+TITLE:`` the title, property and logbook drawers, clocked times and other ``#+KEYWORD:`` lines left out, source
blocks fenced code, links their description (and a web address after it), comment lines dropped. Before, an Org
notes folder was skipped whole ("note: 300 file(s) of .org skipped").

Example:
    >>> title, text = org_markdown("#+TITLE: Pumps\\n* TODO [#A] Replace pump 4 :work:\\nSCHEDULED: <2025-11-03 Mon>\\n"
    ...                            ":PROPERTIES:\\n:ID: 42\\n:END:\\nSee [[https://wiki/p4][the runbook]].")
    >>> title
    'Pumps'
    >>> print(text)
    # TODO Replace pump 4
    SCHEDULED: <2025-11-03 Mon>
    See the runbook (https://wiki/p4).
"""

from __future__ import annotations

import re

__all__ = ["org_markdown"]

_HEADING = re.compile(r"^(\*+)\s+(?:\[#[A-Z0-9]\]\s+)?(.*?)(?:\s+(:[\w@#%:]+:))?\s*$")
_PRIORITY = re.compile(r"^((?:TODO|DONE|NEXT|WAITING|HOLD|CANCELLED|CANCELED)\s+)\[#[A-Z0-9]\]\s+")
_DRAWER = re.compile(r"^\s*:([A-Za-z_-]+):\s*$")
_KEYWORD = re.compile(r"^\s*#\+(\w+)(?:\[.*?\])?:\s*(.*)$")
_BLOCK = re.compile(r"^\s*#\+(BEGIN|END)_(\w+)\s*(.*)$", re.IGNORECASE)
_LINK = re.compile(r"\[\[([^\]]+)\](?:\[([^\]]*)\])?\]")


def org_markdown(text: str) -> tuple[str, str]:
    """(the ``#+TITLE:``, or "", and the text as Markdown) of an Org file."""
    title = ""
    out: list[str] = []
    drawer = False
    block = ""  # the kind of block we are in: "SRC", "EXAMPLE", "QUOTE", ... ("" outside)
    for line in text.splitlines():
        found = _BLOCK.match(line)
        if found is not None:
            begin, kind = found.group(1).upper() == "BEGIN", found.group(2).upper()
            if begin and not block:
                block = kind
                if kind in ("SRC", "EXAMPLE"):
                    language = found.group(3).split()[0] if kind == "SRC" and found.group(3).split() else ""
                    out.append(f"```{language}")
                continue
            if not begin and kind == block:
                if block in ("SRC", "EXAMPLE"):
                    out.append("```")
                block = ""
                continue
        if block in ("SRC", "EXAMPLE"):
            out.append(line)
            continue
        if drawer:
            drawer = line.strip().upper() != ":END:"
            continue
        drawn = _DRAWER.match(line)
        if drawn is not None and drawn.group(1).upper() != "END":
            drawer = True
            continue
        keyword = _KEYWORD.match(line)
        if keyword is not None:
            if keyword.group(1).upper() == "TITLE" and not title:
                title = keyword.group(2).strip()
            continue
        if re.match(r"^\s*#(\s|$)", line) or re.match(r"^\s*CLOCK:", line):
            continue  # a comment line; a clocked time outside a logbook
        heading = _HEADING.match(line)
        if heading is not None:
            words = _PRIORITY.sub(r"\1", heading.group(2))
            out.append(f"{'#' * min(len(heading.group(1)), 6)} {_links(words)}")
            continue
        out.append(_links(line))
    return title, re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _links(line: str) -> str:
    """Org links as they read: ``[[https://x][the runbook]]`` "the runbook (https://x)", ``[[file:a.org][A]]`` "A",
    ``[[https://x]]`` the address."""
    def link(match: re.Match[str]) -> str:
        target, label = match.group(1), match.group(2)
        web = target.startswith(("http://", "https://", "mailto:"))
        if not label:
            return target.removeprefix("file:").removeprefix("mailto:")
        return f"{label} ({target.removeprefix('mailto:')})" if web and label != target else label

    return _LINK.sub(link, line)

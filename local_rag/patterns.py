"""Patterns that name documents by their path: ``--only`` (`local_rag.retrieve.scope`) and ``--exclude`` (the files an
index build, add or sync leaves out).

A pattern names a document (a file's path inside the indexed folder, ``reports/2024/q3.pdf``, or a document id) when
it is that path, a folder of it (``reports/2024``, ``reports/2024/``), or a shell-style pattern over the whole path
(``*.pdf``, ``reports/*/q?.pdf``; ``*`` crosses folders), all without regard to case.

Example:
    >>> [matches(d, "reports/2024") for d in ("reports/2024/q3.pdf", "reports/2023/q3.pdf")]
    [True, False]
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path


def norm(text: str) -> str:
    """A path or pattern compared without regard to case, separators as ``/``, no leading or trailing ``/``."""
    return text.replace("\\", "/").strip().strip("/").casefold()


def matches(doc_id: str, pattern: str) -> bool:
    """Whether ``pattern`` names the document ``doc_id``: it is the id or a folder of it, or it matches, as a
    shell-style pattern, the id or a folder of it.

    Example:
        >>> matches("guide/install.md", "guide"), matches("guide/install.md", "*.MD"), matches("guide.md", "guide")
        (True, True, False)
        >>> matches("reports/2024/q1.md", "reports/202?"), matches("src/build/x.md", "*/build")
        (True, True)
    """
    doc, pat = norm(doc_id), norm(pattern)
    if not pat:
        return False
    if doc == pat or doc.startswith(pat + "/") or fnmatch.fnmatchcase(doc, pat):
        return True
    if not any(c in pat for c in "*?["):
        return False
    parts = doc.split("/")
    return any(fnmatch.fnmatchcase("/".join(parts[:i]), pat) for i in range(1, len(parts)))


def matches_any(doc_id: str, patterns: Iterable[str]) -> bool:
    return any(matches(doc_id, p) for p in patterns)


def patterns_of(values: Iterable[str]) -> tuple[str, ...]:
    """Patterns from options or a request: blanks dropped, comma-separated lists split (``--only "a/*,b.md"``)."""
    return tuple(p.strip() for value in values for p in str(value).split(",") if p.strip())


def ignore_file_patterns(text: str) -> tuple[list[str], list[str]]:
    """The patterns of a ``.gitignore``-style file (``--exclude-from``), in `matches`'s terms, and the lines they
    cannot say (a negation ``!keep.md``): a name without a slash matches at any depth (``build`` -> ``build``,
    ``*/build``), a leading slash anchors at the top; comments and blank lines are skipped.

    Example:
        >>> ignore_file_patterns("# build output\\nbuild/\\n/drafts\\n*.log\\ndocs/old\\n!keep.log\\n")
        (['build', '*/build', 'drafts', '*.log', 'docs/old'], ['!keep.log'])
    """
    patterns: list[str] = []
    unsaid: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("!"):
            unsaid.append(line)
            continue
        line = line.rstrip("/")
        if line.startswith("/") or "/" in line:
            patterns.append(line.lstrip("/"))
        elif line.startswith("*"):  # ``*`` crosses folders already
            patterns.append(line)
        else:
            patterns += [line, f"*/{line}"]
    return list(dict.fromkeys(p for p in patterns if p)), unsaid


def in_folder(pattern: str, source: str) -> str:
    """``pattern`` as a path inside the indexed folder ``source`` (the manifest's ``corpus_source``), for a user who
    names a file as the shell shows it: ``docs/setup.md`` or ``/home/me/docs/setup.md`` for ``setup.md`` of an index of
    ``docs``; else ``pattern`` unchanged.

    Example:
        >>> in_folder("docs/setup.md", "docs"), in_folder("./docs/guide/", "./docs"), in_folder("setup.md", "docs")
        ('setup.md', 'guide', 'setup.md')
    """
    path, base = norm(pattern).removeprefix("./"), norm(source).removeprefix("./")
    if not base:
        return pattern
    if path.startswith(base + "/"):
        return path[len(base) + 1 :]
    try:
        inside = Path(pattern).expanduser().resolve().relative_to(Path(source).expanduser().resolve())
    except (ValueError, OSError, RuntimeError):
        return pattern
    return inside.as_posix() if inside.parts else "*"  # the folder itself: all of it

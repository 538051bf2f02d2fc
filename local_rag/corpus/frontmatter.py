"""A Markdown file's front matter: the YAML (``---``) or TOML (``+++``) block that Obsidian, Jekyll, Hugo, MkDocs and
Docusaurus put at the top of a note or page.

Before, the block was indexed as text (``title: "Rotating API keys"``, ``date: ...``, in every first chunk) and the
title came from the file name (``2024-03-01-rotating-keys``). Now its ``title`` is the document's title, its
``description`` (or ``summary``) opens the text, its ``tags`` (or ``keywords``) follow as one line, and the rest
(dates, layouts, ids) is left out. A block that does not parse, or is not a mapping, is left as text.

Example:
    >>> split_front_matter('---\\ntitle: Keys\\ntags: [ops]\\n---\\nRotate them.')
    ('Keys', 'Tags: ops\\n\\nRotate them.')
    >>> split_front_matter('No front matter.')
    ('', 'No front matter.')
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

import yaml

# the block: its fence, then anything up to a line holding the same fence (YAML may also end with "...")
_BLOCK = re.compile(r"\A(---|\+\+\+)[ \t]*\r?\n(.*?)\r?\n(?:\1|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
MAX_CHARS = 20_000  # a longer block is not front matter (a document that opens with a rule)


def _parse(fence: str, block: str) -> dict[str, Any] | None:
    try:
        data = yaml.safe_load(block) if fence == "---" else tomllib.loads(block)
    except (yaml.YAMLError, tomllib.TOMLDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _words(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return ", ".join(str(v).strip() for v in value if isinstance(v, str | int | float) and str(v).strip())
    return ""


def split_front_matter(text: str) -> tuple[str, str]:
    """(the title the front matter gives, or ""; the text without the block, its description and tags first)."""
    match = _BLOCK.match(text)
    if not match or len(match.group(2)) > MAX_CHARS:
        return "", text
    meta = _parse(match.group(1), match.group(2))
    if meta is None:
        return "", text
    lead = [_words(meta.get("description") or meta.get("summary"))]
    tags = _words(meta.get("tags") or meta.get("keywords"))
    lead.append(f"Tags: {tags}" if tags else "")
    body = text[match.end():].strip()
    return _words(meta.get("title"))[:200], "\n\n".join(part for part in [*lead, body] if part)

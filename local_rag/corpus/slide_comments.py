"""The review comments on a PowerPoint presentation's slides (``.pptx``): the comments of PowerPoint 2007-2019 and
Microsoft 365's threaded ones with their replies, parts of the package python-pptx opens but has no API for. Each is
a line after its slide's text and notes, "Comment (Ana Silva): move the chart to the appendix" (`comment_line`)."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

from local_rag.corpus.sections import comment_line

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_P188 = "{http://schemas.microsoft.com/office/powerpoint/2018/8/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
MAX_PART = 50 << 20  # a comments part larger than this is not read


def comment_authors(presentation_part: Any) -> dict[str, str]:
    """The names of the presentation's comment authors, by id: ``commentAuthors.xml`` (PowerPoint 2007-2019, ids
    "0", "1"...) and ``authors.xml`` (Microsoft 365, GUIDs); {} when there are none or they cannot be read."""
    names: dict[str, str] = {}
    for root in _related(presentation_part, ("/commentAuthors", "/authors")):
        for author in [*root.iter(f"{_P}cmAuthor"), *root.iter(f"{_P188}author")]:
            names[author.get("id", "")] = author.get("name", "")
    return names


def slide_comments(slide_part: Any, authors: dict[str, str]) -> list[str]:
    """A line for each comment on a slide, a reply after the comment it answers; [] when it has none, or when its
    comments cannot be read (the slide's text is read alone)."""
    said: list[tuple[str, str]] = []  # (author id, text)
    for root in _related(slide_part, ("/comments",)):
        for note in root.iter(f"{_P}cm"):  # PowerPoint 2007-2019: p:cm, its text in p:text
            said.append((note.get("authorId", ""), _words(note.find(f"{_P}text"))))
        for note in root.iter(f"{_P188}cm"):  # Microsoft 365: p188:cm, replies in p188:replyLst
            said += [(e.get("authorId", ""), _body(e)) for e in [note, *note.iter(f"{_P188}reply")]]
    return [comment_line(authors.get(who, ""), text) for who, text in said if text]


def _body(element: ElementTree.Element) -> str:
    """A modern comment's or reply's own text: the paragraphs of its ``p188:txBody`` (not its replies')."""
    body = element.find(f"{_P188}txBody")
    return " ".join(_words(p) for p in body.iter(f"{_A}p")) if body is not None else ""


def _words(element: ElementTree.Element | None) -> str:
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def _related(part: Any, kinds: tuple[str, ...]) -> list[ElementTree.Element]:
    """The parsed parts ``part`` relates to by a relationship type ending in one of ``kinds``; a part that cannot be
    read is left out."""
    roots = []
    for rel in part.rels.values():
        if rel.is_external or not rel.reltype.endswith(kinds):
            continue
        try:
            blob = rel.target_part.blob
            if len(blob) <= MAX_PART:
                roots.append(ElementTree.fromstring(blob))
        except (ElementTree.ParseError, ValueError, KeyError, AttributeError):
            continue
    return roots

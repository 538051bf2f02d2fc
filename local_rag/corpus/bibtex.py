"""BibTeX bibliographies (``.bib``: a LaTeX project's references, a Zotero or JabRef library exported, often with the
abstracts): an entry a section, headed by its citation key, as a reference list writes it, then its abstract,
keywords and notes. A LaTeX file's citations read as their keys ("[smith2020]", `local_rag.corpus.latex`), so the key
leads from a sentence of the paper to the work it cites, and "which paper in my library studies pump seals?" finds
the abstract that does. Parsed by pybtex (string macros, ``@comment``, damaged entries skipped with a note); LaTeX in
the fields typeset by pylatexenc (accents, ``\\emph``, braces), both in the ``docs`` extra.

Example:
    >>> document = read_bibtex_text('@article{smith2020, author = {M{\\\\"u}ller, Ana and Ben Okafor}, title = '
    ...                             '{Seal wear in {N}orth pumps}, journal = {Pump Journal}, year = 2020, volume = 4,'
    ...                             ' pages = {11--19}, abstract = {We measured seal wear.}}', "refs")
    >>> [s.heading for s in document.sections]
    ['smith2020']
    >>> print(document.sections[0].text)
    Ana Müller, Ben Okafor (2020). Seal wear in North pumps. Pump Journal 4, 11–19. [article smith2020]
    Abstract: We measured seal wear.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.corpus.sections import Document, Section, UnreadableFile, decode_text, meaningful_name

__all__ = ["read_bibtex", "read_bibtex_text"]

# what a reference list shows of an entry, after its authors, year and title: where it appeared
_CONTAINER = ("journal", "booktitle", "series", "school", "institution", "organization", "publisher", "howpublished")
# what follows it, a line each, under these names
_MORE = (("abstract", "Abstract"), ("keywords", "Keywords"), ("note", "Note"), ("annote", "Annotation"),
         ("annotation", "Annotation"))
_SHOWN = ("year", "title", *_CONTAINER, "volume", "number", "pages", "doi", *(name for name, _ in _MORE))
_LATEX = re.compile(r"[\\{}$~%&^_]|--|``|''")  # what pylatexenc would typeset differently


def read_bibtex(path: Path) -> Document:
    """A ``.bib`` file (see the module).

    Raises:
        UnreadableFile: no entry could be read.
    """
    text, encoding = decode_text(path.read_bytes())
    document = read_bibtex_text(text, path.stem)
    document.encoding = encoding
    return document


def read_bibtex_text(text: str, name: str) -> Document:
    """The entries of a bibliography's ``text``, titled by ``name`` (a file's stem) when it means something."""
    require("pybtex", "reading BibTeX files (.bib)")  # missing: one line naming the docs extra
    from pybtex import database
    from pybtex import errors as errors_module

    converter = require("pylatexenc.latex2text", "reading BibTeX files (.bib)").LatexNodes2Text()
    logging.getLogger("pylatexenc").setLevel(logging.ERROR)
    with errors_module.capture() as problems:  # a damaged or duplicate entry: skipped and counted, not printed
        try:
            parsed = database.parse_string(text, "bibtex")
        except Exception as exc:  # noqa: BLE001 - pybtex's PybtexError and its parser's own failures
            raise UnreadableFile(f"not a BibTeX file pybtex can read ({exc})") from exc
    sections = [Section(_entry(key, entry, converter), heading=key) for key, entry in parsed.entries.items()]
    if not sections:
        raise UnreadableFile("no BibTeX entry in it" + (f" ({problems[0]})" if problems else ""))
    notes = [f"{len(problems)} problem(s) in the file, its entries skipped where damaged (first: {problems[0]})"] \
        if problems else []
    return Document(name if meaningful_name(name) else "Bibliography", sections, pages=len(sections), notes=notes)


def _entry(key: str, entry: Any, converter: Any) -> str:
    """An entry as a reference list writes it: "Ana Müller, Ben Okafor (2020). Title. Journal 4(2), 11–19.
    Publisher. doi:... [article smith2020]", then its abstract, keywords and notes a line each."""
    fields = {name.lower(): value for name, value in entry.fields.items()}
    fields = {name: _typeset(converter, fields[name]) for name in _SHOWN if fields.get(name)}  # the rest unread
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = ", ".join(_person(converter, person) for person in people)
    if not entry.persons.get("author") and people:
        names += " (ed.)"
    head = names + (f" ({fields['year']})" if fields.get("year") else "")
    where = next((fields[k] for k in _CONTAINER if fields.get(k)), "")
    if fields.get("volume"):
        where += f" {fields['volume']}" + (f"({fields['number']})" if fields.get("number") else "")
    if fields.get("pages"):
        where += f", {fields['pages']}"
    parts = [head, fields.get("title", ""), where.strip(" ,"), f"doi:{fields['doi']}" if fields.get("doi") else ""]
    line = ". ".join(p.rstrip(".") for p in parts if p) + f". [{entry.type} {key}]"
    more = [f"{label}: {fields[name]}" for name, label in _MORE if fields.get(name)]
    return "\n".join([line, *more])


def _person(converter: Any, person: Any) -> str:
    """A name as written in running text ("Ana Müller", "Ludwig van Beethoven")."""
    parts = [*person.first_names, *person.middle_names, *person.prelast_names, *person.last_names,
             *person.lineage_names]
    return _typeset(converter, " ".join(parts))


def _typeset(converter: Any, latex: str) -> str:
    """A field's LaTeX as the text it typesets, on one line ("{N}orth" -> "North", "11--19" -> "11–19"); a field
    with nothing LaTeX would change as it is (most are: pylatexenc's parse is most of a large library's read)."""
    if not _LATEX.search(latex):
        return " ".join(latex.split())
    try:
        text = str(converter.latex_to_text(latex))
    except Exception:  # noqa: BLE001 - pylatexenc on malformed LaTeX: the field as written, braces dropped
        text = re.sub(r"[{}]", "", latex)
    return " ".join(text.replace("\xa0", " ").split())

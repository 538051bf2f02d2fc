"""A Kindle's ``My Clippings.txt`` (in the ``documents`` folder of a Kindle plugged in by USB): every highlight,
note and bookmark made on the device, a block each, in the order they were made, books mixed::

    1984 (Orwell, George)
    - Your Highlight on page 41 | location 737-738 | Added on Saturday, 9 September 2017 13:27:09

    Don't you see that the whole aim of Newspeak is to narrow the range of thought?
    ==========

Read as plain text, the file was one run of lines whose passages mixed books, a passage cited as "My Clippings".
Now (`is_clippings`) it is a document with a section a book, headed by its title line ("1984 (Orwell, George)"), in
the order the books were first read; a highlight a paragraph with its place and day as the Kindle wrote them, in
the device's language ("Your Highlight on page 41, location 737-738, Added on ..."), then the day as the other
documents write theirs ("; 9 Sep 2017", where the language's month names are known: `_day`), a note a paragraph
"Note: ...".
A highlight the Kindle kept when it was later extended (its text inside a later highlight of the same book) and
bookmarks (no text) are left out.

Example:
    >>> document = read_clippings(
    ...     "1984 (Orwell, George)\\n- Your Highlight on page 41 | location 737-738 | Added on Saturday, 9 September"
    ...     " 2017 13:27:00\\n\\nthe whole aim of Newspeak\\n==========\\n1984 (Orwell, George)\\n- Your Highlight on"
    ...     " page 41 | location 737-739 | Added on Saturday, 9 September 2017 13:27:09\\n\\nDon't you see that the whole"
    ...     " aim of Newspeak is to narrow the range of thought?\\n==========\\n", "My Clippings")
    >>> document.title, [s.heading for s in document.sections]
    ('Kindle highlights', ['1984 (Orwell, George)'])
    >>> print(document.sections[0].text)
    Don't you see that the whole aim of Newspeak is to narrow the range of thought?
    (Your Highlight on page 41, location 737-739, Added on Saturday, 9 September 2017 13:27:09; 9 Sep 2017)
"""

from __future__ import annotations

import re
from datetime import date

from local_rag.corpus.sections import Document, Section, day_name

__all__ = ["is_clippings", "read_clippings"]

_SEPARATOR = re.compile(r"^={10}\s*$", re.MULTILINE)
_META = re.compile(r"^-\s*\S.*\|")  # "- Your Highlight on page 41 | location 737-738 | Added on ..."
# the Kindle's own message where a highlight went past the publisher's clipping limit, in angle brackets in every
# language ("<You have reached the clipping limit for this item>")
_KINDLE_SAYS = re.compile(r"^<[^<>\n]+>$")
# a note's kind in the device's languages (Kindle's own words: "Your Note", "Votre note", "Ihre Notiz", "La nota",
# "Je notitie", "A sua nota", "Ваша заметка", "メモ", "笔记")
_NOTE = re.compile(r"\b(?:note|notiz|nota|notitie|заметка)\b|メモ|笔记|筆記", re.IGNORECASE)


def is_clippings(text: str) -> bool:
    """The text is a Kindle's clippings: most of its first blocks (each ending with a line of ten '=') are a title
    line, then a line "- ... | ...".

    Example:
        >>> is_clippings("1984 (Orwell, George)\\n- Your Highlight on page 41 | Added on ...\\n\\nText\\n==========\\n")
        True
        >>> is_clippings("Minutes\\n- Ana | Ben\\n")
        False
    """
    blocks = _SEPARATOR.split(text[:20000])[:-1][:5]  # the first five blocks that end with the separator
    return bool(blocks) and sum(_clipping_lines(b) is not None for b in blocks) * 2 > len(blocks)


def _clipping_lines(block: str) -> list[str] | None:
    """The lines of a clipping's block (a title line, then a line "- ... | ...", then its text), BOMs dropped; None
    for a block of another form (one damaged block does not make the file plain text)."""
    lines = [line.lstrip("\ufeff") for line in block.strip("\ufeff\r\n ").splitlines()]
    return lines if len(lines) >= 2 and lines[0].strip() and _META.match(lines[1]) is not None else None


def read_clippings(text: str, name: str) -> Document:
    """The clippings' books as sections (see the module); titled "Kindle highlights" when the file is Kindle's own
    ``My Clippings``, else by ``name``."""
    books: dict[str, list[tuple[str, str, set[int]]]] = {}  # title line -> (meta, text, places) in the file's order
    odd = 0  # blocks with text not in a clipping's form (a damaged file): named, not read
    for block in _SEPARATOR.split(text):
        lines = _clipping_lines(block)
        if lines is None:
            odd += bool(block.strip("\ufeff\r\n\t "))
            continue
        body = "\n".join(lines[2:]).strip()
        if not body or _KINDLE_SAYS.match(body):
            continue  # a bookmark, or the Kindle's own words in place of a highlight past the publisher's limit
        meta = lines[1].removeprefix("-").strip()
        made = _day(meta.split(" | ")[-1])
        shown = meta.replace(" | ", ", ") + (f"; {day_name(made)}" if made is not None else "")
        books.setdefault(lines[0].strip(), []).append((shown, body, _places(meta)))
    sections = []
    count = 0
    for book, clippings in books.items():
        notes = [bool(_NOTE.search(meta.split(",")[0])) for meta, _, _ in clippings]
        highlights = [("" if note else body, places) for (_, body, places), note in zip(clippings, notes, strict=True)]
        at: dict[int, list[int]] = {}  # a page or location number -> the highlights there
        for j, (_, places) in enumerate(highlights):
            for number in places:
                at.setdefault(number, []).append(j)
        paragraphs = []
        for i, (meta, body, places) in enumerate(clippings):
            if notes[i]:
                paragraphs.append(f"Note: {body}\n({meta})")
            elif not _extended(i, highlights, {j for number in places for j in at[number]}):
                paragraphs.append(f"{body}\n({meta})")
        sections.append(Section("\n\n".join(paragraphs), heading=book))
        count += len(paragraphs)
    damaged = [f"{odd} block(s) not in a clipping's form (a title line, then '- ... | ...'), not read"] if odd else []
    return Document("Kindle highlights" if name.strip().lower() == "my clippings" else name, sections,
                    pages=count, notes=damaged, kind="kindle")  # the build counts clippings


def _extended(i: int, highlights: list[tuple[str, set[int]]], near: set[int]) -> bool:
    """Highlight ``i`` (of a book's (text, places), in the file's order; "" for its notes) was extended later, or
    made before: its text, without the quotation marks a longer selection takes in, is inside a longer highlight at
    the same place (``near``: those sharing a page or location number with it; a word highlighted on its own
    elsewhere stays), or is the same as an earlier one there."""
    text = highlights[i][0].strip("“”\"'‘’")
    return any(text in other and (other.strip("“”\"'‘’") != text or j < i)
               for j in near if j != i and (other := highlights[j][0]))


# month names in the languages a Kindle writes its clippings in (English, French, German, Spanish, Italian, Portuguese,
# Dutch); Chinese and Japanese write the day in digits (2023年2月14日)
_MONTHS = {name: number for names in (
    "january february march april may june july august september october november december",
    "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "januar februar märz april mai juni juli august september oktober november dezember",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "januari februari maart april mei juni juli augustus september oktober november december",
) for number, name in enumerate(names.split(), start=1)}


def _day(added: str) -> date | None:
    """The day of a clipping's last meta part ("Added on Saturday, 9 September 2017 13:27:09", "Added on Monday, April
    18, 2016 7:28:27 AM", "Añadido el lunes, 25 de noviembre de 2019 0:43:38", "添加于 2023年2月14日星期二 上午5:15:57"),
    written after it as the documents' days are (`day_name`), so that a question's "last week" finds it
    (`local_rag.dates`); None where it cannot be told (another language, a two-digit year).

    Example:
        >>> _day("Added on Monday, April 18, 2016 7:28:27 AM"), _day("Ajouté le mercredi 16 août 2017 02:14:10")
        (datetime.date(2016, 4, 18), datetime.date(2017, 8, 16))
        >>> _day("添加于 2023年2月14日星期二 上午5:15:57"), _day("Added on Monday, 3 December 12 19:51:33")
        (datetime.date(2023, 2, 14), None)
    """
    found = re.search(r"(\d{4})年(\d{1,2})月(\d{1,2})日", added)
    try:
        if found:
            return date(int(found[1]), int(found[2]), int(found[3]))
        words = re.findall(r"[^\W\d_]+|\d+", re.sub(r"\d{1,2}:\d{2}(?::\d{2})?", " ", added).lower())
        month = next((_MONTHS[w] for w in words if w in _MONTHS), None)
        year = next((int(w) for w in words if w.isdigit() and len(w) == 4), None)
        day = next((int(w) for w in words if w.isdigit() and len(w) <= 2), None)
        return date(year, month, day) if month and year and day else None
    except ValueError:  # a day that does not exist
        return None


def _places(meta: str) -> set[int]:
    """The page and location numbers of a clipping's meta line, in any of the Kindle's languages (its parts but the
    last, the day): "Your Highlight on page 41 | location 737-739 | Added on ..." {41, 737, 738, 739}.

    Example:
        >>> sorted(_places("Your Highlight on page 41 | location 737-739 | Added on Saturday, 9 September 2017"))
        [41, 737, 738, 739]
    """
    found: set[int] = set()
    for start, end in re.findall(r"(\d+)(?:-(\d+))?", " ".join(meta.split(" | ")[:-1])):
        first, last = int(start), int(end or start)
        found.update(range(first, min(last, first + 100) + 1) if last >= first else (first,))
    return found

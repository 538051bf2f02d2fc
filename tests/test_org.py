"""Org-mode files (``.org``: Emacs notes, org-roam, Orgzly) read at their outline's headings (`local_rag.corpus.org`):
real files from orgparse's test data (its wheel, fetched by pip), and a note written here as Emacs writes one."""

from __future__ import annotations

from pathlib import Path

from local_rag.corpus.documents import read_document
from local_rag.corpus.readers import CorpusReport, read_corpus

from .registry_files import from_tarball, pypi_wheel

ORGPARSE = ("orgparse", "0.5.20260926", "0bff87cf7db81fec55a43d9bd8766f82ffd3c25a9056facd79ec5cf6582daf39")

NOTE = """#+TITLE: Station 4 maintenance
#+AUTHOR: Ana Silva
#+STARTUP: overview

# a private reminder, not for the index
* DONE [#A] Replace the north pump                                :pumps:work:
  CLOSED: [2025-11-04 Tue 10:12] SCHEDULED: <2025-11-03 Mon>
  :PROPERTIES:
  :ID:       4f1c2a9e-0b7d-4a51-9e0c-2d4a1f0e3b11
  :END:
  :LOGBOOK:
  CLOCK: [2025-11-04 Tue 08:00]--[2025-11-04 Tue 10:12] =>  2:12
  :END:
  Müller replaced it; the old one goes back to the warehouse. See [[https://wiki.example.org/p4][the runbook]]
  and [[file:suppliers.org][the supplier list]].
** Pressure check
   #+BEGIN_SRC sh
   # not a heading: a shell comment
   pressure --station 4
   #+END_SRC
* TODO Order spare seals
"""


def test_an_org_note_is_read_at_its_headings(tmp_path: Path):
    """Session 57: "note: N file(s) of .org skipped": an Emacs user's notes were never read. Now ``#+TITLE:`` is the
    title, each heading a section (its TODO keyword kept, priority and tags dropped), planning lines kept, drawers
    and clocked times, comment lines and other keywords left out, links their description, source blocks code."""
    (tmp_path / "station4.org").write_text(NOTE)
    passages = list(read_corpus(tmp_path / "station4.org", report=CorpusReport()))
    assert {p.title for p in passages} == {"Station 4 maintenance"}
    text = "\n".join(p.text for p in passages)
    assert [h for _, h in read_document(tmp_path / "station4.org").sections[0].headings] == [
        "DONE Replace the north pump", "Pressure check", "TODO Order spare seals"]  # not the code's "# not a heading"
    assert "CLOSED: [2025-11-04 Tue 10:12] SCHEDULED: <2025-11-03 Mon>" in text
    assert "See the runbook (https://wiki.example.org/p4)\n  and the supplier list." in text
    assert "```sh\n   # not a heading: a shell comment\n   pressure --station 4\n```" in text
    for left_out in (":PROPERTIES:", "4f1c2a9e", "CLOCK", "private reminder", "#+AUTHOR", ":pumps:", "[#A]"):
        assert left_out not in text
    assert "# TODO Order spare seals" in text


def test_real_org_files_are_read(tmp_path: Path):
    """orgparse's own test files: tags dropped from headings (unicode ones too), a logbook left out, planning lines
    kept, properties left out."""
    folder = from_tarball("orgparse", {name: f"orgparse/tests/data/{name}" for name in
                                       ("01_attributes.org", "04_logbook.org", "05_tags.org")},
                          lambda: pypi_wheel(*ORGPARSE))
    tags = read_document(folder / "05_tags.org").sections[0].text
    assert "# Node 2\n# Node 3" in tags and "# Heading: :with:colon:\n# unicode" in tags and ":tag" not in tags
    assert read_document(folder / "04_logbook.org").sections[0].text == "# LOGBOOK drawer test"
    attributes = read_document(folder / "01_attributes.org").sections[0].text
    assert attributes.startswith("# DONE A node with a lot of attributes\n  SCHEDULED: <2010-08-06 Fri> DEADLINE:")
    assert "Effort" not in attributes and "CLOCK" not in attributes and "<2019-08-10 Sat 16:30-17:30> TimeRange" in attributes

"""LaTeX sources (``.tex``) read at their sectioning commands (`local_rag.corpus.latex`, pylatexenc): a paper as an
Overleaf project holds it, its main file and a chapter it inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from local_rag.corpus.documents import UnreadableFile, read_document
from local_rag.corpus.readers import CorpusReport, read_corpus

pytest.importorskip("pylatexenc")

MAIN = r"""\documentclass[11pt]{article}
\usepackage[utf8]{inputenc}
\usepackage{amsmath}
\newcommand{\lag}{\tau}
\title{Valve timing in pump stations: \emph{a field study}}
\author{Ana Silva \and Ben Okafor}
\begin{document}
\maketitle
\begin{abstract}
We measure the lag of station valves. % TODO: add the numbers
\end{abstract}
\section{Introduction}\label{sec:intro}
Pumps fail when valves lag~\cite{smith2020,mueller2021}. The lag is $\tau = 40\,\mathrm{ms}$ at M\"unster.
%\section{A section commented out}
\subsection*{Setup}
\begin{itemize}
  \item Station 4, north pump
  \item Firmware 2.4
\end{itemize}
\section[Short]{Results and \textbf{discussion}}
Firmware 2.4 cuts the lag to 40~ms (Table~\ref{tab:lag}).
\input{appendix}
\end{document}
"""


def test_a_latex_paper_is_read_at_its_sections(tmp_path: Path):
    """Session 57: "note: 2 file(s) of .tex skipped": a researcher's drafts were never read. Now ``\\title`` is the
    title, each sectioning command a heading (starred and with a short title too), the text as typeset: accents and
    math as characters, citations by their keys, list items, comments (and a section commented out) and the preamble
    left out, no date printed by ``\\maketitle``."""
    (tmp_path / "main.tex").write_text(MAIN)
    document = read_document(tmp_path / "main.tex")
    assert document.title == "Valve timing in pump stations: a field study"
    section = document.sections[0]
    assert [h for _, h in section.headings] == ["Introduction", "Setup", "Results and discussion"]
    text = section.text
    assert "We measure the lag of station valves." in text
    assert "Pumps fail when valves lag [smith2020, mueller2021]. The lag is τ = 40 ms at Münster." in text
    assert "Station 4, north pump" in text and "Firmware 2.4 cuts the lag to 40 ms" in text
    for left_out in ("TODO", "commented out", "usepackage", "newcommand", "2026", "\\"):
        assert left_out not in text


def test_a_chapter_file_and_a_file_of_macros(tmp_path: Path):
    """A chapter file that ``\\input`` brings in (no preamble, no title: titled by its first heading where its name
    says nothing) is read in a folder beside the main file; a file of macros alone is unreadable with the reason."""
    (tmp_path / "main.tex").write_text(MAIN)
    (tmp_path / "appendix.tex").write_text("\\section{Appendix: raw lags}\nStation 4: 41, 39, 40~ms.\n")
    (tmp_path / "macros.tex").write_text("\\newcommand{\\lag}{\\tau}\n\\usepackage{amsmath}\n")
    report = CorpusReport()
    passages = {p.doc_id: p for p in read_corpus(tmp_path, report=report)}
    assert passages["appendix.tex"].title == "appendix" and "41, 39, 40 ms" in passages["appendix.tex"].text
    assert report.unreadable == {"macros.tex": "no text once typeset (a file of macros only)"}
    with pytest.raises(UnreadableFile, match="macros only"):
        read_document(tmp_path / "macros.tex")


def test_an_input_without_its_file_name_does_not_stop_the_file(tmp_path: Path):
    """Found by feeding mutated copies of the new readers' samples to them (400 files, none raised nor hung): a
    ``\\input`` left without its argument made pylatexenc raise (IndexError) and the file "cannot be parsed"; the
    ``\\input`` and ``\\include`` commands are dropped before it (the files they name are read as their own)."""
    (tmp_path / "draft.tex").write_text("\\section{Results}\nThe lag is 40~ms. \\input\n\\include{chapter2}\n")
    assert read_document(tmp_path / "draft.tex").sections[0].text == "## Results\n\nThe lag is 40 ms."

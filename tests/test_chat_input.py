"""Chat input and output: prompt_toolkit line editing, history file and multi-line paste; no empty agent line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from local_rag.cli.lines import Streamer, line_reader


def test_prompt_toolkit_history_and_multiline_paste(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    history = tmp_path / "state" / "chat_history"
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        read = line_reader(history, interactive=True)
        pipe.send_text("first question\r")
        assert read("you> ") == "first question"
        pipe.send_text("\x1b[200~pasted line one\npasted line two\x1b[201~\r")  # bracketed paste, then Enter
        assert read("you> ") == "pasted line one\npasted line two"
        pipe.send_text("\x1b[A\r")  # up arrow: the last line again
        assert read("you> ") == "pasted line one\npasted line two"
        pipe.send_text("\x04")  # Ctrl-D on an empty line
        with pytest.raises(EOFError):
            read("you> ")
    assert "first question" in history.read_text()


def test_piped_stdin_is_read_line_by_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setattr("sys.stdin", io.StringIO("one\ntwo\n"))
    read = line_reader(None, interactive=False)
    assert [read("you> "), read("you> ")] == ["one", "two"]
    with pytest.raises(EOFError):
        read("you> ")
    assert capsys.readouterr().out == "you> you> you> "


def test_streamer_prints_no_empty_agent_line():
    out = io.StringIO()
    declined = Streamer(out=out)  # nothing streamed: the turn was declined before any LLM call
    declined.finish("I don't know.", streamed_is_final=False)
    assert out.getvalue() == "agent> I don't know.\n"
    out = io.StringIO()
    answered = Streamer(out=out)
    for piece in ("\n", " Atomic", " renames [1]."):
        answered(piece)
    answered.finish("Atomic renames [1].", streamed_is_final=True)
    assert out.getvalue() == "agent> Atomic renames [1].\n"


def test_a_streamed_i_dont_know_classed_a_decline_is_written_once():
    """Session 50: `chat --mode agentic` (and `ask` into a pipe or file) wrote the model's streamed "I'm sorry, ..."
    and then the same sentence again as the decline's text (`ask` behind a carriage return, which only a terminal
    hides, and only when it fits one line)."""
    idk = "I'm sorry, but I don't have the answer to that in the documents I have."
    out = io.StringIO()
    streamed = Streamer(out=out)
    for piece in (" I'm sorry,", " but I don't have the answer to that", " in the documents I have."):
        streamed(piece)
    streamed.finish(idk, streamed_is_final=False)
    assert out.getvalue() == f"agent> {idk}\n"
    out = io.StringIO()
    plain = Streamer("", out=out)  # `ask`: no prefix
    plain.finish(idk, streamed_is_final=False)  # declined before any LLM call: written once
    assert out.getvalue() == f"{idk}\n"


def test_a_withdrawn_draft_is_followed_by_why_then_the_decline():
    out = io.StringIO()
    drafted = Streamer(out=out)
    for piece in ("Carthage", " 1.3.2 [1]."):
        drafted(piece)
    drafted.finish("I don't know.", streamed_is_final=False, why="withdrawn: the passages do not support that draft")
    assert out.getvalue() == ("agent> Carthage 1.3.2 [1].\n(withdrawn: the passages do not support that draft)\n"
                              "agent> I don't know.\n")


def test_a_revised_draft_is_followed_by_what_the_check_did_then_the_checked_answer():
    from local_rag.decide.support import revised, revision_note

    report = {"dropped": 1, "moved": 0, "sentences": [
        {"text": "Cats purr [1].", "supported": True, "kept": True},
        {"text": "The latest version of Carthage is 1.3.2 [1].", "supported": False, "kept": False}]}
    note = revision_note(report)
    assert revised(report) and note == ('checked: removed 1 sentence the passages do not support '
                                        '("The latest version of Carthage is 1.3.2 [1].")')
    out = io.StringIO()
    drafted = Streamer(out=out)
    drafted("Cats purr [1]. The latest version of Carthage is 1.3.2 [1].")
    drafted.finish("Cats purr [1].", streamed_is_final=False, why=note)
    assert out.getvalue() == ("agent> Cats purr [1]. The latest version of Carthage is 1.3.2 [1].\n"
                              f"({note})\nagent> Cats purr [1].\n")
    flagged = {"dropped": 0, "moved": 0, "sentences": [{"text": "x" * 100, "supported": False, "kept": True}]}
    assert not revised(flagged)  # flag mode: the streamed draft stands, with a note
    assert revision_note(flagged) == f'checked: the passages do not support 1 sentence ("{"x" * 79}…")'
    out = io.StringIO()
    kept = Streamer(out=out)
    kept("x" * 100)
    kept.finish("x" * 100, streamed_is_final=True, why=revision_note(flagged))
    assert out.getvalue() == "agent> " + "x" * 100 + f"\n({revision_note(flagged)})\n"
    moved = {"dropped": 0, "moved": 2, "sentences": []}
    assert revised(moved) and revision_note(moved) == "checked: moved 2 citations to the passage that supports their sentences"
    assert revision_note(None) == revision_note({"sentences": [], "moved": 0}) == "" and not revised(None)


def test_chat_completes_commands_and_after_only_the_documents_of_the_index(tmp_path: Path):
    """Tab after ``/o`` gives ``/only``; after ``/only `` the index's documents and folders (read at that first Tab,
    not before); a name with a space comes quoted, as ``/only`` splits its words like a shell."""
    from prompt_toolkit.document import Document

    from local_rag.cli.ask import COMMANDS
    from local_rag.cli.lines import chat_completer
    from local_rag.index import build_index, open_index
    from local_rag.retrieve import HybridRetriever

    from .conftest import HashEmbedder, make_settings
    from .test_scope import FILES, write_folder

    settings = make_settings(tmp_path, chunker={"tokenizer": "whitespace", "size": 12, "overlap": 3})
    embedder = HashEmbedder(settings.embedder)
    build_index(settings, write_folder(tmp_path / "docs", FILES), embedder=embedder, progress=False)
    hybrid = HybridRetriever(open_index(settings, model_checksum=embedder.checksum), settings, embedder)
    reads: list[int] = []

    def documents() -> list[str]:
        reads.append(1)
        return hybrid.documents()

    done = chat_completer(COMMANDS, documents)

    def texts(line: str) -> list[str]:
        return [c.text for c in done.get_completions(Document(line), None)]

    assert texts("/o") == ["/only"] and texts("/s") == ["/sources", "/save"] and reads == []
    assert texts("/only rep") == ["reports/", "reports/2023/", "reports/2023/q1.md", "reports/2024/",
                                  "reports/2024/q1.md", "reports/2024/q2.md"]
    assert texts("/only reports/2024/q2.md NOTES/rev") == ['"notes/revenue ideas.txt"']  # the next word, any case
    assert texts("how do /only") == [] and texts("/sources x") == [] and reads == [1]  # the table read once
    completion = next(done.get_completions(Document("/only notes/c"), None))
    assert (completion.text, completion.start_position) == ("notes/cats.md", -len("notes/c"))


def test_tab_completes_a_document_name_on_a_terminal():
    """The same completer in the prompt_toolkit session `chat` reads with (Tab, then Enter once it has completed)."""
    import threading

    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from local_rag.cli.lines import chat_completer

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        read = line_reader(None, interactive=True,
                           completer=lambda: chat_completer(["/only"], lambda: ["notes/cats.md", "reports/q1.md"]))
        pipe.send_text("/only notes/c\t")
        threading.Timer(1.0, lambda: pipe.send_text("\r")).start()  # completion runs in the background
        assert read("you> ") == "/only notes/cats.md"

"""Terminal input and streamed output of ``local-rag chat`` and ``local-rag demo``.

On a terminal, lines are read with prompt_toolkit: a history file (up/down, Ctrl-R search), Emacs line editing,
multi-line paste (a pasted block with newlines stays one message, through bracketed paste) and Tab completion of
`chat`'s commands and of the documents ``/only`` takes (`chat_completer`). Piped or redirected
stdin is read line by line as before, so scripts keep working.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO  # Any: the completer, document and event objects of prompt_toolkit

from local_rag.agent.tags import BROKE_OFF


def history_file() -> Path:
    from local_rag.paths import user_data_dir

    return user_data_dir() / "chat_history"


def line_reader(history: Path | None, interactive: bool | None = None,
                completer: Callable[[], Any] | None = None) -> Callable[[str], str]:
    """``read(prompt) -> line``, raising EOFError at the end of input (Ctrl-D) and KeyboardInterrupt on Ctrl-C, as
    `input` does. ``interactive`` None: prompt_toolkit when stdin and stdout are terminals; ``completer``: makes its
    Tab completion there (`chat_completer`)."""
    if interactive is None:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if interactive:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, History, InMemoryHistory

        store: History = InMemoryHistory()
        if history is not None:
            history.parent.mkdir(parents=True, exist_ok=True)
            store = FileHistory(str(history))
        session: PromptSession[str] = PromptSession(history=store, enable_history_search=True,
                                                    completer=completer() if completer else None,
                                                    complete_while_typing=False)
        return lambda prompt: session.prompt(prompt)

    def read(prompt: str) -> str:
        sys.stdout.write(prompt)
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    return read


def chat_completer(commands: Sequence[str], documents: Callable[[], Sequence[str]]) -> Any:
    """Tab completion for `chat`: a command after ``/``, and after ``/only `` the index's documents and their folders
    (``documents``: called at the first Tab there, so nothing is read until it is needed); a name with a space comes
    quoted, as ``/only`` splits its words like a shell.

    Example:
        >>> from prompt_toolkit.document import Document
        >>> done = chat_completer(["/only", "/all"], lambda: ["reports/2024/q1.md", "my notes/a.md"])
        >>> [c.text for c in done.get_completions(Document("/only rep"), None)]
        ['reports/', 'reports/2024/', 'reports/2024/q1.md']
        >>> [c.text for c in done.get_completions(Document("/only my"), None)]
        ['"my notes/"', '"my notes/a.md"']
    """
    from prompt_toolkit.completion import Completer, Completion

    class ChatCompleter(Completer):
        names: list[str] | None = None

        def get_completions(self, document: Any, complete_event: Any) -> Iterator[Any]:
            text = document.text_before_cursor
            if text.startswith("/") and " " not in text:
                yield from (Completion(c, start_position=-len(text)) for c in commands if c.startswith(text))
                return
            if not text.startswith("/only "):
                return
            word = text[len("/only "):].rsplit(" ", 1)[-1].lstrip("\"'")
            if self.names is None:
                found = list(documents())
                folders = {"/".join(d.split("/")[:i]) + "/" for d in found for i in range(1, d.count("/") + 1)}
                self.names = sorted(folders | set(found))
            for name in self.names:
                if name.casefold().startswith(word.casefold()):
                    shown = f'"{name}"' if " " in name else name
                    yield Completion(shown, start_position=-len(text.rsplit(" ", 1)[-1]))

    return ChatCompleter()


class Streamer:
    """Writes an answer's tokens as they come, behind ``prefix``, which is written with the first token only: a turn
    answered without streaming (a decline, a clarifying question, an agentic answer) prints no empty prefix line."""

    def __init__(self, prefix: str = "agent> ", out: TextIO | None = None) -> None:
        self.prefix = prefix
        self.out = out or sys.stdout
        self.started = False
        self.shown: list[str] = []  # what was streamed, to tell a final text that repeats it

    def __call__(self, piece: str) -> None:
        if not self.started:
            if not piece.strip():
                return  # leading whitespace: wait for the first visible token
            self.out.write(self.prefix)
            piece = piece.lstrip()
            self.started = True
        self.shown.append(piece)
        self.out.write(piece)
        self.out.flush()

    def restart(self) -> None:
        """An agentic step broke the answer it was streaming (an unclosed ``<answer>``): a new line, and the next
        answer is what `finish` compares the final text with (before, a final "I don't know" streamed after a broken
        answer was written a second time)."""
        if self.started:
            self.out.write(f"\n({BROKE_OFF})\n")
            self.out.flush()
            self.shown = []

    def status(self, line: str) -> None:
        """A progress line before the answer ("Searching…", "3 sources: …"): what a user sees while the CPU
        prefills; none once the answer streams."""
        if not self.started:
            self.out.write(f"  … {line}\n")
            self.out.flush()

    def finish(self, text: str, streamed_is_final: bool, why: str = "") -> None:
        """End the turn: a newline after streamed text that stands as the answer, else the final ``text`` on its
        own line. After a streamed draft, ``why`` (in brackets) says what the checks after generation did to it:
        withdrew it, removed or flagged sentences, moved citations. A final text that is the streamed one (an
        "I don't know" the model wrote, classed a decline) is not written again."""
        repeated = self.started and "".join(self.shown).strip() == text.strip()
        if self.started:
            self.out.write("\n")
        if self.started and why:
            self.out.write(f"({why})\n")
        if not (self.started and (streamed_is_final or repeated)):
            self.out.write(f"{self.prefix}{text}\n")
        self.out.flush()

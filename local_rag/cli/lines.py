"""Terminal input and streamed output of ``local-rag chat`` and ``local-rag demo``.

On a terminal, lines are read with prompt_toolkit: a history file (up/down, Ctrl-R search), Emacs line editing and
multi-line paste (a pasted block with newlines stays one message, through bracketed paste). Piped or redirected
stdin is read line by line as before, so scripts keep working.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from local_rag.agent.tags import BROKE_OFF


def history_file() -> Path:
    from local_rag.paths import user_data_dir

    return user_data_dir() / "chat_history"


def line_reader(history: Path | None, interactive: bool | None = None) -> Callable[[str], str]:
    """``read(prompt) -> line``, raising EOFError at the end of input (Ctrl-D) and KeyboardInterrupt on Ctrl-C, as
    `input` does. ``interactive`` None: prompt_toolkit when stdin and stdout are terminals."""
    if interactive is None:
        interactive = sys.stdin.isatty() and sys.stdout.isatty()
    if interactive:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, History, InMemoryHistory

        store: History = InMemoryHistory()
        if history is not None:
            history.parent.mkdir(parents=True, exist_ok=True)
            store = FileHistory(str(history))
        session: PromptSession[str] = PromptSession(history=store, enable_history_search=True)
        return lambda prompt: session.prompt(prompt)

    def read(prompt: str) -> str:
        sys.stdout.write(prompt)
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    return read


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

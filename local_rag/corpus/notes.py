"""What the parsing libraries say while they read a person's file, kept with the file instead of printed.

pypdf logs each repair of a damaged PDF ("incorrect startxref pointer(3)", "EOF marker not found") as a warning, and
trafilatura, python-docx and python-pptx may warn through `warnings`. With no logging set up, Python prints them bare
on stderr, between the progress bars and without the file's name. `library_notes` collects them for one file read:
the folder reader names the files read despite such repairs once, at the end (`readers.note_read`), and drops the
messages of a file that could not be read at all (its reason says why).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: loggers of the document parsers (the ``docs`` extra and what it pulls in)
PARSER_LOGGERS = ("pypdf", "trafilatura", "htmldate", "courlan", "docx", "pptx", "charset_normalizer")


class _Collect(logging.Handler):
    def __init__(self, notes: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.notes = notes

    def emit(self, record: logging.LogRecord) -> None:
        if _innermost.get() is self:  # a file read inside another's read (an e-mail's attachment) keeps its own
            self.notes.append(record.getMessage().strip())


_innermost: ContextVar[_Collect | None] = ContextVar("library_notes", default=None)


@contextmanager
def library_notes() -> Iterator[list[str]]:
    """Collect the parsers' warnings (log records and `warnings`) raised inside the block, in order, each once; those
    raised inside a nested block are that block's alone.

    Example:
        >>> with library_notes() as notes:
        ...     logging.getLogger("pypdf._reader").warning("incorrect startxref pointer(3)")
        >>> notes
        ['incorrect startxref pointer(3)']
    """
    notes: list[str] = []
    handler = _Collect(notes)
    token = _innermost.set(handler)
    loggers = [logging.getLogger(name) for name in PARSER_LOGGERS]
    saved = [logger.propagate for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield notes
        for w in caught:
            if issubclass(w.category, (UserWarning, RuntimeWarning)):
                notes.append(str(w.message).strip())
            else:  # a deprecation is for developers: passed on as it came
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    finally:
        _innermost.reset(token)
        for logger, propagate in zip(loggers, saved, strict=True):
            logger.removeHandler(handler)
            logger.propagate = propagate
    notes[:] = list(dict.fromkeys(n for n in notes if n))

"""What of a folder is read besides its documents (`ReadOptions`): the options `index build` takes for it
(``--exclude``, ``--images``, ``--code``, ``--gitignore``, ``--git-log``), which an index keeps in its manifest for
every later add and sync (`local_rag.index.manifest.IndexManifest.read_options`).

Example:
    >>> ReadOptions(exclude=("drafts",), code=True).joined(ReadOptions(exclude=("*.log", "drafts"), images=True))
    ReadOptions(exclude=('drafts', '*.log'), images=True, code=True, gitignore=False, git_log=False)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ReadOptions"]


@dataclass(frozen=True)
class ReadOptions:
    """What a read of a folder takes in, besides its documents."""

    #: patterns of files (their paths under the folder; never read) or of document ids left out (`local_rag.patterns`)
    exclude: tuple[str, ...] = ()
    #: the folder's pictures are read too, by OCR (`local_rag.corpus.ocr`); a picture given alone always is
    images: bool = False
    #: its source and configuration files (`local_rag.corpus.code`); one given alone always is
    code: bool = False
    #: what its ``.gitignore`` files (and git's other rules) name is left out (`local_rag.corpus.gitignore`)
    gitignore: bool = False
    #: its repository's commit messages are read too (`local_rag.corpus.git_log`)
    git_log: bool = False

    def joined(self, other: ReadOptions) -> ReadOptions:
        """These options and ``other``'s: both lists of patterns, each pattern once, and each switch on when it is
        on in either (an index keeps what it was built with; a sync can add to it, not take away)."""
        return ReadOptions(tuple(dict.fromkeys([*self.exclude, *other.exclude])), self.images or other.images,
                           self.code or other.code, self.gitignore or other.gitignore, self.git_log or other.git_log)

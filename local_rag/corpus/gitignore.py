"""What a repository's ``.gitignore`` files name (``--gitignore``): build output, generated code, vendored packages,
a virtualenv, logs, left out of an index as git leaves them out of a commit. Every ``.gitignore`` of the folder and
its subfolders applies to the paths under its own folder, the deeper one first, with git's rules (a name at any depth,
a leading ``/`` anchored at its folder, ``dir/`` for folders only, ``**``, ``!`` taking a file back in), as pathspec
reads them (`pathspec.GitIgnoreSpec`, the library black and mypy use for this). A folder left out is not walked, so a
file in it cannot be taken back in, as in git.

Example:
    >>> ignores = GitIgnores(Path("repo"))  # doctest: +SKIP
    >>> ignores.ignored("web/dist/app.js", is_dir=False)  # doctest: +SKIP
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MAX_FILE = 1 << 20  # a .gitignore larger than this is not read (no real one comes near it)


class GitIgnores:
    """The ``.gitignore`` files under ``folder``, each read the first time a path under its folder is asked about."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        import pathspec  # a dependency; imported with the first folder walked this way

        self._pathspec = pathspec
        self._specs: dict[str, Any] = {}  # folder under ``folder`` ("" for itself) -> its spec, or None

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether git ignores ``path`` (``/``-separated, under the folder): the deepest ``.gitignore`` that says
        anything of it decides (a ``!`` pattern: not ignored)."""
        parts = path.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._spec("/".join(parts[:depth]))
            if spec is None:
                continue
            said = spec.check_file("/".join(parts[depth:]) + ("/" if is_dir else "")).include
            if said is not None:
                return bool(said)
        return False

    def left_out(self, path: str) -> bool:
        """Whether ``path`` (a file's, ``/``-separated, under the folder) is left out: ignored itself or inside an
        ignored folder, which a walk never enters (`index sync --watch` asks of each changed path)."""
        parts = path.split("/")
        return (any(self.ignored("/".join(parts[:i]), is_dir=True) for i in range(1, len(parts)))
                or self.ignored(path, is_dir=False))

    def _spec(self, under: str) -> Any:
        if under not in self._specs:
            self._specs[under] = None
            path = self.folder / under / ".gitignore"
            try:
                if path.is_file() and path.stat().st_size <= MAX_FILE:
                    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                    self._specs[under] = self._pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
            except (OSError, ValueError):  # unreadable, or a pattern pathspec refuses: that file says nothing
                pass
        return self._specs[under]

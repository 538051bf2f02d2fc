"""What a repository's ``.gitignore`` files name (``--gitignore``): build output, generated code, vendored packages,
a virtualenv, logs, left out of an index as git leaves them out of a commit. Every ``.gitignore`` of the folder and
its subfolders applies to the paths under its own folder, the deeper one first, with git's rules (a name at any depth,
a leading ``/`` anchored at its folder, ``dir/`` for folders only, ``**``, ``!`` taking a file back in), as pathspec
reads them (`pathspec.GitIgnoreSpec`, the library black and mypy use for this). A folder left out is not walked, so a
file in it cannot be taken back in, as in git. As in git, the rules of a repository the folder is in apply too: the
``.gitignore`` files of the folders above it up to the repository's top, then the repository's own
``.git/info/exclude``, then the user's excludes file (``core.excludesFile``, by default ``~/.config/git/ignore``),
each weaker than the one before. A file git tracks is never left out (a ``.env.example`` committed before ``.env*`` was
ignored, a build file added with ``git add -f``): git is asked which files it tracks when it is installed.

Example:
    >>> ignores = GitIgnores(Path("repo"))  # doctest: +SKIP
    >>> ignores.ignored("web/dist/app.js", is_dir=False)  # doctest: +SKIP
    True
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

MAX_FILE = 1 << 20  # a .gitignore larger than this is not read (no real one comes near it)


class GitIgnores:
    """The ``.gitignore`` files under ``folder``, each read the first time a path under its folder is asked about."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        import pathspec  # a dependency; imported with the first folder walked this way

        self._pathspec = pathspec
        self.top, git_dir = repository_of(folder)  # the work tree's top (``folder`` outside a repository)
        under = Path(os.path.realpath(folder)).relative_to(Path(os.path.realpath(self.top))).as_posix()
        self._prefix = "" if under == "." else under + "/"  # ``folder``'s path under the top
        self._specs: dict[str, Any] = {}  # folder under the top ("" for itself) -> its spec, or None
        self._repository_specs = ([] if git_dir is None else  # the weaker two, of the whole work tree
                                  [s for s in (self._read(git_dir / "info" / "exclude"),
                                               self._read(excludes_file(self.top))) if s is not None])
        self._tracked, self._tracked_folders = tracked_files(self.top) if git_dir is not None else (set(), set())

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether git ignores ``path`` (``/``-separated, under the folder): the deepest ``.gitignore`` that says
        anything of it decides (a ``!`` pattern: not ignored)."""
        if (self._prefix + path) in (self._tracked_folders if is_dir else self._tracked):
            return False
        parts = (self._prefix + path).split("/")
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._spec("/".join(parts[:depth]))
            if spec is None:
                continue
            said = spec.check_file("/".join(parts[depth:]) + ("/" if is_dir else "")).include
            if said is not None:
                return bool(said)
        for spec in self._repository_specs:
            said = spec.check_file("/".join(parts) + ("/" if is_dir else "")).include
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
            self._specs[under] = self._read(self.top / under / ".gitignore")
        return self._specs[under]

    def _read(self, path: Path | None) -> Any:
        """The spec of the patterns in ``path``, or None when it is missing, empty or unreadable."""
        try:
            if path is not None and path.is_file() and path.stat().st_size <= MAX_FILE:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                return self._pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        except (OSError, ValueError):  # unreadable, or a pattern pathspec refuses: that file says nothing
            pass
        return None


def repository_of(folder: Path) -> tuple[Path, Path | None]:
    """The top of the git work tree ``folder`` is in, and its git folder (where ``info/exclude`` is): the nearest
    folder, ``folder`` or above, with a ``.git`` folder, or a ``.git`` file (a worktree's or a submodule's: "gitdir:
    PATH", whose ``commondir`` names the shared one). ``(folder, None)`` outside a repository."""
    here = Path(os.path.realpath(folder))
    for top in (here, *here.parents):
        dot_git = top / ".git"
        if dot_git.is_dir():
            return top, dot_git
        if dot_git.is_file():
            try:
                line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return top, None
            if not line.startswith("gitdir:"):
                return top, None
            git_dir = (top / line.removeprefix("gitdir:").strip()).resolve()
            try:  # a linked worktree's info/exclude is the main repository's
                common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
                git_dir = (git_dir / common).resolve()
            except OSError:
                pass
            return top, git_dir
    return folder, None


def _git_output(top: Path, *args: str, timeout: float) -> bytes | None:
    """What ``git -C top ARGS`` prints; None when git is missing, fails or takes longer than ``timeout`` seconds (the
    rules are then read without what it would say)."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run([git, "-C", str(top), *args], capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def tracked_files(top: Path) -> tuple[set[str], set[str]]:
    """The files git tracks in the work tree at ``top`` (``/``-separated, under it), and the folders that hold them;
    two empty sets when git is missing or cannot say."""
    listed = _git_output(top, "ls-files", "-z", "--cached", timeout=120)
    if listed is None:
        return set(), set()
    files = {name for name in listed.decode("utf-8", "surrogateescape").split("\0") if name}
    folders: set[str] = set()
    for name in files:
        cut = name.rfind("/")
        while cut > 0 and name[:cut] not in folders:
            folders.add(name[:cut])
            cut = name.rfind("/", 0, cut)
    return files, folders


def excludes_file(top: Path) -> Path | None:
    """The user's excludes file as git finds it: ``core.excludesFile`` (asked of git, which reads every
    configuration file), else ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``)."""
    named = (_git_output(top, "config", "--path", "--get", "core.excludesFile", timeout=30) or b"").decode(
        "utf-8", "replace").strip()
    if named:
        return (top / os.path.expanduser(named)).resolve()
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return Path(config) / "git" / "ignore"

"""A repository's history (``--git-log``): its commits' messages, where a team writes why the code is as it is ("raise
the retry timeout to 30 s: the north pumps answer slowly after a restart"), read by ``git log`` as one document of
the folder, ``.git``, a commit a section: "a1b2c3d Ana Silva, 3 Nov 2025: Raise the retry timeout" then the message's
body and the files it changed. The document's digest is the commit the branch is at, so `index sync` reads the
history again only when there are new commits, and the vectors of commits already embedded are kept (their text is
unchanged: `local_rag.index.sync.reusable`). Needs git on the PATH; the most recent `MAX_COMMITS` commits.

Example:
    >>> read_git_log(Path("repo/.git")).sections[0].heading  # doctest: +SKIP
    'Raise the retry timeout to 30 s'
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

from local_rag.corpus.sections import Document, Section, UnreadableFile, day_name

__all__ = ["GIT_KIND", "MAX_COMMITS", "history_digest", "history_paths", "is_history", "read_git_log"]

GIT_KIND = ".gitlog"  # how the build's line counts it: "gitlog 120 commit(s)"
MAX_COMMITS = 20_000
MAX_FILES = 20  # files named per commit
_FORMAT = "%x1e%H%x1f%an%x1f%aI%x1f%s%x1f%b%x1f%D%x1f"  # a record separator first: the changed files follow each


def is_history(path: Path) -> bool:
    """``path`` is a repository's ``.git`` (a folder, or the file a worktree or submodule has in its place)."""
    return path.name == ".git" and path.exists()


def history_paths(folder: Path, git_log: bool) -> list[Path]:
    """``[folder/.git]`` when the history is asked for and ``folder`` is the top of a repository, else []."""
    return [folder / ".git"] if git_log and is_history(folder / ".git") else []


def _git(repository: Path, *args: str) -> str:
    git = shutil.which("git")
    if git is None:
        raise UnreadableFile("git is not installed here: the repository's history cannot be read")
    try:
        done = subprocess.run([git, "-C", str(repository), *args], capture_output=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UnreadableFile(f"git log failed ({exc})") from exc
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UnreadableFile(f"git log failed ({why[-1] if why else f'exit code {done.returncode}'})")
    return done.stdout.decode("utf-8", "replace")


def history_digest(path: Path) -> str:
    """What the history's content is known by: the commit the branch is at and the tags (a repository without
    commits, or one git cannot read, by that)."""
    try:
        head = _git(path.parent, "rev-parse", "HEAD").strip()
        head += "\n" + _git(path.parent, "for-each-ref", "--format=%(objectname) %(refname)", "refs/tags")
    except UnreadableFile as exc:
        head = str(exc)
    return hashlib.sha256(f"git history at {head}".encode()).hexdigest()


def read_git_log(path: Path) -> Document:
    """The repository's commits, newest first (see the module).

    Raises:
        UnreadableFile: git is missing or fails, or the repository has no commits.
    """
    out = _git(path.parent, "log", f"--max-count={MAX_COMMITS}", "--no-color", "--name-only", f"--format={_FORMAT}")
    sections = []
    for record in out.split("\x1e")[1:]:
        fields = record.split("\x1f")
        if len(fields) < 7:
            continue
        sha, author, when, subject, body, refs, changed = fields[:7]
        tags = [r.strip().removeprefix("tag: ") for r in refs.split(",") if r.strip().startswith("tag: ")]
        files = [f for f in changed.split("\n") if f.strip()]
        try:
            day = day_name(datetime.fromisoformat(when))
        except ValueError:
            day = when
        tagged = f" (tag {', '.join(tags)})" if tags else ""  # "what changed in v1.2?" finds the release's commit
        lines = [f"{sha[:7]}{tagged} {author}, {day}: {subject.strip()}", body.strip()]
        if files:
            more = f" and {len(files) - MAX_FILES} more" if len(files) > MAX_FILES else ""
            lines.append(f"Files: {', '.join(files[:MAX_FILES])}{more}")
        sections.append(Section("\n".join(line for line in lines if line), heading=subject.strip()[:100]))
    if not sections:
        raise UnreadableFile("a repository without commits: no history to read")
    notes = [f"only the {MAX_COMMITS:,} most recent commits read"] if len(sections) >= MAX_COMMITS else []
    return Document(f"Git history of {path.parent.resolve().name}", sections, pages=len(sections), notes=notes)

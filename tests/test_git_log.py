"""``--git-log`` (`local_rag.corpus.git_log`): a repository's commit messages, read by git itself from a repository
made in the test, and the commands as a user runs them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from local_rag.corpus.documents import read_document
from local_rag.corpus.options import ReadOptions

ENV = {"GIT_AUTHOR_NAME": "Ana Silva", "GIT_AUTHOR_EMAIL": "ana@example.org", "GIT_COMMITTER_NAME": "Ana Silva",
       "GIT_COMMITTER_EMAIL": "ana@example.org"}


def _git(root: Path, *args: str, when: str = "2025-11-03T10:00:00+00:00") -> None:
    import os

    env = {**os.environ, **ENV, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def _repo(root: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed here")
    root.mkdir()
    _git(root, "init", "-q")
    (root / "retry.py").write_text("TIMEOUT_S = 10\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "Add the retry loop")
    (root / "retry.py").write_text("TIMEOUT_S = 30\n")
    _git(root, "commit", "-q", "-am", "Raise the retry timeout to 30 s\n\nThe north pumps answer slowly after a "
         "restart: 10 s gave up on them.", when="2025-11-04T09:30:00+00:00")
    _git(root, "tag", "v1.2.0")
    return root


def test_the_history_is_read_a_commit_a_section(tmp_path: Path):
    """Each commit, newest first: its short hash (and its tags: "what changed in v1.2.0?"), author and day (as the
    other documents write days), its subject as the heading, its message's body and the files it changed."""
    root = _repo(tmp_path / "repo")
    document = read_document(root / ".git")
    assert document.title == "Git history of repo" and document.pages == 2
    newest = document.sections[0]
    assert newest.heading == "Raise the retry timeout to 30 s"
    assert newest.text.split("\n", 1)[0].endswith(" (tag v1.2.0) Ana Silva, 4 Nov 2025: Raise the retry timeout to 30 s")
    assert "The north pumps answer slowly after a restart" in newest.text and newest.text.endswith("Files: retry.py")


def test_index_build_with_git_log_and_a_sync_after_a_new_commit(tmp_path: Path):
    """`index build --code --git-log`: "why is the timeout 30 s?" finds the commit that says why; the index keeps the
    option, and a sync after a new commit reads the history again (one changed document) and finds the new one."""
    from .test_cli import run

    root = _repo(tmp_path / "repo")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    built = run("index", "build", str(root), "--sparse-only", "--code", "--git-log", "--index", "repo",
                cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    assert "gitlog 2 commit(s)" in built.stdout and "py 1 file(s)" in built.stdout
    found = run("search", "why do pumps answer slowly after a restart", "--index", "repo", "--json", cwd=tmp_path,
                env=env)
    assert found.returncode == 0 and '"Raise the retry timeout to 30 s"' in found.stdout, found.stdout
    info = run("index", "info", "repo", cwd=tmp_path, env=env)
    assert "the repository's commit messages are read (--git-log: at every add and sync)" in info.stdout
    same = run("index", "sync", str(root), "--index", "repo", cwd=tmp_path, env=env)
    assert "nothing to do" in same.stdout, same.stdout
    _git(root, "tag", "v1.1.0", "HEAD~1")  # a release tagged later: the history is read again
    tagged = run("index", "sync", str(root), "--index", "repo", cwd=tmp_path, env=env)
    assert "1 changed" in tagged.stdout, tagged.stdout
    (root / "seals.md").write_text("# Seals\n\nReplace yearly.\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "Document the seal schedule", when="2025-11-05T08:00:00+00:00")
    synced = run("index", "sync", str(root), "--index", "repo", cwd=tmp_path, env=env)
    assert synced.returncode == 0, synced.stderr
    assert "1 added, 1 changed" in synced.stdout, synced.stdout  # seals.md, and the history
    found = run("search", "seal schedule", "--index", "repo", "--json", cwd=tmp_path, env=env)
    assert '"Document the seal schedule"' in found.stdout


def test_a_folder_that_is_no_repository_or_git_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """--git-log on a folder without .git reads its files as before; a repository read where git is not on the PATH
    is named unreadable with the reason, its files read."""
    from local_rag.corpus.readers import CorpusReport, read_corpus

    plain = tmp_path / "notes"
    plain.mkdir()
    (plain / "a.md").write_text("# A\n\nText.\n")
    assert [p.doc_id for p in read_corpus(plain, options=ReadOptions(git_log=True))] == ["a.md"]
    root = _repo(tmp_path / "repo")
    (root / "notes.md").write_text("# Notes\n\nValves.\n")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    report = CorpusReport()
    assert [p.doc_id for p in read_corpus(root, report=report, options=ReadOptions(git_log=True))] == ["notes.md"]
    assert report.unreadable == {".git": "git is not installed here: the repository's history cannot be read"}


def test_a_sync_after_a_commit_keeps_the_vectors_of_the_older_commits(tmp_path: Path, fake_settings, hash_embedder):
    """The history is one document that changes with each commit; its older commits' text does not, so their chunks
    keep their vectors (`index.sync.reusable`): a sync embeds the new commit only."""
    from local_rag.index.sync import sync_index

    root = _repo(tmp_path / "repo")
    first = sync_index(fake_settings, root, embedder=hash_embedder, progress=False, options=ReadOptions(git_log=True))
    assert first.built and first.manifest.git_log
    _git(root, "commit", "-q", "--allow-empty", "-m", "Note the pump audit", when="2025-11-06T08:00:00+00:00")
    result = sync_index(fake_settings, root, embedder=hash_embedder, progress=False)  # the index kept --git-log
    assert result.plan.changed == [".git"] and result.embedded_chunks == 1
    assert result.reused_chunks == first.manifest.chunks  # every chunk of the two older commits


def test_a_worktrees_history_is_read_and_known_by_its_commit(tmp_path: Path):
    """A worktree (or a submodule) has a `.git` file naming its repository: its history is read as a repository's,
    and its digest follows the worktree's commit, not the file's bytes (which never change)."""
    from local_rag.corpus.digest import file_digest

    root = _repo(tmp_path / "repo")
    _git(root, "worktree", "add", "-q", str(tmp_path / "work"), "-b", "work")
    work = tmp_path / "work"
    assert (work / ".git").is_file()
    before = file_digest(work / ".git")
    assert read_document(work / ".git").sections[0].heading == "Raise the retry timeout to 30 s"
    _git(work, "commit", "-q", "--allow-empty", "-m", "Work in the worktree", when="2025-11-07T08:00:00+00:00")
    assert file_digest(work / ".git") != before
    assert read_document(work / ".git").sections[0].heading == "Work in the worktree"

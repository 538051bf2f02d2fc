"""``--gitignore`` (`local_rag.corpus.gitignore`): a repository's ``.gitignore`` files, at every depth, leave out of an
index what git leaves out of a commit. The files read are checked against git's own answer (``git ls-files --cached
--others --exclude-standard`` in the same folder), and the commands as a user runs them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from local_rag.corpus.options import ReadOptions
from local_rag.corpus.readers import folder_files, relative_name

FILES = {
    ".gitignore": "# build output\nbuild/\n*.log\n!keep.log\n/top-only.md\ndocs/**/*.tmp\n",
    "README.md": "# Valves\n\nA project that opens and closes valves.\n",
    "top-only.md": "ignored at the top only\n",
    "src/top-only.md": "read: the pattern is anchored at the top\n",
    "src/valves.py": "def close_all(grace_seconds):\n    return grace_seconds\n",
    "src/run.log": "a log\n",
    "keep.log": "taken back in by !keep.log\n",
    "build/generated.py": "GENERATED = True\n",
    "src/build/also.py": "ALSO = True\n",  # "build/" matches at any depth
    "docs/guide.md": "# Guide\n\nHow to open a valve.\n",
    "docs/drafts/old.tmp": "a draft\n",
    "web/.gitignore": "dist/\n/local.js\n!important.log\n",
    "web/main.js": "export function open() {}\n",
    "web/local.js": "// this machine's settings\n",
    "web/sub/local.js": "// read: /local.js is anchored at web/\n",
    "web/dist/bundle.js": "var a=1;\n",
    "web/important.log": "taken back in by web/.gitignore\n",
}


def _repo(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_files_read_are_those_git_would_commit(tmp_path: Path):
    """Every .gitignore applies under its own folder, the deeper first, with git's rules: a name at any depth, a
    leading / anchored at its folder, dir/ for folders, **, and ! taking a file back in; git agrees file for file."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed here")
    root = _repo(tmp_path / "repo")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True, text=True).stdout.split()
    found = folder_files(root, gitignore=True)
    assert sorted(relative_name(root, p) for p in found.files) == sorted(n for n in listed if "/." not in f"/{n}")
    assert found.ignored == ["build/", "docs/drafts/old.tmp", "src/build/", "src/run.log", "top-only.md",
                             "web/dist/", "web/local.js"]
    assert len(folder_files(root).files) == len(found.files) + 7  # without --gitignore: all of them (hidden aside)


def test_index_build_with_gitignore_keeps_it_and_a_sync_reads_the_files_again(tmp_path: Path):
    """`index build --code --gitignore` leaves out what the .gitignore files name and says how much; `index info`
    says the index keeps it; a sync without the option reads the .gitignore files again: a folder added to one is
    removed from the index."""
    from .test_cli import run

    root = _repo(tmp_path / "repo")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    built = run("index", "build", str(root), "--sparse-only", "--code", "--gitignore", "--index", "repo",
                cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    assert "7 file(s) or folder(s) the .gitignore files name left out (--gitignore)" in built.stderr
    assert "names the files git leaves out" not in built.stderr  # the hint is for a build without the option
    listed = run("index", "documents", "repo", "--json", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    names = {d["document"] for d in json.loads(listed.stdout)}
    assert "src/valves.py" in names and "web/important.log" not in names  # a .log is no document: never read
    assert not names & {"build/generated.py", "web/dist/bundle.js", "web/local.js", "top-only.md"}
    info = run("index", "info", "repo", cwd=tmp_path, env=env)
    assert "what the folder's .gitignore files name is left out (--gitignore: at every add and sync)" in info.stdout
    with (root / ".gitignore").open("a") as ignore:
        ignore.write("docs/\n")
    synced = run("index", "sync", str(root), "--index", "repo", cwd=tmp_path, env=env)
    assert synced.returncode == 0, synced.stderr
    assert "1 removed" in synced.stdout and "left out by .gitignore" in synced.stdout, synced.stdout
    plain = run("index", "build", str(root), "--sparse-only", "--code", "--index", "plain", cwd=tmp_path, env=env)
    assert "`--gitignore` leaves them out of the index too" in plain.stderr


def test_watch_sleeps_through_a_build_and_wakes_for_a_gitignore(tmp_path: Path):
    """`index sync --watch --gitignore`: a build writing what .gitignore names (build/) wakes nothing; a change to a
    .gitignore (hidden, which wakes nothing otherwise) does, since what the index leaves out changed."""
    import threading

    from local_rag.index.sync import watch

    root = _repo(tmp_path / "repo")
    woke, stop, edited = threading.Event(), threading.Event(), threading.Event()
    calls: list[bool] = []  # whether the .gitignore had been written when the watcher woke

    def on_change() -> None:
        calls.append(edited.is_set())
        woke.set()
        stop.set()

    def edit() -> None:
        (root / "web" / ".gitignore").write_text("dist/\n")
        edited.set()

    thread = threading.Thread(target=watch, args=(root, on_change), kwargs={
        "debounce_ms": 200, "stop_event": stop, "options": ReadOptions(gitignore=True)})
    thread.start()
    try:
        threading.Timer(0.3, lambda: (root / "build" / "out.md").write_text("# Built\n")).start()
        threading.Timer(0.5, lambda: (root / "web" / "dist" / "app.js").write_text("var b=2;\n")).start()
        threading.Timer(1.5, edit).start()
        assert woke.wait(60), "the watcher did not wake for the .gitignore"
    finally:
        stop.set()
        thread.join(10)
    assert calls == [True]  # once: for the .gitignore, not for the build's output


def _git_listed(folder: Path) -> list[str]:
    return sorted(subprocess.run(["git", "-C", str(folder), "ls-files", "--cached", "--others", "--exclude-standard"],
                                 check=True, capture_output=True, text=True).stdout.split())


def test_a_repositorys_exclude_file_the_users_and_the_folders_above_apply_as_in_git(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    """Git's other sources of ignore rules: the repository's .git/info/exclude, the user's excludes file (the default
    ~/.config/git/ignore, or core.excludesFile), and, for a folder inside a repository, the .gitignore files above it
    up to the top. Git agrees file for file, at the top and in a subfolder."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed here")
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.swp\nnotes-to-self.md\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = _repo(tmp_path / "repo")
    for name in ("web/notes-to-self.md", "web/main.js.swp", "docs/secret.md", "web/secret.md", "web/keep/x.swp"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("left out\n")
    (root / "web" / "keep" / ".gitignore").write_text("!x.swp\n")  # a .gitignore outranks the user's file
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("/docs/secret.md\nsecret.md\n")
    for folder in (root, root / "web", root / "docs"):
        found = folder_files(folder, gitignore=True)
        assert sorted(relative_name(folder, p) for p in found.files) == [
            n for n in _git_listed(folder) if "/." not in f"/{n}" and not n.startswith(".")], folder
    web = folder_files(root / "web", gitignore=True)
    assert web.ignored == ["dist/", "local.js", "main.js.swp", "notes-to-self.md", "secret.md"]
    assert "keep/x.swp" in [relative_name(root / "web", p) for p in web.files]
    assert "run.log" not in {p.name for p in folder_files(root / "src", gitignore=True).files}  # the top's *.log

    (root / "web" / "dist" / "other.js").write_text("var b=2;\n")
    (root / ".env.example").write_text("TOKEN=\n")
    (root / "env.example").write_text("TOKEN=\n")
    with (root / ".gitignore").open("a") as ignore:
        ignore.write("env.*\n")
    subprocess.run(["git", "-C", str(root), "add", "-f", "web/dist/bundle.js", "env.example"], check=True)
    for folder in (root, root / "web"):  # a file git tracks is never left out, in an ignored folder or not
        assert sorted(relative_name(folder, p) for p in folder_files(folder, gitignore=True).files) == [
            n for n in _git_listed(folder) if "/." not in f"/{n}" and not n.startswith(".")], folder
    assert {"dist/bundle.js"} == {relative_name(root / "web", p) for p in folder_files(root / "web", gitignore=True).files
                                  if "dist" in str(p)}  # its untracked neighbour is still left out

    (home / "elsewhere.ignore").write_text("guide.md\n")  # core.excludesFile replaces the default file
    subprocess.run(["git", "-C", str(root), "config", "core.excludesFile", "~/elsewhere.ignore"], check=True)
    docs = folder_files(root / "docs", gitignore=True)
    assert [relative_name(root / "docs", p) for p in docs.files] == [
        n for n in _git_listed(root / "docs") if not n.startswith(".")] == []
    assert "web/notes-to-self.md" in {relative_name(root, p) for p in folder_files(root, gitignore=True).files}


def test_a_folder_outside_any_repository_reads_its_gitignore_files_only(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch):
    """No .git above: the folder's own .gitignore files, and neither the user's excludes file (git reads it only in
    a repository) nor anything above the folder."""
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.md\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (tmp_path / ".gitignore").write_text("*\n")  # above the folder, and no repository: not read
    root = _repo(tmp_path / "plain")
    names = {relative_name(root, p) for p in folder_files(root, gitignore=True).files}
    assert {"README.md", "docs/guide.md", "src/valves.py"} <= names and "src/run.log" not in names


def test_watch_wakes_for_the_repositorys_exclude_file(tmp_path: Path):
    """`index sync --watch --gitignore` in a repository: .git is hidden and wakes nothing, save its info/exclude,
    whose rules the index follows."""
    import threading

    from local_rag.index.sync import watch

    root = _repo(tmp_path / "repo")
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    woke, stop, edited = threading.Event(), threading.Event(), threading.Event()
    calls: list[bool] = []

    def on_change() -> None:
        calls.append(edited.is_set())
        woke.set()
        stop.set()

    def edit() -> None:
        (root / ".git" / "info" / "exclude").write_text("docs/\n")
        edited.set()

    thread = threading.Thread(target=watch, args=(root, on_change), kwargs={
        "debounce_ms": 200, "stop_event": stop, "options": ReadOptions(gitignore=True)})
    thread.start()
    try:
        threading.Timer(0.3, lambda: (root / ".git" / "index").write_bytes(b"DIRC")).start()
        threading.Timer(1.2, edit).start()
        assert woke.wait(60), "the watcher did not wake for .git/info/exclude"
    finally:
        stop.set()
        thread.join(10)
    assert calls == [True]

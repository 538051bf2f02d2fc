"""``--exclude``: files and folders an index leaves out, at its build and at every later add and sync (real bm25s and
FAISS indexes, the hash embedder; the CLI as a process)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from local_rag.corpus.options import ReadOptions
from local_rag.corpus.readers import CorpusReport, folder_files, read_corpus
from local_rag.errors import BadInputError
from local_rag.index import add_documents, build_index, open_index
from local_rag.index.manifest import IndexManifest
from local_rag.index.sync import sync_index
from local_rag.index.verify import verify_index
from local_rag.settings import Settings

from .conftest import CORPUS, HashEmbedder, write_jsonl
from .test_cli import assert_clean_error, run
from .test_scope import write_folder

NOTES = {
    "cats.md": "# Cats\n\nCats purr and sleep most of the day.",
    "drafts/plan.md": "# Plan\n\nA draft plan about dogs, not for answers.",
    "drafts/deep/more.md": "# More\n\nAnother draft.",
    "archive/fish.md": "# Fish\n\nAn archived note about fish.",
    "debug.txt": "debug output",
    "Readme.TXT": "read me",
}


def docs(settings: Settings) -> list[str]:
    return sorted({c.doc_id for c in open_index(settings, derived=False).chunks})


def test_a_folder_walk_leaves_out_what_the_patterns_name_and_never_enters_an_excluded_folder(tmp_path: Path):
    folder = write_folder(tmp_path / "notes", NOTES)
    found = folder_files(folder, ["drafts", "*.txt"])
    assert sorted(p.relative_to(folder).as_posix() for p in found.files) == ["archive/fish.md", "cats.md"]
    assert found.excluded == ["Readme.TXT", "debug.txt", "drafts/"]  # the folder once, not its files: never walked
    assert folder_files(folder).excluded == [] and len(folder_files(folder).files) == 6


def test_records_are_left_out_by_document_id(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    report = CorpusReport()
    with caplog.at_level(logging.WARNING, logger="local_rag.corpus"):
        kept = list(read_corpus(corpus, report=report, options=ReadOptions(exclude=("d1", "D3"))))
    assert {p.doc_id for p in kept} == {"d2", "d4", "d5"} and report.excluded == ["d1", "d3"]
    assert "note: 2 document(s) left out by --exclude d1 D3: d1, d3" in caplog.text


def test_build_add_and_sync_keep_the_patterns_and_restore_forgets_them(fake_settings: Settings,
                                                                       hash_embedder: HashEmbedder, tmp_path: Path):
    folder = write_folder(tmp_path / "notes", NOTES)
    manifest = build_index(fake_settings, folder, embedder=hash_embedder, progress=False,
                           options=ReadOptions(exclude=("drafts", str(folder / "debug.txt"), "readme.txt")))  # a shell path is read inside
    assert manifest.exclude == ["drafts", "debug.txt", "readme.txt"]
    assert docs(fake_settings) == ["archive/fish.md", "cats.md"]
    assert IndexManifest.load(fake_settings.index_dir).exclude == manifest.exclude
    (folder / "drafts" / "new.md").write_text("# New\n\nA new draft.")
    (folder / "dogs.md").write_text("# Dogs\n\nDogs bark.")
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert result.plan.added == ["dogs.md"] and result.plan.excluded == ["Readme.TXT", "debug.txt", "drafts/"]
    assert "3 left out by --exclude" in result.plan.summary()
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False, options=ReadOptions(exclude=("archive",)))
    assert result.plan.removed == ["archive/fish.md"] and docs(fake_settings) == ["cats.md", "dogs.md"]
    assert result.manifest.exclude == ["drafts", "debug.txt", "readme.txt", "archive"]
    chunks_file = fake_settings.index_dir / "chunks.jsonl"
    written = chunks_file.stat().st_mtime_ns
    again = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False, options=ReadOptions(exclude=("*.pdf",)))  # nothing
    assert again.plan.empty and IndexManifest.load(fake_settings.index_dir).exclude[-1] == "*.pdf"  # still kept
    assert chunks_file.stat().st_mtime_ns == written  # the manifest alone was written, not the index again
    assert verify_index(fake_settings.index_dir, deep=True) == []  # and the index still checks out
    more = write_folder(tmp_path / "more", {"drafts/x.md": "# X\n\nx", "extra.md": "# Extra\n\nMore text.",
                                            "skip/me.md": "# Skip\n\nskip"})
    add_documents(fake_settings, more, embedder=hash_embedder, progress=False, exclude=["skip"])
    assert docs(fake_settings) == ["cats.md", "dogs.md", "extra.md"]  # the index's patterns apply to an add too
    assert IndexManifest.load(fake_settings.index_dir).exclude[-1] == "skip"
    restored = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False, restore=True)
    assert restored.manifest.exclude == [] and "drafts/plan.md" in docs(fake_settings)
    assert "archive/fish.md" in docs(fake_settings) and "debug.txt" in docs(fake_settings)
    with pytest.raises(BadInputError, match=r"no \.txt, .* files found \(--exclude left out 6 file\(s\) or folder\(s\)\)"):
        build_index(fake_settings, folder, embedder=hash_embedder, progress=False, options=ReadOptions(exclude=("*",)))


def test_the_cli_says_what_was_left_out_and_what_a_rebuild_reads_again(tmp_path: Path):
    write_folder(tmp_path / "notes", NOTES)
    built = run("index", "build", "notes", "--sparse-only", "--exclude", "drafts,*.txt", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "note: 3 file(s) or folder(s) left out by --exclude drafts *.txt: Readme.TXT, debug.txt, drafts/" in built.stderr
    info = run("index", "info", cwd=tmp_path)
    assert "exclude          drafts *.txt (adds and syncs leave these out; `index sync --restore` forgets them)" in info.stdout
    synced = json.loads(run("index", "sync", "notes", "--json", "--exclude", "notes/archive", cwd=tmp_path).stdout)
    assert synced["removed"] == ["archive/fish.md"] and synced["excluded"] == ["Readme.TXT", "archive/", "debug.txt",
                                                                               "drafts/"]
    rebuilt = run("index", "build", "notes", "--sparse-only", "--exclude", "notes/drafts", cwd=tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr  # drafts given again as the shell shows it: not named below
    assert ("note: index default left out '*.txt' 'archive' (--exclude); this build reads them: give "
            "--exclude again to leave them out") in rebuilt.stderr
    assert_clean_error(run("index", "build", "notes", "--sparse-only", "--exclude", "*", cwd=tmp_path), 2,
                       "files found (--exclude left out 5 file(s) or folder(s))")


def test_exclude_from_reads_a_gitignore_and_names_what_it_cannot_say(tmp_path: Path):
    """A project's `.gitignore` as the list: `build/` at any depth, `*.txt` anywhere, `/drafts` at the top only; a
    negation (`!keep.txt`) cannot be said by patterns that only leave out, and is named rather than ignored."""
    write_folder(tmp_path / "proj", {"README.md": "# Proj\n\nAbout.", "build/out.md": "# Out\n\nGenerated.",
                                     "src/build/gen.md": "# Gen\n\nGenerated too.", "drafts/a.md": "# A\n\nDraft.",
                                     "src/drafts/b.md": "# B\n\nKept: not at the top.", "keep.txt": "kept?",
                                     "notes/n.txt": "a note"})
    (tmp_path / "proj" / ".gitignore").write_text("# build output\nbuild/\n*.txt\n/drafts\n!keep.txt\n")
    built = run("index", "build", "proj", "--sparse-only", "--exclude-from", "proj/.gitignore", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert ("note: --exclude-from proj/.gitignore: 1 line(s) it cannot say, not applied: !keep.txt (local-rag leaves "
            "files out and never takes them back in)") in built.stderr
    listed = [d["document"] for d in json.loads(run("index", "documents", "--json", cwd=tmp_path).stdout)]
    assert listed == ["README.md", "src/drafts/b.md"]
    assert_clean_error(run("index", "build", "proj", "--sparse-only", "--exclude-from", "nope.txt", cwd=tmp_path), 2,
                       "--exclude-from nope.txt: cannot read it (No such file or directory)")

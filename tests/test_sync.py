"""``index sync``: after an add, a change, a delete and a rename, the index equals a fresh build of the folder."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from local_rag.corpus.options import ReadOptions
from local_rag.index import build_index, open_index
from local_rag.index.sync import sync_index
from local_rag.records import Query
from local_rag.retrieve import HybridRetriever
from local_rag.settings import Settings

from .conftest import MODELS, HashEmbedder, needs_minilm
from .docs_fixtures import make_folder, make_pdf
from .test_cli import run

QUESTIONS = ["harvest barley tonnes", "warehouse pallets solar", "tidal turbines", "glacier moraine debris", "lake water"]


def state(settings: Settings, embedder: HashEmbedder) -> tuple[set[str], str, list[list[tuple[str, float]]]]:
    index = open_index(settings, model_checksum=embedder.checksum)
    hybrid = HybridRetriever(index, settings, embedder)
    ranked = [[(h.passage_id, round(h.score, 5)) for h in hybrid.search([Query(q)], top_k=5)] for q in QUESTIONS]
    texts = {f"{c.id}|{c.title}|{c.section}|{c.page}|{c.text}" for c in index.chunks}
    return texts, index.manifest.corpus_hash, ranked


def test_sync_equals_a_fresh_build(tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder):
    folder = make_folder(tmp_path / "docs")
    first = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert first.built and len(first.plan.added) == 6
    again = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert again.plan.empty and again.plan.unchanged == 6 and not again.built

    make_pdf(folder / "new.pdf", ["Beekeeping log\nThe hives produced clover honey in June."])  # add
    (folder / "notes.md").write_text("# Field notes\n\n## Sampling\n\nWe sampled lake water daily, not weekly.\n")  # change
    (folder / "review.docx").unlink()  # delete
    shutil.move(folder / "guide.html", folder / "glaciers.html")  # rename
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 nonsense")  # unreadable: reported, the sync goes on
    before = hash_embedder.calls
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert sorted(result.plan.added) == ["broken.pdf", "glaciers.html", "new.pdf"]
    assert result.plan.changed == ["notes.md"] and sorted(result.plan.removed) == ["guide.html", "review.docx"]
    assert set(result.unreadable) == {"broken.pdf"}
    assert hash_embedder.calls - before == result.embedded_chunks  # only the new and changed files were embedded
    synced = state(fake_settings, hash_embedder)
    assert sync_index(fake_settings, folder, embedder=hash_embedder, progress=False).plan.empty

    fresh_settings = fake_settings.model_copy(update={"index": "fresh"})
    fresh_manifest = build_index(fresh_settings, folder, embedder=hash_embedder, progress=False)
    assert synced == state(fresh_settings, hash_embedder)
    manifest = open_index(fake_settings, model_checksum=hash_embedder.checksum).manifest
    assert manifest.unreadable == fresh_manifest.unreadable == {"broken.pdf": fresh_manifest.unreadable["broken.pdf"]}
    files = json.loads((fake_settings.index_dir / "files.json").read_text())
    assert files == json.loads((fresh_settings.index_dir / "files.json").read_text())
    assert manifest.history[-1]["action"] == "sync"


def test_sync_cli_says_when_nothing_changed(tmp_path: Path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nAlpha text about rivers.\n")
    (folder / "b.txt").write_text("Beta text about mountains.\n")
    args = ["index", "sync", str(folder), "--index", "notes", "--profile", "cpu-test"]
    env = {"LOCAL_RAG_DENSE__ENABLED": "false", "LOCAL_RAG_RETRIEVAL__RETRIEVERS": '["bm25"]',
           "LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    first = run(*args, cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    assert "built it" in first.stdout
    second = run(*args, cwd=tmp_path, env=env)
    assert second.returncode == 0 and "nothing to do" in second.stdout
    (folder / "b.txt").unlink()
    third = run(*args, "--json", cwd=tmp_path, env=env)
    assert third.returncode == 0 and json.loads(third.stdout)["removed"] == ["b.txt"]
    # building the same folder again: done, with the advice that sync reads only what changed
    rebuilt = run("index", "build", str(folder), *args[3:], cwd=tmp_path, env=env)
    assert rebuilt.returncode == 0 and "note: index notes already holds" in rebuilt.stderr, rebuilt.stderr
    assert "index sync" in rebuilt.stderr


def test_watch_syncs_on_change(tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder):
    import threading

    from local_rag.index.sync import watch

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nRivers and lakes.\n")
    sync_index(fake_settings, folder, embedder=hash_embedder, progress=False, options=ReadOptions(exclude=("drafts",)))
    (folder / ".trash").mkdir()
    (folder / "drafts").mkdir()
    synced, stop = threading.Event(), threading.Event()
    calls = []

    def on_change() -> None:
        calls.append(1)
        if sync_index(fake_settings, folder, embedder=hash_embedder, progress=False).plan.added == ["b.md"]:
            synced.set()
            stop.set()

    thread = threading.Thread(target=watch, args=(folder, on_change), kwargs={"debounce_ms": 200, "stop_event": stop,
                                                                              "options": ReadOptions(exclude=("drafts",))})
    thread.start()
    try:  # a hidden file and an excluded one change first: they wake nothing (the index leaves them out)
        threading.Timer(0.3, lambda: (folder / ".trash" / "old.md").write_text("# Old\n\nDeleted.\n")).start()
        threading.Timer(0.5, lambda: (folder / "drafts" / "x.md").write_text("# Draft\n\nNot yet.\n")).start()
        threading.Timer(1.2, lambda: (folder / "b.md").write_text("# Beta\n\nMountains.\n")).start()
        assert synced.wait(60), "the watcher did not sync the new file"
    finally:
        stop.set()
        thread.join(10)
    assert len(calls) == 1
    assert {c.doc_id for c in open_index(fake_settings, model_checksum=hash_embedder.checksum).chunks} == {"a.md", "b.md"}


def test_a_file_name_that_is_not_utf8_is_indexed_and_synced(tmp_path: Path, fake_settings: Settings,
                                                            hash_embedder: HashEmbedder):
    """A name in a legacy encoding (Latin-1 "café.txt", as old archives unpack on Linux) is kept by Python as a lone
    surrogate, which crashed the build with a UnicodeEncodeError; it is indexed under its name spelled with a
    backslash escape, and a change to it is synced like any other."""
    import os

    folder = tmp_path / "docs"
    folder.mkdir()
    legacy = folder / os.fsdecode(b"caf\xe9 menu.txt")
    legacy.write_text("The cafe serves barley soup on Mondays.", encoding="utf-8")
    (folder / "café menu.txt").write_text("The café in UTF-8 serves lake trout.", encoding="utf-8")  # no collision
    first = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert sorted(first.plan.added) == ["caf\\xe9 menu.txt", "café menu.txt"] and not first.unreadable
    legacy.write_text("The cafe serves tidal turbines soup on Fridays.", encoding="utf-8")
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert result.plan.changed == ["caf\\xe9 menu.txt"] and result.plan.unchanged == 1
    index = open_index(fake_settings, model_checksum=hash_embedder.checksum)
    texts = {c.doc_id: (c.title, c.text) for c in index.chunks}
    assert "Fridays" in texts["caf\\xe9 menu.txt"][1] and texts["caf\\xe9 menu.txt"][0] == "caf\\xe9 menu"
    assert json.loads((fake_settings.index_dir / "files.json").read_text()).keys() == texts.keys()


def test_renamed_and_moved_files_keep_their_vectors(tmp_path: Path, fake_settings: Settings,
                                                   hash_embedder: HashEmbedder):
    """Session 52: a renamed or moved file is a deletion plus an addition, and its every chunk was embedded again (a
    folder of PDFs reorganised into subfolders cost as much as its first build). Now a new chunk whose indexed text
    (header and chunk) a removed or changed file's chunk had takes that chunk's vector; the index still equals a
    fresh build of the folder."""
    folder = make_folder(tmp_path / "docs")
    sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    chunks_of = Counter(c.doc_id for c in open_index(fake_settings, model_checksum=hash_embedder.checksum).chunks)
    (folder / "2024").mkdir()
    (folder / "report.pdf").rename(folder / "2024" / "report.pdf")  # moved: its title and pages come from the PDF
    (folder / "notes.md").rename(folder / "field-notes.md")  # renamed: its title is its first heading
    before = hash_embedder.calls
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert sorted(result.plan.added) == ["2024/report.pdf", "field-notes.md"]
    assert sorted(result.plan.removed) == ["notes.md", "report.pdf"]
    assert result.embedded_chunks == 0 and hash_embedder.calls == before  # nothing embedded again
    assert result.reused_chunks == chunks_of["report.pdf"] + chunks_of["notes.md"]
    fresh = fake_settings.model_copy(update={"index": "fresh"})
    build_index(fresh, folder, embedder=hash_embedder, progress=False)
    assert state(fake_settings, hash_embedder) == state(fresh, hash_embedder)


def test_hidden_folders_and_files_are_left_out_and_named(tmp_path: Path, fake_settings: Settings,
                                                         hash_embedder: HashEmbedder, caplog):
    """A notes vault's `.trash` (deleted notes), `.obsidian`, `.git` and dot-files are not read (before, a deleted note
    in `.trash` answered questions beside the live one); the build names them once; an index built before that kept
    them loses them at its next sync."""
    from local_rag.corpus.readers import folder_files
    from local_rag.index.sync import plan_sync

    folder = tmp_path / "vault"
    for rel, text in {"plan.md": "The launch date is May 3.", ".trash/plan.md": "The launch date is April 1.",
                      "notes/.obsidian/app.md": "settings", ".draft.md": "a draft", ".git/HEAD": "ref"}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    (folder / "notes" / "loop").symlink_to(folder, target_is_directory=True)  # a link back up is not followed
    (folder / "notes" / "gone.md").symlink_to(tmp_path / "moved-away.md")  # a link to nothing is named, not read
    files, hidden, broken, looped, *_ = folder_files(folder)
    assert [p.relative_to(folder).as_posix() for p in files] == ["plan.md"]
    assert hidden == [".draft.md", ".git", ".trash", "notes/.obsidian"] and broken == ["notes/gone.md"]
    assert looped == []  # a link to a folder inside is read at its own place, without a word
    with caplog.at_level("WARNING", logger="local_rag.corpus"):
        manifest = build_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert manifest.passages == 1 and "4 hidden folder(s) or file(s) not read" in caplog.text
    assert "1 link(s) to nothing skipped: notes/gone.md" in caplog.text and manifest.skipped == 1
    assert f"index build {folder / '.trash'}" in caplog.text  # the hint names a hidden folder other than .git
    assert "(.git: `--git-log` reads the repository's history)" in caplog.text  # session 59: never git's insides
    plan = plan_sync(folder, {"plan.md": json.loads((fake_settings.index_dir / "files.json").read_text())["plan.md"],
                              ".trash/plan.md": "digest of an index built before"})
    assert plan.removed == [".trash/plan.md"] and plan.unchanged == 1 and not plan.added


def test_a_linked_folder_elsewhere_is_read_and_synced_loops_are_named(tmp_path: Path, fake_settings: Settings,
                                                                      hash_embedder: HashEmbedder, caplog):
    """Session 52: a vault's ``work -> /mnt/share/work`` (a link to a folder elsewhere) was passed over in silence: its
    notes were never indexed and nothing said so. Now it is read, its files named through the link, and kept by
    sync; links to a folder above them (a loop) or to one already read through another link are named, not read."""
    from local_rag.corpus.readers import folder_files

    share = tmp_path / "share" / "work"
    share.mkdir(parents=True)
    (share / "budget.md").write_text("# Budget\n\nThe travel budget is 4,000 euros.\n", encoding="utf-8")
    folder = tmp_path / "vault"
    (folder / "daily").mkdir(parents=True)
    (folder / "plan.md").write_text("The launch date is May 3.", encoding="utf-8")
    (folder / "work").symlink_to(share, target_is_directory=True)
    (folder / "daily" / "work-again").symlink_to(share, target_is_directory=True)  # read once, through `work`
    (folder / "daily" / "up").symlink_to(tmp_path, target_is_directory=True)  # holds the vault: a loop
    (share / "back").symlink_to(share.parent, target_is_directory=True)  # a loop inside the linked folder
    found = folder_files(folder)
    assert [p.relative_to(folder).as_posix() for p in found.files] == ["plan.md", "work/budget.md"]
    assert found.looped == ["daily/up", "daily/work-again", "work/back"]
    with caplog.at_level("WARNING", logger="local_rag.corpus"):
        first = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert sorted(first.plan.added) == ["plan.md", "work/budget.md"]
    assert "3 link(s) to a folder above them or read through another link, not followed: daily/up" in caplog.text
    (share / "budget.md").write_text("# Budget\n\nThe travel budget is 5,500 euros.\n", encoding="utf-8")
    again = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert again.plan.changed == ["work/budget.md"] and again.plan.unchanged == 1
    texts = {c.doc_id: c.text for c in open_index(fake_settings, model_checksum=hash_embedder.checksum).chunks}
    assert "5,500 euros" in texts["work/budget.md"]


def test_folders_of_installed_packages_are_left_out_and_named(tmp_path: Path, fake_settings: Settings,
                                                             hash_embedder: HashEmbedder, caplog):
    """Session 52: `index build ~/project` read every installed package's README and licence (node_modules, a
    `venv`, `__pycache__`), which then answered questions beside the project's own documents. Now such folders are
    left out and named, with the way to index one."""
    from local_rag.corpus.readers import folder_files

    folder = tmp_path / "project"
    for rel, text in {"docs/guide.md": "# Guide\n\nOur API returns JSON.", "node_modules/left-pad/README.md": "# left-pad",
                      "venv/lib/python3.11/site-packages/x/README.md": "# x", "venv/pyvenv.cfg": "home = /usr/bin",
                      "src/__pycache__/notes.txt": "cache", "src/notes.txt": "The build runs nightly.",
                      "vendor/modules.txt": "# github.com/pkg/errors v0.9.1", "vendor/github.com/pkg/errors/README.md":
                      "# errors", "contracts/vendor/acme.md": "Acme supplies pumps."}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    found = folder_files(folder)
    assert [p.relative_to(folder).as_posix() for p in found.files] == [
        "contracts/vendor/acme.md", "docs/guide.md", "src/notes.txt"]  # a vendor folder of one's own is read
    assert found.packages == ["node_modules", "src/__pycache__", "vendor", "venv"]  # session 59: Go's vendored modules
    with caplog.at_level("WARNING", logger="local_rag.corpus"):
        manifest = build_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert manifest.passages == 3
    assert ("4 folder(s) of installed packages not read: node_modules, src/__pycache__, vendor, venv (to index one, name it: "
            f"`index build {folder / 'node_modules'}`)") in caplog.text


def test_add_remove_and_rebuild_keep_what_sync_knows_and_a_removed_document_stays_out(
        tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder):
    """Before, `index add`, `index remove` and `index rebuild` dropped ``files.json``: the next sync re-read and
    re-embedded every document of the folder (an hour on a large one) and brought back what `remove --by doc` took
    out. Now they carry it, a removed document stays out of sync (named in the plan and `index info`) until
    ``restore``, a left-out file deleted from the folder is forgotten, and the rest still equals a fresh build."""
    from local_rag.index import add_documents, remove_documents
    from local_rag.index.folder import rebuild_index

    folder = make_folder(tmp_path / "docs")
    sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"id": "x1", "title": "Extra", "text": "Tidal turbines in the estuary."}) + "\n")
    add_documents(fake_settings, extra, embedder=hash_embedder, progress=False)
    rebuild_index(fake_settings)
    remove_documents(fake_settings, ["notes.md"], by="doc")
    before = hash_embedder.calls
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert result.plan.empty and result.plan.left_out == ["notes.md"] and result.plan.unchanged == 5
    assert hash_embedder.calls == before  # nothing read or embedded again
    index = open_index(fake_settings, model_checksum=hash_embedder.checksum)
    assert index.manifest.left_out == ["notes.md"] and "notes.md" not in {c.doc_id for c in index.chunks}
    assert "x1" in {c.passage_id for c in index.chunks}  # what `index add` put in stays: not a file of the folder
    (folder / "notes.md").write_text("# Field notes\n\nA change while it is left out.\n")
    assert sync_index(fake_settings, folder, embedder=hash_embedder, progress=False).plan.left_out == ["notes.md"]

    restored = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False, restore=True)
    assert restored.plan.added == ["notes.md"] and not restored.plan.left_out
    assert remove_documents(fake_settings, ["x1"], by="passage").left_out == []
    fresh_settings = fake_settings.model_copy(update={"index": "fresh"})
    build_index(fresh_settings, folder, embedder=hash_embedder, progress=False)
    assert state(fake_settings, hash_embedder) == state(fresh_settings, hash_embedder)

    remove_documents(fake_settings, ["review.docx"], by="doc")
    (folder / "review.docx").unlink()
    gone = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert gone.plan.removed == ["review.docx"] and not gone.plan.left_out
    assert open_index(fake_settings, model_checksum=hash_embedder.checksum).manifest.left_out == []


def test_index_remove_and_sync_cli_say_a_removed_document_stays_out(tmp_path: Path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nAlpha text about rivers.\n")
    (folder / "b.txt").write_text("Beta text about mountains.\n")
    common = ["--index", "notes", "--profile", "cpu-test"]
    env = {"LOCAL_RAG_DENSE__ENABLED": "false", "LOCAL_RAG_RETRIEVAL__RETRIEVERS": '["bm25"]',
           "LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    assert run("index", "sync", str(folder), *common, cwd=tmp_path, env=env).returncode == 0
    removed = run("index", "remove", "--by", "doc", "b.txt", *common, cwd=tmp_path, env=env)
    assert removed.returncode == 0 and "--restore" in removed.stdout, removed.stderr
    again = run("index", "sync", str(folder), *common, cwd=tmp_path, env=env)
    assert "1 left out (removed with `index remove`" in again.stdout and "nothing to do" in again.stdout
    info = run("index", "info", *common, cwd=tmp_path, env=env)
    assert "left out         b.txt" in info.stdout
    back = run("index", "sync", str(folder), *common, "--restore", "--json", cwd=tmp_path, env=env)
    assert json.loads(back.stdout)["added"] == ["b.txt"], back.stderr


def test_syncing_another_folder_that_would_remove_every_file_is_refused(tmp_path: Path, fake_settings: Settings,
                                                                         hash_embedder: HashEmbedder):
    """Before, `index sync ~/other --index notes` (a wrong folder or a wrong --index) removed every document of the
    index and indexed the other folder without a word. Now refused, nothing written, unless --replace; the same
    folder moved or renamed (its files still there) syncs as before, and so does the index's own folder emptied
    and refilled."""
    import pytest

    from local_rag.errors import BadInputError

    folder = make_folder(tmp_path / "docs")
    sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "z.md").write_text("# Zebras\n\nStripes and savannah.\n")
    before = (fake_settings.index_dir / "manifest.json").read_bytes()
    with pytest.raises(BadInputError, match=r"other holds none of the 6 files index .* has from .*docs: syncing would "
                                            r"remove them all; .* --replace"):
        sync_index(fake_settings, other, embedder=hash_embedder, progress=False)
    assert (fake_settings.index_dir / "manifest.json").read_bytes() == before
    moved = shutil.move(folder, tmp_path / "renamed")
    assert sync_index(fake_settings, Path(moved), embedder=hash_embedder, progress=False).plan.unchanged == 6
    followed = sync_index(fake_settings, other, embedder=hash_embedder, progress=False, replace=True)
    assert followed.plan.added == ["z.md"] and len(followed.plan.removed) == 6
    (other / "z.md").unlink()
    (other / "y.md").write_text("# Yaks\n\nHighland herds.\n")
    assert sync_index(fake_settings, other, embedder=hash_embedder, progress=False).plan.added == ["y.md"]


def test_byte_for_byte_copies_are_indexed_once_by_build_and_sync(tmp_path: Path, fake_settings: Settings,
                                                                  hash_embedder: HashEmbedder, caplog):
    """A download folder's "policy (1).md" beside "policy.md": before, both were indexed and a search returned the
    same text twice, filling the passages given to the LLM. Now the shorter name is read and the copy named in one
    note; sync keeps that as files come and go (the copy indexed when the original goes, dropped when it becomes a
    copy again) and equals a fresh build at each step."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "policy.md").write_text("# Warranty\n\nParts are covered for two years and labour for one year.\n")
    shutil.copy(folder / "policy.md", folder / "policy (1).md")
    (folder / "ship.md").write_text("# Shipping\n\nParcels take five days to arrive.\n")
    fresh_settings = fake_settings.model_copy(update={"index": "fresh"})

    def same_as_fresh() -> set[str]:
        shutil.rmtree(fresh_settings.index_dir, ignore_errors=True)
        build_index(fresh_settings, folder, embedder=hash_embedder, progress=False)
        assert state(fake_settings, hash_embedder) == state(fresh_settings, hash_embedder)
        return {c.doc_id for c in open_index(fake_settings, model_checksum=hash_embedder.checksum).chunks}

    with caplog.at_level("WARNING", logger="local_rag.corpus"):
        build_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert "1 file(s) are byte-for-byte copies of others, indexed once: policy (1).md (= policy.md)" in caplog.text
    assert same_as_fresh() == {"policy.md", "ship.md"}
    assert sync_index(fake_settings, folder, embedder=hash_embedder, progress=False).plan.empty

    (folder / "policy.md").unlink()  # the copy now holds the text
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert result.plan.removed == ["policy.md"] and result.plan.changed == ["policy (1).md"]
    assert same_as_fresh() == {"policy (1).md", "ship.md"}

    shutil.copy(folder / "policy (1).md", folder / "policy.md")  # back: the shorter name is read, the copy dropped
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert result.plan.added == ["policy.md"] and result.plan.dropped == ["policy (1).md"]
    assert "1 copy of another file (indexed once)" in result.plan.summary()
    assert same_as_fresh() == {"policy.md", "ship.md"}

    (folder / "ship.md").write_text((folder / "policy.md").read_text())  # now a third copy, with the shortest name
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert result.plan.changed == ["ship.md"] and result.plan.dropped == ["policy.md"]
    assert result.plan.copies == {"policy (1).md": "ship.md", "policy.md": "ship.md"}
    assert same_as_fresh() == {"ship.md"}


def test_removing_every_passage_of_a_document_by_id_leaves_it_out_too(tmp_path: Path, fake_settings: Settings,
                                                                        hash_embedder: HashEmbedder):
    """`index remove notes.md` (by passage: a one-passage document's passage id is its name) takes the whole
    document out: it stays out of sync like `--by doc`; removing some passages of a document leaves it in."""
    from local_rag.index import remove_documents

    folder = make_folder(tmp_path / "docs")
    sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert remove_documents(fake_settings, ["notes.md"]).left_out == ["notes.md"]
    assert remove_documents(fake_settings, ["report.pdf#p1"]).left_out == ["notes.md"]  # report.pdf#p2 is left
    result = sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    assert result.plan.empty and result.plan.left_out == ["notes.md"]


def rivers_index(tmp_path: Path) -> tuple[Settings, Path]:
    """A BM25 index `notes` of a folder with one note about rivers (no model needed): its settings and folder."""
    from local_rag.settings import load_settings

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Rivers\n\nThe river gauge read high in April.\n")
    settings = load_settings("cpu-test", overrides={
        "indexes_dir": str(tmp_path / "indexes"), "index": "notes", "dense": {"enabled": False},
        "retrieval": {"retrievers": ["bm25"]}, "chunker": {"tokenizer": "whitespace"}})
    sync_index(settings, folder, progress=False)
    return settings, folder


def test_a_pipeline_reopens_its_index_after_a_sync(tmp_path: Path):
    """`serve` or `chat` beside `index sync --watch`: before, they answered from the documents as they were when
    they started, until restarted. Now a turn that finds the index swapped since reopens it (one stat a turn)."""
    from local_rag.pipeline import Pipeline
    from local_rag.records import Conversation, Turn

    settings, folder = rivers_index(tmp_path)
    pipeline = Pipeline(settings)
    ask = [Query("glacier moraine", "lastturn")]
    assert not pipeline.retriever.search(ask, top_k=3) and not pipeline.refresh_index()
    (folder / "b.md").write_text("# Glaciers\n\nA moraine is debris a glacier left behind.\n")
    sync_index(settings, folder, progress=False)
    old = pipeline.retriever
    pipeline.answer(Conversation([Turn("user", "hello")]))  # small talk: no LLM, but the turn looks first
    assert pipeline.retriever is not old
    assert [h.passage_id for h in pipeline.retriever.search(ask, top_k=3)] == ["b.md"]
    assert not pipeline.refresh_index()


def test_index_list_and_delete(tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder):
    """`index list` names every index with its size and source (a folder that is not an index, with why);
    `index delete` removes an index with all that belongs to it, after asking, and refuses an unknown name before
    deleting anything."""
    from local_rag.adaptation import adaptation_file
    from local_rag.embed.journal import journal_folder
    from local_rag.index import add_documents

    folder = make_folder(tmp_path / "docs")
    sync_index(fake_settings, folder, embedder=hash_embedder, progress=False)
    extra = tmp_path / "extra.jsonl"  # an add is not what the index follows: it is still listed "from" its folder
    extra.write_text(json.dumps({"id": "x1", "title": "Extra", "text": "Tidal turbines in the estuary."}) + "\n")
    add_documents(fake_settings, extra, embedder=hash_embedder, progress=False)
    indexes = fake_settings.indexes_dir
    (indexes / "junk").mkdir()
    adaptation_file(indexes, "test").write_text("reranker: {model: adapted-test}\n")
    journal_folder(indexes, "test").mkdir()
    env = {"LOCAL_RAG_INDEXES_DIR": str(indexes)}
    listed = run("index", "list", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("junk") and "not an index (no manifest.json)" in lines[0]
    assert lines[1].startswith("test") and "passages" in lines[1] and f"from {folder}" in lines[1]
    assert "adapted (train adapt), vectors kept by an interrupted build" in lines[1]
    data = json.loads(run("index", "list", "--json", cwd=tmp_path, env=env).stdout)
    assert [d["name"] for d in data] == ["junk", "test"] and data[1]["dense"] and data[1]["chunks"] > 0

    refused = run("index", "delete", "test", "nope", "--yes", cwd=tmp_path, env=env)
    assert refused.returncode == 2 and "no index 'nope'" in refused.stderr and (indexes / "test").exists()
    kept = run("index", "delete", "test", cwd=tmp_path, env=env, stdin="n\n")
    assert kept.returncode != 0 and (indexes / "test").exists()
    gone = run("index", "delete", "test", "junk", cwd=tmp_path, env=env, stdin="y\n")
    assert gone.returncode == 0 and "deleted index test:" in gone.stdout, gone.stderr
    assert sorted(p.name for p in indexes.iterdir()) == []
    assert "no index in" in run("index", "list", cwd=tmp_path, env=env).stdout


@needs_minilm
def test_a_pipeline_loads_the_embedders_new_files_when_the_index_was_built_with_them(tmp_path: Path):
    """Session 48: the model re-imported with other files (`models import PATH --name mini --replace`, an adapted
    copy) and the index built again: `serve` and `chat` kept the embedder they had loaded, so each turn failed with
    "embedded with other files of model mini" until restarted. Now the reopen loads the model's files again."""
    from local_rag.embed import load_embedder
    from local_rag.modelstore.importer import import_path
    from local_rag.pipeline import Pipeline
    from local_rag.records import Conversation, Turn
    from local_rag.settings import load_settings

    models = tmp_path / "models"
    import_path(MODELS / "all-MiniLM-L6-v2", models, name="mini", role="embedder")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Rivers\n\nThe river gauge read high in April.\n")
    settings = load_settings("cpu-test", overrides={
        "indexes_dir": str(tmp_path / "indexes"), "models_dir": str(models), "index": "notes",
        "embedder": {"model": "mini"}, "chunker": {"tokenizer": "whitespace"}})
    build_index(settings, folder, load_embedder(settings.embedder, models), progress=False)
    pipeline = Pipeline(settings)
    old = pipeline.retriever.embedder
    newer = tmp_path / "mini-v2"
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", newer)
    (newer / "README.md").write_text("a newer copy\n")
    import_path(newer, models, name="mini", role="embedder", replace=True)
    (folder / "b.md").write_text("# Glaciers\n\nA moraine is debris a glacier left behind.\n")
    build_index(settings, folder, load_embedder(settings.embedder, models), progress=False)
    pipeline.answer(Conversation([Turn("user", "hello")]))  # small talk: no LLM, but the turn looks first
    assert pipeline.retriever.embedder is not old and pipeline.retriever.embedder.checksum != old.checksum
    hits = pipeline.retriever.search([Query("glacier moraine", "lastturn")], top_k=1)
    assert [h.passage_id for h in hits] == ["b.md"]


def test_a_large_unchanged_file_is_not_read_again_to_know_it_is_unchanged(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    """Session 56: every `index sync` read every byte of the folder to hash it, a few seconds a gigabyte (an Outlook
    archive of 20 GB: each sync, and each wake of `--watch`). A file of 1 MiB or more is now hashed once for its size,
    modification time and inode, kept in a SQLite file of the user's cache folder; a file changed (a new time or size,
    or replaced: a new inode) is hashed again, and so is one written in the two seconds before it was hashed (a write
    in the same timestamp tick would leave its size and time as they were); a cache that cannot be written only
    means hashing."""
    import hashlib
    import os

    from local_rag.corpus import digest

    monkeypatch.setenv("LOCAL_RAG_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(digest, "_remembered", digest._Remembered())
    hashed: list[str] = []
    real = digest._sha256
    monkeypatch.setattr(digest, "_sha256", lambda path: hashed.append(path.name) or real(path))
    big = tmp_path / "archive.pst"
    big.write_bytes(os.urandom(2 << 20))
    os.utime(big, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))  # written long ago
    small = tmp_path / "notes.md"
    small.write_text("# Notes\n")
    expected = hashlib.sha256(big.read_bytes()).hexdigest()
    assert digest.file_digest(big) == expected and digest.file_digest(big) == expected
    assert digest.file_digest(small) == digest.file_digest(small)
    assert hashed == ["archive.pst", "notes.md", "notes.md"]  # the large one read once
    assert (tmp_path / "home" / "cache" / "file-digests.sqlite").is_file()
    big.write_bytes(os.urandom(2 << 20))  # changed now: hashed, and not remembered (written within 2 s)
    changed = hashlib.sha256(big.read_bytes()).hexdigest()
    assert digest.file_digest(big) == changed and digest.file_digest(big) == changed
    assert hashed[3:] == ["archive.pst", "archive.pst"]
    monkeypatch.setenv("LOCAL_RAG_HOME", str(small))  # a file where the cache folder would be: hashing goes on
    monkeypatch.setattr(digest, "_remembered", digest._Remembered())
    assert digest.file_digest(big) == changed


def test_sync_all_syncs_every_index_that_follows_a_folder(tmp_path: Path):
    """`index sync --all`: each index that follows a folder, with the options it keeps; an index of records and one
    whose folder is gone are named and passed over; options of one index's sync are refused with --all."""
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    for name, text in (("notes", "# Audit\n\nFriday.\n"), ("mail", "# Re: audit\n\nBring the logs.\n"),
                       ("old", "# Old\n\nGone soon.\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.md").write_text(text)
        built = run("index", "build", str(tmp_path / name), "--index", name, "--sparse-only", "--exclude", "*.tmp",
                    cwd=tmp_path, env=env)
        assert built.returncode == 0, built.stderr
    (tmp_path / "c.jsonl").write_text(json.dumps({"_id": "p1", "text": "a record"}) + "\n")
    assert run("index", "build", str(tmp_path / "c.jsonl"), "--index", "records", "--sparse-only", cwd=tmp_path,
               env=env).returncode == 0
    shutil.rmtree(tmp_path / "old")
    (tmp_path / "mail" / "b.md").write_text("# Lunch\n\nPizza.\n")
    (tmp_path / "notes" / "x.tmp").write_text("left out by the index's own --exclude")
    synced = run("index", "sync", "--all", "--json", cwd=tmp_path, env=env)
    assert synced.returncode == 0, synced.stderr
    done = {d["index"]: d for d in map(json.loads, synced.stdout.splitlines())}
    assert set(done) == {"notes", "mail"} and done["mail"]["added"] == ["b.md"]
    assert done["notes"]["added"] == [] and done["notes"]["unchanged"] == 1
    assert done["notes"]["excluded"] == ["x.tmp"]  # the index's own --exclude, kept
    assert "note: old passed over: its folder" in synced.stderr and "note: records passed over: it follows a corpus of " \
        "records" in synced.stderr
    again = run("index", "sync", "--all", cwd=tmp_path, env=env)
    assert "mail is up to date with" in again.stdout and "notes is up to date with" in again.stdout
    info = run("index", "info", "--index", "mail", cwd=tmp_path, env=env).stdout
    assert f"folder           {(tmp_path / 'mail').resolve()} (`index sync --all` syncs it)" in info
    assert "folder           none known: `index sync --all` passes it over (a corpus of records" in run(
        "index", "info", "--index", "records", cwd=tmp_path, env=env).stdout
    assert f"from {(tmp_path / 'mail').resolve()}" in run("index", "list", cwd=tmp_path, env=env).stdout
    refused = run("index", "sync", "--all", "--code", cwd=tmp_path, env=env)
    assert refused.returncode == 2 and "--code belongs to one index's sync" in refused.stderr
    assert "or --all" in run("index", "sync", cwd=tmp_path, env=env).stderr


def test_one_watch_wakes_the_sync_of_the_folder_that_changed(tmp_path: Path):
    """`watch_many` (``index sync --all --watch``): a change in one folder calls its callback, not the others'."""
    import threading

    from local_rag.index.sync import watch_many

    folders = {name: tmp_path / name for name in ("notes", "mail")}
    for folder in folders.values():
        folder.mkdir()
    woke: list[str] = []
    stop = threading.Event()

    def callback(name: str):
        def call() -> None:
            woke.append(name)
            stop.set()
        return call

    thread = threading.Thread(target=watch_many, args=([(f, callback(n), ReadOptions(exclude=("*.log",)))
                                                         for n, f in folders.items()],),
                              kwargs={"debounce_ms": 200, "stop_event": stop})
    thread.start()
    try:
        threading.Timer(0.3, lambda: (folders["notes"] / "run.log").write_text("excluded")).start()
        threading.Timer(0.8, lambda: (folders["mail"] / "b.md").write_text("# B\n")).start()
        assert stop.wait(60), "the watcher did not wake"
    finally:
        stop.set()
        thread.join(10)
    assert woke == ["mail"]


@needs_minilm
def test_sync_all_goes_on_when_one_index_lacks_its_model(tmp_path: Path):
    """`index sync --all` where one index's embedding model is missing: that index is one error line, the others are
    synced, and the exit code says one failed."""
    for name in ("notes", "vectors"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.md").write_text(f"# {name}\n\nSome words about {name}.\n")
    env = {"LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    assert run("index", "build", str(tmp_path / "notes"), "--index", "notes", "--sparse-only", cwd=tmp_path,
               env=env).returncode == 0
    assert run("index", "build", str(tmp_path / "vectors"), "--index", "vectors", cwd=tmp_path, env=env).returncode == 0
    (tmp_path / "notes" / "b.md").write_text("# B\n\nNew.\n")
    (tmp_path / "empty-models").mkdir()
    synced = run("index", "sync", "--all", "--json", cwd=tmp_path, env={**env,
                                                                        "LOCAL_RAG_MODELS_DIR": str(tmp_path / "empty-models")})
    assert synced.returncode == 2
    assert [json.loads(line)["added"] for line in synced.stdout.splitlines()] == [["b.md"]]  # notes synced
    assert "error: vectors: model 'all-MiniLM-L6-v2' is not in" in synced.stderr
    assert synced.stderr.strip().splitlines()[-1] == "error: 1 of 2 index(es) could not be synced: vectors"

"""Keeping an index in step with a folder of documents: ``local-rag index sync DIR --index NAME``.

Every file's bytes are hashed (sha256) and compared with the digests the index stored when it last saw the folder
(``files.json``, written by `build_index` and by each sync). New files are read, chunked and embedded; changed ones
are re-read and re-embedded; deleted ones leave the index; a renamed file is a deletion plus an addition (its title,
url and passage ids change with its name). Unchanged files are neither read nor embedded, and their vectors are kept;
so are the vectors of any new chunk whose indexed text a removed or changed file's chunk had (`reusable`: a renamed
or moved file, the untouched start of an edited one).
A second sync of an unchanged folder finds nothing to do and writes nothing.

The result equals a fresh build of the folder (same passages, chunks, corpus hash and search results); only the row
order of the chunks differs.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np

from local_rag.corpus.digest import file_digest, passage_digest
from local_rag.corpus.documents import waits_for_ocr
from local_rag.corpus.git_log import history_paths
from local_rag.corpus.gitignore import GitIgnores
from local_rag.corpus.ocr import ocr_missing
from local_rag.corpus.options import ReadOptions
from local_rag.corpus.readers import (
    CorpusReport,
    document_paths,
    folder_files,
    note_read,
    originals,
    read_file_passages,
    relative_name,
)
from local_rag.embed.base import Embedder
from local_rag.errors import BadInputError, IndexError_
from local_rag.index.folder import (
    FILES_FILE,
    _chunk_passages,
    _embed,
    _lexical,
    _now,
    _open_for_update,
    _stored_lexical,
    _stored_vectors,
    _tokenizer_for,
    _write,
    build_index,
    drop_journal,
    format_stats,
    index_text,
)
from local_rag.index.lock import one_writer
from local_rag.index.manifest import MANIFEST_FILE, IndexManifest, same_place
from local_rag.patterns import in_folder, matches_any
from local_rag.records import Chunk
from local_rag.settings import Settings

T = TypeVar("T")


@dataclass
class SyncPlan:
    """What a sync does, by file (paths relative to the folder)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    left_out: list[str] = field(default_factory=list)  # files `index remove --by doc` took out: not read
    excluded: list[str] = field(default_factory=list)  # files and folders the index's exclude patterns name: not read
    ignored: list[str] = field(default_factory=list)  # files and folders its .gitignore files name (--gitignore)
    copies: dict[str, str] = field(default_factory=dict)  # files whose bytes equal an earlier file's -> that file
    dropped: list[str] = field(default_factory=list)  # unchanged files that became copies: their chunks go
    digests: dict[str, str] = field(default_factory=dict)  # every file of the folder now
    paths: dict[str, Path] = field(default_factory=dict)  # each one's path (a name may be spelled: `relative_name`)

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed or self.dropped)

    def summary(self) -> str:
        left = f", {len(self.left_out)} left out (removed with `index remove`)" if self.left_out else ""
        left += f", {len(self.excluded)} left out by --exclude" if self.excluded else ""
        left += f", {len(self.ignored)} left out by .gitignore" if self.ignored else ""
        n = len(self.copies)
        copies = f", {n} {'copies of other files' if n > 1 else 'copy of another file'} (indexed once)" if n else ""
        return (f"{len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed, "
                f"{self.unchanged} unchanged{left}{copies}")


@dataclass
class SyncResult:
    plan: SyncPlan
    manifest: IndexManifest
    built: bool = False  # there was no index: a full build
    embedded_chunks: int = 0
    reused_chunks: int = 0  # new chunks whose vectors were the stored ones of the same text (`reusable`)
    seconds: float = 0.0
    unreadable: dict[str, str] = field(default_factory=dict)


def reusable(stored: list[Chunk], touched: set[str], new_chunks: list[Chunk], header: str) -> dict[int, int]:
    """Position in ``new_chunks`` -> the row of ``stored`` (a chunk of a file removed or changed: ``touched``) whose
    indexed text (`index_text`: header and chunk) is the same, so its vector and learned-sparse row serve again.

    A renamed or moved file is a deletion plus an addition; before, its every chunk was embedded again (a reorganised
    folder of PDFs: as long as the first build). A changed file's chunks before the change are found too.

    Example:
        >>> old = [Chunk("a.md#0", "a.md", "a.md", "Rotate keys.", title="Keys")]
        >>> reusable(old, {"a.md"}, [Chunk("b/a.md#0", "b/a.md", "b/a.md", "Rotate keys.", title="Keys")], "title")
        {0: 0}
    """
    rows: dict[str, int] = {}
    for i, chunk in enumerate(stored):
        if chunk.doc_id in touched:
            rows.setdefault(index_text(chunk, header), i)
    return {j: rows[text] for j, chunk in enumerate(new_chunks) if (text := index_text(chunk, header)) in rows}


def plan_sync(folder: Path, known: dict[str, str], progress: bool = False, left_out: Iterable[str] = (),
              options: ReadOptions = ReadOptions()) -> SyncPlan:
    """Compare the files of ``folder`` with ``known`` (path -> sha256 when the index last saw them); the files of
    ``left_out`` are neither read nor added, changed or not; those ``options.exclude`` names are as if not in the
    folder (an indexed one is removed), and with ``options.gitignore`` those its ``.gitignore`` files name; pictures
    count only with ``options.images``, source and configuration files with ``code``, the history with ``git_log``."""
    plan = SyncPlan()
    skip = set(left_out)
    found = folder_files(folder, options.exclude, options.gitignore)
    plan.excluded = found.excluded
    plan.ignored = found.ignored
    paths = document_paths(found.files, options.images, options.code) + history_paths(folder, options.git_log)
    for path in _bar(paths, progress, "hashing"):
        rel = relative_name(folder, path)
        plan.paths[rel] = path
        plan.digests[rel] = digest = file_digest(path)
        if rel in skip:
            plan.left_out.append(rel)
        elif rel not in known:
            plan.added.append(rel)
        elif known[rel] != digest:
            plan.changed.append(rel)
        else:
            plan.unchanged += 1
    plan.removed = sorted(set(known) - set(plan.digests))
    return plan


def place_copies(plan: SyncPlan, indexed: set[str]) -> dict[str, str]:
    """Find the files of ``plan`` whose bytes equal another's (`originals` chooses the one read) and make the index
    hold each text once, as a fresh build would: an unchanged copy that has chunks (indexed before it was
    a copy, or before copies were found) is dropped; an unchanged file no longer a copy (its original deleted or
    changed) and not in ``indexed`` is read again. Returns digest -> the file read for it, for `read_file_passages`.
    """
    skip = set(plan.left_out)
    first = originals(plan.digests)  # left-out files too: a copy of a document taken out stays out
    plan.copies = {rel: first[d] for rel, d in sorted(plan.digests.items()) if first[d] != rel}
    fresh = set(plan.added) | set(plan.changed)
    for rel in sorted(set(plan.digests) - fresh - skip):
        if rel in plan.copies and rel in indexed:
            plan.dropped.append(rel)
            plan.unchanged -= 1
        elif rel not in plan.copies and rel not in indexed:
            plan.changed.append(rel)
            plan.unchanged -= 1
    return first


def read_scans(plan: SyncPlan, manifest: IndexManifest) -> None:
    """Once the ``ocr`` extra is installed, the unchanged files whose scanned pages an earlier build or sync could
    not read (a scanned PDF listed as unreadable, a PDF with text whose scanned pages were left out) count as changed,
    so that this sync reads them: the error told the user to install the extra, and sync is how they go on."""
    if ocr_missing():
        return
    scans = set(manifest.unread_scans) | {rel for rel, why in manifest.unreadable.items() if waits_for_ocr(why)}
    fresh = set(plan.added) | set(plan.changed) | set(plan.left_out)
    for rel in sorted(scans & (set(plan.digests) - fresh)):
        plan.changed.append(rel)
        plan.unchanged -= 1


def known_files(index_path: Path, doc_ids: set[str]) -> dict[str, str]:
    """The file digests an index stored; an index without them (built before sync existed) knows its documents but
    not their digests, so each of them counts as changed once."""
    try:
        return dict(json.loads((index_path / FILES_FILE).read_text(encoding="utf-8")))
    except FileNotFoundError:
        return dict.fromkeys(doc_ids, "")
    except (OSError, json.JSONDecodeError) as exc:
        raise IndexError_(f"{index_path / FILES_FILE} is corrupt ({exc}); rebuild the index") from exc


@one_writer  # read, compare and write as one step: no other writer between them
def sync_index(
    settings: Settings, folder: str | Path, embedder: Embedder | None = None, progress: bool = True,
    restore: bool = False, replace: bool = False, reuse: bool = True, options: ReadOptions = ReadOptions(),
) -> SyncResult:
    """Bring ``indexes/<settings.index>`` in step with ``folder`` (built from scratch when there is no index).

    The files `index remove --by doc` took out stay out, unless ``restore``, which reads them again; so do the files
    the index's exclude patterns name, with ``options.exclude`` added to them (`local_rag.patterns`; an indexed file
    they name is removed), unless ``restore``, which forgets the patterns kept before. Another folder
    than the index follows, holding none of its files, is refused unless ``replace`` (it would remove them all).
    ``reuse`` off embeds every new chunk, as syncs did before session 52 (the benchmark's reference). The rest of
    ``options`` (`ReadOptions`) is added to what the index keeps (`IndexManifest.read_options`) from now on: a
    switch given once (``--images``, ``--code``, ``--gitignore``, ``--git-log``) stays on."""
    started = time.perf_counter()
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInputError(f"{folder}: not a folder (index sync keeps an index in step with a folder of documents)")
    if (folder / "corpus.jsonl").exists():
        raise BadInputError(f"{folder} is a BEIR corpus folder, not a folder of documents: use `local-rag index build`")
    if not (settings.index_dir / MANIFEST_FILE).exists():
        manifest = build_index(settings, folder, embedder=embedder, progress=progress, options=options)
        plan = SyncPlan(added=sorted(json.loads((settings.index_dir / FILES_FILE).read_text(encoding="utf-8"))))
        return SyncResult(plan, manifest, built=True, seconds=time.perf_counter() - started,
                          unreadable=dict(manifest.unreadable))
    index, digests = _open_for_update(settings, embedder)
    if index.manifest.of_records():
        raise BadInputError(f"index {settings.index} was built from {index.manifest.corpus_source}, a record corpus, "
                            "not a folder of documents: sync keeps folder indexes only")
    stored = list(index.chunks)  # parsed once
    doc_ids = {c.doc_id for c in stored}
    known = known_files(index.path, doc_ids)
    left_out = [] if restore else index.manifest.left_out
    if restore:  # read again as new files
        known = {k: v for k, v in known.items() if k not in index.manifest.left_out}
    given = tuple(in_folder(p, str(folder)) for p in options.exclude)  # as the shell shows them: inside the folder
    kept = index.manifest.read_options()
    options = (dataclasses.replace(kept, exclude=()) if restore else kept).joined(
        dataclasses.replace(options, exclude=given))
    plan = plan_sync(folder, known, progress, left_out, options)
    followed = index.manifest.followed_source()
    if not replace and plan.removed and not (plan.unchanged or plan.changed or plan.left_out) \
            and not same_place(followed, folder):
        raise BadInputError(f"{folder} holds none of the {len(plan.removed)} files index {settings.index} has from "
                            f"{followed}: syncing would remove them all; check the folder and --index, or pass "
                            f"--replace to make {settings.index} follow {folder}")
    read_scans(plan, index.manifest)
    originals = place_copies(plan, doc_ids | set(index.manifest.unreadable))
    if plan.empty and sorted(plan.left_out) == sorted(index.manifest.left_out):
        if options != kept or index.manifest.folder != str(folder.resolve()):  # kept alone
            index.manifest.keep(options)
            index.manifest.folder = str(folder.resolve())  # an index built before session 60 learns it here
            index.manifest.save(index.path)
        return SyncResult(plan, index.manifest, seconds=time.perf_counter() - started)

    touched = set(plan.changed) | set(plan.removed) | set(plan.dropped)
    keep = [i for i, c in enumerate(stored) if c.doc_id not in touched]
    report = CorpusReport(progress=progress, originals=originals)  # `progress`: a long scan's bar over its pages
    tokenizer = _tokenizer_for(settings) if plan.added or plan.changed else None  # a missing model before reading
    passages = []
    for rel in _bar(plan.added + plan.changed, progress, "reading"):
        passages.extend(read_file_passages(folder, plan.paths[rel], report))
    note_read(report)
    new_chunks, _ = _chunk_passages(settings, passages, progress, tokenizer)
    # a renamed or moved file, a changed file's unchanged parts: their vectors serve again (``reuse``: the benchmark's
    # before)
    again = reusable(stored, touched, new_chunks, settings.chunker.header) if reuse else {}
    fresh = [c for j, c in enumerate(new_chunks) if j not in again]
    new_chunks = [new_chunks[j] for j in again] + fresh  # rows: the reused first, then the embedded
    rows = list(again.values())
    chunks = [stored[i] for i in keep] + new_chunks
    if not chunks:
        raise BadInputError(f"{folder}: no readable documents left; the index {settings.index} would be empty")
    vectors = None
    if index.manifest.dense is not None:
        if embedder is None:
            raise ValueError("this index has a dense part: syncing needs the embedder")
        old = _stored_vectors(index)
        assert old is not None
        new_vectors = _embed(embedder, fresh, progress, settings) if fresh else old[:0]
        assert new_vectors is not None
        vectors = np.concatenate([old[keep], old[rows], new_vectors])
    lexical = _stored_lexical(index)
    if lexical is not None:
        from scipy import sparse

        parts = [lexical[keep], lexical[rows]]  # type: ignore[index]
        if fresh:
            parts.append(_lexical(embedder, fresh, settings))
        lexical = sparse.vstack(parts).tocsr()
    for pid in {c.passage_id for c in stored if c.doc_id in touched}:
        digests.pop(pid, None)
    digests.update({p.id: passage_digest(p) for p in passages})
    manifest = index.manifest
    manifest.unreadable = {k: v for k, v in manifest.unreadable.items() if k in plan.digests and k not in touched
                           and k not in plan.added}
    manifest.unreadable.update(report.unreadable)
    manifest.unread_scans = {k: v for k, v in manifest.unread_scans.items() if k in plan.digests and k not in touched}
    manifest.unread_scans.update(report.unread_scans)
    manifest.stats.pop("pages_ocr", None)  # of an earlier read: this one's alone, as its pages_<format>
    manifest.stats.update(format_stats(report))
    manifest.left_out = sorted(plan.left_out)  # a left-out file deleted from the folder is forgotten
    manifest.keep(options)
    manifest.folder = str(folder.resolve())
    manifest.history.append({"action": "sync", "source": str(folder), "added": len(plan.added),
                             "changed": len(plan.changed), "removed": len(plan.removed), "at": _now()})
    files = json.dumps(dict(sorted(plan.digests.items())), indent=0)
    _write(settings, index.path, chunks, digests, vectors, manifest, progress, lexical, {FILES_FILE: files})
    drop_journal(settings)
    return SyncResult(plan, manifest, embedded_chunks=len(fresh) if vectors is not None else 0,
                      reused_chunks=len(rows) if vectors is not None else 0,
                      seconds=time.perf_counter() - started, unreadable=dict(report.unreadable))


def _bar(items: list[T], progress: bool, desc: str) -> Iterable[T]:
    if not progress or not items:
        return items
    from tqdm import tqdm

    bar: Iterable[T] = tqdm(items, desc=desc, unit="file")  # tqdm has no type stubs here
    return bar


def watch(folder: str | Path, on_change: Callable[[], None], debounce_ms: int = 1600, stop_event: object = None,
          options: ReadOptions = ReadOptions()) -> None:
    """Call ``on_change`` after each burst of changes in ``folder`` until Ctrl-C (or ``stop_event`` is set); changes
    inside hidden folders or to hidden files, and to what ``options.exclude`` names (which the index leaves out:
    `readers.folder_files`), wake nothing; with ``options.gitignore``, nor do changes to what the ``.gitignore`` files
    name (a build writing its output), while a change to a ``.gitignore`` file or ``.git/info/exclude`` does (what the
    index leaves out changed); with ``options.git_log``, a new commit does (the branch's ref under
    ``.git/refs/heads``, or ``.git/HEAD``)."""
    watch_many([(Path(folder), on_change, options)], debounce_ms, stop_event)


def watch_many(folders: Sequence[tuple[Path, Callable[[], None], ReadOptions]], debounce_ms: int = 1600,
               stop_event: object = None) -> None:
    """`watch` of several folders at once, each with its own callback and options (``index sync --all --watch``):
    a burst of changes calls, in the order given, the callback of each folder it changed (two indexes of one
    folder, or a folder inside another: each), once."""
    from local_rag._optional import require

    watchfiles = require("watchfiles", "index sync --watch")
    default = watchfiles.DefaultFilter()
    watched = [(Path(folder).absolute(), callback, _shown(Path(folder).absolute(), options, default))
               for folder, callback, options in folders]

    def owners(change: object, path: str) -> set[int]:
        return {i for i, (root, _, shown) in enumerate(watched) if Path(path).is_relative_to(root) and shown(change, path)}

    roots = list(dict.fromkeys(root for root, _, _ in watched))
    for changes in watchfiles.watch(*roots, watch_filter=lambda change, path: bool(owners(change, path)),
                                    debounce=debounce_ms, raise_interrupt=False, stop_event=stop_event):
        woken = {i for change, path in changes for i in owners(change, path)}
        for i in sorted(woken):
            watched[i][1]()


def _shown(root: Path, options: ReadOptions, default: Callable[[object, str], bool]) -> Callable[[object, str], bool]:
    """The filter of one watched folder: whether a change of ``path`` should wake its sync (see `watch`)."""
    exclude, gitignore, git_log = options.exclude, options.gitignore, options.git_log
    ignores = [GitIgnores(root)] if gitignore else []  # read once, again after a .gitignore changes

    def shown(change: object, path: str) -> bool:
        parts = Path(path).parts[len(root.parts):] if Path(path).is_relative_to(root) else ()
        if gitignore and parts and ((parts[-1] == ".gitignore" and not any(p.startswith(".") for p in parts[:-1]))
                                    or parts == (".git", "info", "exclude")):
            ignores[0] = GitIgnores(root)
            return True
        if git_log and parts[:1] == (".git",) and (parts[1:] == ("HEAD",) or parts[1:3] == ("refs", "heads")):
            return True
        return (bool(default(change, path)) and not any(p.startswith(".") for p in parts)
                and not (exclude and matches_any("/".join(parts), exclude))
                and not (bool(ignores) and bool(parts) and ignores[0].left_out("/".join(parts))))

    return shown

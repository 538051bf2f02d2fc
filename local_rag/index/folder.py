"""Building, opening, extending and shrinking an index folder.

Layout of ``indexes/<name>/``::

    manifest.json      what the index was built from (checked on every load)
    chunks.jsonl       one chunk per line; line i is row i of both indexes
    passages.json      passage id -> content digest (for the corpus hash after add/remove)
    sparse/            bm25s files (loaded memory-mapped)
    dense/             faiss.index + vectors.f16.npy

Every write goes to a temporary folder beside the index and replaces it with two renames, so an interrupted or
failed build, add or remove leaves the previous index intact. An ``add`` that replaces nothing appends: the chunk
list is copied as bytes and extended, BM25 gets one more segment (`local_rag.index.segments`), FAISS takes the new
vectors, and the checksums of hard-linked files are carried over; only the new chunks are embedded. ``remove`` and a
replacing ``add`` rebuild the BM25 matrix from the stored chunk texts and the FAISS index from the stored vectors.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import logging
import os
import shlex
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from local_rag import __version__
from local_rag.corpus.chunking import Chunker, Tokenizer, load_tokenizer
from local_rag.corpus.digest import corpus_hash, passage_digest
from local_rag.corpus.options import ReadOptions
from local_rag.corpus.readers import CorpusReport, read_corpus
from local_rag.embed.base import Embedder
from local_rag.embed.journal import EmbeddingJournal, journal_folder
from local_rag.errors import BadInputError, IndexError_, ModelError
from local_rag.index import integrity
from local_rag.index.chunkfile import ChunkFile
from local_rag.index.dense import DenseIndex
from local_rag.index.factory import check_factory
from local_rag.index.learned_sparse import LearnedSparseIndex
from local_rag.index.lock import one_writer, reading, swapping, writing
from local_rag.index.manifest import MANIFEST_FILE, IndexManifest
from local_rag.index.segments import SegmentedSparse, write_sparse
from local_rag.modelstore import resolve_model
from local_rag.patterns import in_folder
from local_rag.records import Chunk, Passage
from local_rag.settings import BackendConfig, Settings
from local_rag.sysinfo import peak_rss_mb
from local_rag.text import unspaced_share

log = logging.getLogger("local_rag.index")

CHUNKS_FILE = "chunks.jsonl"
VOCAB_BOUND = 1 << 20  # token ids of any tokenizer we know fit; a CSR matrix does not pay for unused columns
PASSAGES_FILE = "passages.json"
FILES_FILE = "files.json"  # a folder of documents: file -> sha256 of its bytes (what `index sync` compares)


def index_text(chunk: Chunk, header: str = "title+section") -> str:
    """The text both indexes see: the contextual chunk header (``chunker.header``), then the chunk.

    Example:
        >>> index_text(Chunk("c", "p", "d", "text", title="Report", section="3 Results"))
        'Report\\n3 Results\\ntext'
    """
    lines = []
    if header != "none" and chunk.title:
        lines.append(chunk.title)
    if header == "title+section" and chunk.section and chunk.section != chunk.title:
        lines.append(chunk.section)
    return "\n".join([*lines, chunk.text])


def manifest_header(manifest: IndexManifest) -> str:
    """The chunk header an index was built with. Indexes from before the setting saw the title only, which is what
    ``title+section`` gives for record corpora (JSONL, BEIR: their passages have no sections), so those stay valid;
    a folder of documents built then must be rebuilt (its titles, pages and sections were not kept)."""
    header = manifest.chunker.get("header")
    if header is not None:
        return str(header)
    source = manifest.corpus_source.lower()
    records = source.endswith((".jsonl", ".jsonl.gz", ".jsonl.zip", ".json", ".zip", ".gz"))
    return "title+section" if records or (Path(manifest.corpus_source) / "corpus.jsonl").exists() else "title"


@dataclass
class IndexFolder:
    """An opened index: its manifest, chunks and the loaded sparse/dense indexes. ``chunks`` of a local index is a
    `ChunkFile`: rows are parsed from ``chunks.jsonl`` when read, so opening and appending parse none."""

    path: Path
    manifest: IndexManifest
    chunks: Sequence[Chunk]
    sparse: SegmentedSparse | None
    dense: DenseIndex | None
    learned: LearnedSparseIndex | None = None

    def __len__(self) -> int:
        return len(self.chunks)


# ---------------------------------------------------------------- settings <-> manifest


def _chunker_section(settings: Settings, tokenizer_name: str) -> dict[str, Any]:
    return {"size": settings.chunker.size, "overlap": settings.chunker.overlap, "tokenizer": tokenizer_name,
            "header": settings.chunker.header}


def _sparse_section(settings: Settings) -> dict[str, Any] | None:
    if not settings.sparse.enabled:
        return None
    import bm25s

    return {**settings.sparse.model_dump(exclude={"enabled"}), "bm25s_version": bm25s.__version__}


def _dense_section(settings: Settings, embedder: Embedder | None) -> dict[str, Any] | None:
    if embedder is None:
        return None
    import faiss

    return {
        "backend": embedder.backend,
        "model": embedder.name,
        "model_checksum": embedder.checksum,
        "dimension": embedder.dimension,
        "factory": settings.dense.factory,
        "normalized": True,
        "passage_prefix": settings.embedder.passage_prefix,
        "faiss_version": faiss.__version__,
        "learned_sparse": bool(settings.embedder.bge_sparse and hasattr(embedder, "lexical_weights")),
    }


def _tokenizer_for(settings: Settings) -> tuple[Tokenizer, str]:
    """The chunker's tokenizer, resolved before any document is read (a build, add or sync of thousands of files
    read them all, then stopped on a missing model); a missing embedder folder says that even a BM25-only index
    chunks with its tokenizer, and how to do without."""
    name = settings.chunker.tokenizer or settings.embedder.model
    if name == "whitespace":
        return load_tokenizer("whitespace"), "whitespace"
    try:
        folder, _ = resolve_model(name, settings.models_dir)
    except ModelError as exc:
        if settings.chunker.tokenizer or settings.dense.enabled:
            raise
        raise ModelError(f"{exc} (a --sparse-only index is chunked with its tokenizer too; "
                         "LOCAL_RAG_CHUNKER__TOKENIZER=whitespace chunks at spaces instead)") from exc
    return load_tokenizer(folder, name), name


def with_index_chunking(settings: Settings, manifest: IndexManifest) -> Settings:
    """``settings`` with the chunking the index was built with (size, overlap, tokenizer, header, from its manifest).
    An index's chunking is a fact of the index, like its FAISS factory: the commands that search it do not chunk, and
    `index add` or `sync` chunk new documents as the rest were. Before, `index build --chunk-size 128` made an index
    that `search`, `ask`, `chat`, `serve`, `add` and `sync` refused ("was chunked with ..., settings say ...") unless
    the same size was given to each again."""
    built = manifest.chunker
    update: dict[str, Any] = {"header": manifest_header(manifest)}
    if isinstance(built.get("size"), int) and isinstance(built.get("overlap"), int):
        update |= {"size": built["size"], "overlap": built["overlap"]}
    if isinstance(built.get("tokenizer"), str) and built["tokenizer"]:
        update["tokenizer"] = built["tokenizer"]
    settings.chunker = type(settings.chunker).model_validate(settings.chunker.model_dump() | update)
    return settings


#: what BM25 was built with and a query must be tokenized or scored with alike
BM25_KEYS = ("method", "k1", "b", "stemmer", "stopwords", "identifiers")


def _built_bm25(manifest: IndexManifest, key: str) -> Any:
    """A BM25 parameter of the index; ``identifiers`` came later (session 59): absent, the index does not split them."""
    assert manifest.sparse is not None
    return manifest.sparse.get(key, False if key == "identifiers" else None)


def with_index_bm25(settings: Settings, manifest: IndexManifest) -> Settings:
    """``settings`` with the BM25 parameters and tokenization the index was built with (method, k1, b, stemmer,
    stopwords, from its manifest): a query must be stemmed as the index was, and k1 and b are in its stored scores.
    Before, an index built with `LOCAL_RAG_SPARSE__STEMMER=german` was refused by every command that searched it
    unless the same setting was given to each. Not for `index rebuild`, whose settings are its new parameters."""
    if manifest.sparse is None:
        return settings
    update = {k: _built_bm25(manifest, k) for k in BM25_KEYS if k in manifest.sparse or k == "identifiers"}
    settings.sparse = type(settings.sparse).model_validate(settings.sparse.model_dump() | update)
    return settings


def chunk_limit_note(settings: Settings, embedder: Embedder | None) -> str | None:
    """A note when the chunks would be longer than the embedding model reads: its vectors then see the start of each
    chunk only, which no error shows (`index build --chunk-size 1000` with all-MiniLM-L6-v2, which reads 256 tokens,
    found nothing the dense side should have found past a chunk's first 256 tokens). None when they fit."""
    limit = embedder.max_tokens if embedder is not None else None
    if not limit or settings.chunker.size <= limit:
        return None
    return (f"chunks of {settings.chunker.size} tokens are longer than {settings.embedder.model} reads ({limit}): its "
            f"vectors see the first {limit} tokens of each, BM25 all of it; --chunk-size {limit} or less keeps whole "
            "chunks in both")


def wants_dense(settings: Settings) -> bool:
    """Whether the settings query the embedding model (dense vectors or BGE-M3 learned sparse weights)."""
    return settings.dense.enabled and bool({"dense", "bge-sparse"} & set(settings.retrieval.retrievers))


def check_compatible(
    manifest: IndexManifest, settings: Settings, path: Path, model_checksum: str | None = None, derived: bool = True
) -> None:
    """Refuse an index whose manifest disagrees with the settings in use, saying how to rebuild.

    ``derived=False`` checks only what needs the corpus or the embedding model to redo (chunker, embedder), not what
    `rebuild_index` can redo from the stored chunks and vectors (BM25 parameters, FAISS factory).
    """
    source = manifest.followed_source()  # named when it is there from here: the user need not remember the path
    corpus = shlex.quote(source) if source and Path(source).exists() else "CORPUS"
    rebuild = f"rebuild it with `local-rag index build {corpus} --index {path.name}` using these settings"
    built_with = manifest.dense["model"] if manifest.dense is not None else None
    if built_with is not None and built_with != settings.embedder.model:
        # e.g. an index embedded with an adapted model (`local-rag train adapt`), queried with the default settings
        rebuild += (f", or query it with the embedder it was built with (embedder.model: {built_with} in a "
                    f"--config file, or LOCAL_RAG_EMBEDDER__MODEL={built_with})")
    tokenizer_name = settings.chunker.tokenizer or settings.embedder.model
    want = {"size": settings.chunker.size, "overlap": settings.chunker.overlap, "tokenizer": tokenizer_name}
    have = {k: manifest.chunker.get(k) for k in want}
    want["header"], have["header"] = settings.chunker.header, manifest_header(manifest)
    if want != have:
        differ = {k: have[k] for k in want if want[k] != have[k] and have[k] is not None}
        hint = " ".join(f"LOCAL_RAG_CHUNKER__{k.upper()}={v}" for k, v in differ.items())
        raise IndexError_(f"index {path} was chunked with {have}, settings say {want}: {rebuild}"
                          + (f", or read it with its own chunking ({hint})" if hint else ""))
    if derived and settings.sparse.enabled and "bm25" in settings.retrieval.retrievers:
        if manifest.sparse is None:
            raise IndexError_(f"index {path} has no sparse (BM25) index: {rebuild}")
        for key in BM25_KEYS:
            if _built_bm25(manifest, key) != getattr(settings.sparse, key):
                raise IndexError_(
                    f"index {path} has BM25 {key}={_built_bm25(manifest, key)!r}, settings say "
                    f"{getattr(settings.sparse, key)!r}: {rebuild} (or `local-rag index rebuild`, which re-embeds "
                    f"nothing), or read it with its own (LOCAL_RAG_SPARSE__{key.upper()}={_built_bm25(manifest, key)})"
                )
    if wants_dense(settings):
        if manifest.dense is None:
            raise IndexError_(f"index {path} has no dense index (it was built sparse only): {rebuild}")
        if manifest.dense["model"] != settings.embedder.model or manifest.dense["backend"] != settings.embedder.backend:
            raise IndexError_(
                f"index {path} was embedded with {manifest.dense['backend']}:{manifest.dense['model']}, settings say "
                f"{settings.embedder.backend}:{settings.embedder.model}: {rebuild}"
            )
        if model_checksum is not None and manifest.dense["model_checksum"] != model_checksum:
            raise IndexError_(
                f"index {path} was embedded with other files of model {manifest.dense['model']} (checksum differs): {rebuild}"
            )
        if derived and settings.dense.factory != "auto" and manifest.dense["factory"] != settings.dense.factory:
            raise IndexError_(
                f"index {path} uses FAISS {manifest.dense['factory']!r}, settings say {settings.dense.factory!r}: "
                f"{rebuild} (or `local-rag index rebuild`, which re-embeds nothing)"
            )


# ---------------------------------------------------------------- reading


def index_stamp(path: Path) -> tuple[int, int] | None:
    """What changes when a writer swaps a new index into ``path`` (its manifest's inode and time): a process that
    keeps an index open compares it to see a sync made since; None while there is no manifest (mid-swap, removed)."""
    try:
        stat = (path / MANIFEST_FILE).stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_mtime_ns


def read_chunks(path: Path) -> list[Chunk]:
    out = []
    try:
        with (path / CHUNKS_FILE).open(encoding="utf-8") as fh:
            for line in fh:
                out.append(Chunk(**json.loads(line)))
    except (OSError, json.JSONDecodeError, TypeError) as exc:
        raise IndexError_(f"{path / CHUNKS_FILE} is missing or corrupt ({exc}); rebuild the index") from exc
    return out


def open_index(
    settings: Settings, path: Path | None = None, model_checksum: str | None = None, derived: bool = True,
) -> IndexFolder:
    """Open the index that settings name (or ``path``), checking its manifest against the settings.

    Raises:
        IndexError_: missing, corrupt or built with other settings (the message says how to rebuild).
    """
    path = Path(path) if path is not None else settings.index_dir
    with reading(path):  # a writer swapping the folder waits; we see the old index or the new one, whole
        return _open_index(settings, path, model_checksum, derived)


def _open_index(settings: Settings, path: Path, model_checksum: str | None, derived: bool) -> IndexFolder:
    manifest = IndexManifest.load(path)
    check = integrity.start_load_check(path, manifest.integrity)  # finished below, before anything is returned
    check_compatible(manifest, settings, path, model_checksum, derived)
    parsed = read_chunks(path) if manifest.backend == "qdrant" else None  # a Qdrant collection takes them parsed
    chunks: Sequence[Chunk] = parsed if parsed is not None else ChunkFile(path / CHUNKS_FILE)  # rows read on demand
    rows = len(chunks)
    if rows != manifest.chunks:
        raise IndexError_(f"{path}: manifest says {manifest.chunks} chunks, {CHUNKS_FILE} has {rows}; rebuild it")
    if parsed is not None:
        from local_rag.index.backends.qdrant import open_qdrant

        dimension = manifest.dense["dimension"] if manifest.dense is not None and wants_dense(settings) else None
        factory = manifest.dense["factory"] if manifest.dense is not None else ""
        sparse_q, dense_q = open_qdrant(path, settings, parsed, dimension, factory)
        return IndexFolder(path, manifest, chunks, sparse_q, dense_q)  # type: ignore[arg-type]  # same search interface
    sparse = dense = None
    if derived and manifest.sparse is not None and settings.sparse.enabled and "bm25" in settings.retrieval.retrievers:
        try:
            sparse = SegmentedSparse.load(path / "sparse", settings.sparse)
        except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, RecursionError) as exc:
            raise IndexError_(f"sparse index in {path} is unreadable ({exc}); rebuild it") from exc
    if manifest.dense is not None and wants_dense(settings):
        dense = DenseIndex.load(path / "dense", settings.dense)
        if dense.size != rows:
            raise IndexError_(f"{path}: dense index has {dense.size} rows for {rows} chunks; rebuild it")
    learned = None
    if manifest.dense is not None and manifest.dense.get("learned_sparse") and "bge-sparse" in settings.retrieval.retrievers:
        learned = LearnedSparseIndex.load(path / "dense")
    elif "bge-sparse" in settings.retrieval.retrievers:
        raise IndexError_(f"index {path} has no learned sparse weights: rebuild it with embedder.bge_sparse=true (bge-m3)")
    check.wait()
    return IndexFolder(path, manifest, chunks, sparse, dense, learned)


# ---------------------------------------------------------------- writing


def _write(
    settings: Settings,
    final: Path,
    chunks: list[Chunk],
    digests: dict[str, str],
    vectors: np.ndarray | None,
    manifest: IndexManifest,
    progress: bool,
    lexical: object | None = None,
    extra: dict[str, str] | None = None,
    base: IndexFolder | None = None,
    appended: int = 0,
    tail_only: bool = False,
) -> None:
    """Write a complete index into a temporary folder, then swap it in with two renames (writer lock held).
    ``extra``: more files (name -> text) that belong to this version of the index, e.g. `local_rag.index.sync`'s
    file digests. With ``base`` (the open index) and ``appended`` (the last rows of ``chunks`` and ``vectors`` are
    new), the BM25 index gets one more segment and FAISS adds the new vectors: the cost of the new rows only.
    ``tail_only``: ``chunks`` and ``vectors`` hold only the appended rows (the base's come from its files, never
    parsed), for an append the base can take whole (`add_documents` checks: local backend, a BM25 segment allowed,
    the dense index on the CPU, no learned sparse weights)."""
    # taken now: ``manifest`` is the base's own record, updated below before the checksums are recorded
    record_base = (base.path, base.manifest.integrity, base.manifest.chunks) if tail_only and base is not None else None
    base_rows = record_base[2] if record_base is not None else 0
    with writing(final, settings.index_lock_timeout_s):
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.parent / f".{final.name}.building-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            if base is not None and appended:
                shutil.copyfile(base.path / CHUNKS_FILE, tmp / CHUNKS_FILE)
            with (tmp / CHUNKS_FILE).open("a", encoding="utf-8") as fh:
                for chunk in chunks[len(chunks) - appended if base is not None and appended else 0 :]:
                    fh.write(json.dumps(chunk.to_json(), ensure_ascii=False) + "\n")
            (tmp / PASSAGES_FILE).write_text(json.dumps(digests), encoding="utf-8")
            for name, text in (extra or {}).items():
                (tmp / name).write_text(text, encoding="utf-8")
            texts = [index_text(c, settings.chunker.header) for c in chunks]
            if manifest.backend == "qdrant":
                from local_rag.index.backends.qdrant import write_qdrant

                write_qdrant(tmp, settings, chunks, texts, vectors if manifest.dense is not None else None,
                             base.path if base is not None else None, base.chunks if base is not None else None)
            if manifest.sparse is not None and manifest.backend == "local":
                (tmp / "sparse").mkdir()
                started = time.perf_counter()
                old = base.path / "sparse" if base is not None and base.sparse is not None else None
                write_sparse(tmp / "sparse", texts, settings.sparse, old, appended, progress)
                manifest.stats["sparse_s"] = round(time.perf_counter() - started, 3)
            if manifest.dense is not None and vectors is not None and manifest.backend == "local":
                (tmp / "dense").mkdir()
                started = time.perf_counter()
                if base is not None and appended and base.dense is not None and not base.dense.on_gpu:  # a GPU copy may be flat
                    dense = base.dense.extend(vectors[len(vectors) - appended :])
                else:
                    dense = DenseIndex.build(vectors, settings.dense)
                dense.save(tmp / "dense")
                manifest.dense["faiss_factory"] = dense.factory
                manifest.stats["faiss_s"] = round(time.perf_counter() - started, 3)
                if lexical is not None:
                    LearnedSparseIndex(lexical).save(tmp / "dense")
            manifest.stats["peak_rss_mb"] = round(peak_rss_mb(), 1)
            manifest.passages = len(digests)
            manifest.chunks = base_rows + len(chunks)
            manifest.corpus_hash = corpus_hash(digests)
            manifest.integrity = integrity.record(tmp, texts, record_base)
            manifest.save(tmp)
            old = final.parent / f".{final.name}.old-{os.getpid()}"
            with swapping(final):
                if final.exists():
                    os.rename(final, old)
                os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        except OSError as exc:  # a full disk, a quota, a file system gone read-only: the user's to fix, in one line
            shutil.rmtree(tmp, ignore_errors=True)
            raise IndexError_(f"could not write index {final.name} in {final.parent}: {exc.strerror or exc}; the "
                              "index there before is untouched") from exc
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _chunk_passages(settings: Settings, passages: list[Passage], progress: bool,
                    tokenizer: tuple[Tokenizer, str] | None = None) -> tuple[list[Chunk], str]:
    tok, tokenizer_name = tokenizer or _tokenizer_for(settings)
    chunker = Chunker(tok, settings.chunker.size, settings.chunker.overlap)
    stream: Iterable[Passage] = passages
    if progress:
        from tqdm import tqdm

        stream = tqdm(passages, desc="chunking", unit="passage")
    return list(chunker.chunk(stream)), tokenizer_name


def _embed(embedder: Embedder | None, chunks: list[Chunk], progress: bool, settings: Settings) -> np.ndarray | None:
    """The chunks' vectors, each batch written to the index's journal (`local_rag.embed.journal`) as it is
    embedded: a write that is interrupted or fails keeps them, and the same command reads them back; `drop_journal`
    removes them once the write succeeded."""
    if embedder is None:
        return None
    journal = None
    if chunks and embedder.dimension:
        journal = EmbeddingJournal.open(journal_folder(settings.indexes_dir, settings.index), embedder.checksum,
                                        embedder.dimension)
    try:
        vectors = embedder.embed([index_text(c, settings.chunker.header) for c in chunks], kind="passage",
                                 progress=progress, for_index=True, journal=journal)
    except BaseException:
        if journal is not None and journal.rows > journal.kept_before:
            log.warning("note: the %d chunk vectors embedded so far are kept in %s: the same command goes on from "
                        "there (delete that folder to drop them)", journal.rows, journal.folder)
        raise
    finally:
        if journal is not None:
            journal.close()
            if not journal.rows:
                drop_journal(settings)
    if journal is not None and journal.reused:
        log.warning("note: %d of %d chunk vectors read back from a run that was interrupted (%s)", journal.reused,
                    len(chunks), journal.folder)
    return vectors


def drop_journal(settings: Settings) -> None:
    """The index was written: the vectors an interrupted run kept for it are no longer needed."""
    shutil.rmtree(journal_folder(settings.indexes_dir, settings.index), ignore_errors=True)


def _lexical(embedder: Embedder | None, chunks: list[Chunk], settings: Settings) -> object | None:
    """BGE-M3 learned sparse weights of the chunks as a CSR matrix (a second encoder pass), or None."""
    if embedder is None or not settings.embedder.bge_sparse or not hasattr(embedder, "lexical_weights"):
        return None
    texts = [index_text(c, settings.chunker.header) for c in chunks]
    size = settings.embedder.batch_size
    out: list[dict[str, float]] = []
    for start in range(0, len(texts), size):
        out.extend(embedder.lexical_weights(texts[start : start + size]))
    return LearnedSparseIndex.build(out, VOCAB_BOUND).matrix


def _stored_lexical(folder: IndexFolder) -> object | None:
    if folder.manifest.dense is None or not folder.manifest.dense.get("learned_sparse"):
        return None
    return LearnedSparseIndex.load(folder.path / "dense").matrix


def _read_all(corpus: str | Path, skip_bad: bool, progress: bool = False,
              options: ReadOptions = ReadOptions()) -> tuple[list[Passage], CorpusReport]:
    report = CorpusReport(progress=progress)
    passages = list(read_corpus(corpus, skip_bad=skip_bad, report=report, options=options))
    if not passages:
        left = f" (--exclude left out {len(report.excluded)} document(s))" if report.excluded else ""
        raise BadInputError(f"{corpus}: no passages to index{left}")
    return passages, report


def build_index(
    settings: Settings,
    corpus: str | Path,
    embedder: Embedder | None = None,
    skip_bad: bool = False,
    progress: bool = True,
    options: ReadOptions = ReadOptions(),
) -> IndexManifest:
    """Build ``indexes/<settings.index>`` from a corpus, replacing any previous one only on success.

    ``embedder`` is required when ``settings.dense.enabled``. ``options``: what of a folder is read besides its
    documents and what is left out (`ReadOptions`: ``--exclude``, ``--images``, ``--code``, ``--gitignore``,
    ``--git-log``), kept in the manifest for every later add and sync; an exclude pattern is taken as the shell shows
    it, inside ``corpus`` (`local_rag.patterns.in_folder`).
    """
    if settings.dense.enabled and embedder is None:
        raise ValueError("a dense index needs an embedder")
    settings = with_code_words(settings, options.code)
    if embedder is not None and settings.dense.enabled and settings.backend.name == "local":
        check_factory(settings.dense.factory, embedder.dimension)  # a bad --factory: before hours of embedding
    tokenizer = _tokenizer_for(settings)  # a missing model before the documents are read
    started = time.perf_counter()
    options = dataclasses.replace(options, exclude=tuple(dict.fromkeys(in_folder(p, str(corpus)) for p in options.exclude)))
    passages, report = _read_all(corpus, skip_bad, progress, options)
    read_s = time.perf_counter() - started
    started = time.perf_counter()
    chunks, tokenizer_name = _chunk_passages(settings, passages, progress, tokenizer)
    chunk_s = time.perf_counter() - started
    started = time.perf_counter()
    vectors = _embed(embedder if settings.dense.enabled else None, chunks, progress, settings)
    embed_s = time.perf_counter() - started
    digests = {p.id: passage_digest(p) for p in passages}
    manifest = IndexManifest(
        name=settings.index,
        created=_now(),
        package_version=__version__,
        corpus_source=str(corpus),
        corpus_hash="",
        passages=0,
        chunks=0,
        chunker=_chunker_section(settings, tokenizer_name),
        sparse=_sparse_section(settings),
        dense=_dense_section(settings, embedder) if settings.dense.enabled else None,
        skipped=len(report.skipped),
        backend=settings.backend.name,
        stats={"read_s": round(read_s, 3), "chunk_s": round(chunk_s, 3), "embed_s": round(embed_s, 3),
               **format_stats(report), **_unspaced_stats(chunks)},
        unreadable=dict(report.unreadable),
        unread_scans=dict(report.unread_scans),
    )
    manifest.keep(options)
    documents = Path(corpus).is_dir() and not (Path(corpus) / "corpus.jsonl").exists()  # not a BEIR corpus's folder
    manifest.folder = str(Path(corpus).resolve()) if documents else ""
    lexical = _lexical(embedder if settings.dense.enabled else None, chunks, settings)
    extra = {FILES_FILE: json.dumps(report.files, indent=0)} if report.files else None
    _write(settings, settings.index_dir, chunks, digests, vectors, manifest, progress, lexical, extra)
    drop_journal(settings)
    return manifest


def with_code_words(settings: Settings, code: bool) -> Settings:
    """``settings`` whose BM25 splits identifiers (`local_rag.index.sparse.identifier_words`) when the index reads
    source code: on the questions Qwen wrote for this package's own code, BM25 alone put the chunk asked about first
    for 0.127 of them unsplit, 0.246 split (docs/benchmarks.md, "Reading source code"). An ``identifiers`` given in
    the settings (`LOCAL_RAG_SPARSE__IDENTIFIERS=false`) is kept."""
    if not code or "identifiers" in settings.sparse.model_fields_set:
        return settings
    settings = settings.model_copy(deep=True)
    settings.sparse.identifiers = True
    return settings


def _unspaced_stats(chunks: Sequence[Chunk]) -> dict[str, float]:
    """``unspaced_chunks``: chunks mostly in a script written without spaces (`text.unspaced_share` >= 0.3), which
    BM25 and an English embedder read poorly (the end-of-build report says so); absent when there is none."""
    count = sum(unspaced_share(c.text) >= 0.3 for c in chunks)
    return {"unspaced_chunks": count} if count else {}


def format_stats(report: CorpusReport) -> dict[str, float]:
    """``pages_<format>`` and ``pages_per_s_<format>`` of the documents read (PDF pages, PPTX slides, files), and
    ``pages_ocr``: the scanned pages among them, read by OCR (a PDF's pages a second fall with them)."""
    out: dict[str, float] = {}
    for fmt, (seconds, pages) in sorted(report.formats.items()):
        out[f"pages_{fmt}"] = pages
        out[f"pages_per_s_{fmt}"] = round(pages / seconds, 1) if seconds > 0 else 0.0
    if report.ocr:
        out["pages_ocr"] = sum(map(len, report.ocr.values()))
    return out


def _stored_vectors(folder: IndexFolder) -> np.ndarray | None:
    return None if folder.dense is None else np.asarray(folder.dense.vectors, dtype=np.float32)


def _kept_files(folder: IndexFolder) -> dict[str, str]:
    """The files of ``folder`` that a rewrite by `add_documents`, `remove_documents` or `rebuild_index` carries over
    (before, they dropped ``files.json``: the next `index sync` re-read and re-embedded every document)."""
    path = folder.path / FILES_FILE
    return {FILES_FILE: path.read_text(encoding="utf-8")} if path.is_file() else {}


def _open_for_update(
    settings: Settings, embedder: Embedder | None, derived: bool = True
) -> tuple[IndexFolder, dict[str, str]]:
    folder = open_index(settings, model_checksum=embedder.checksum if embedder else None, derived=derived)
    try:
        digests = json.loads((folder.path / PASSAGES_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise IndexError_(f"{folder.path / PASSAGES_FILE} is missing or corrupt ({exc}); rebuild the index") from exc
    return folder, digests


@one_writer
def add_documents(
    settings: Settings,
    corpus: str | Path,
    embedder: Embedder | None = None,
    skip_bad: bool = False,
    replace: bool = False,
    progress: bool = True,
    exclude: Sequence[str] = (),
) -> IndexManifest:
    """Add passages to an index, embedding only them. Existing ids are refused unless ``replace``. The index's own
    exclude patterns and ``exclude`` (kept with them) leave documents out.

    An add that replaces nothing appends: the stored chunk list is copied as bytes, never parsed, BM25 gets one more
    segment and FAISS the new vectors (`_write` with ``tail_only``); otherwise the kept rows are carried over."""
    folder, digests = _open_for_update(settings, embedder)
    tokenizer = _tokenizer_for(settings)  # a missing model before the documents are read
    options = folder.manifest.read_options().joined(
        ReadOptions(exclude=tuple(in_folder(p, str(corpus)) for p in exclude)))
    passages, report = _read_all(corpus, skip_bad, options=options)
    clash = [p.id for p in passages if p.id in digests]
    if clash and not replace:
        raise BadInputError(
            f"{len(clash)} passage id(s) already in the index (first: {clash[0]!r}); use --replace to update them"
            + _other_file(folder, passages, clash)
        )
    new_ids = {p.id for p in passages}
    new_chunks, _ = _chunk_passages(settings, passages, progress, tokenizer)
    if folder.manifest.dense is not None and embedder is None:
        raise ValueError("this index has a dense part: adding needs the embedder")
    tail_only = not clash and _can_take_tail(folder, len(new_chunks))
    keep: list[int] = []  # rows of the stored chunks carried over (not for a tail-only append, which reads none)
    if tail_only:
        chunks, appended = new_chunks, len(new_chunks)
    else:
        stored = list(folder.chunks)  # parsed once
        keep = [i for i, c in enumerate(stored) if c.passage_id not in new_ids]
        chunks = [stored[i] for i in keep] + new_chunks
        appended = len(new_chunks) if len(keep) == len(stored) else 0  # nothing replaced: append
    vectors = None
    if folder.manifest.dense is not None:
        new_vectors = _embed(embedder, new_chunks, progress, settings)
        assert new_vectors is not None
        if tail_only:
            vectors = new_vectors
        else:
            old = folder.dense.vectors if appended and folder.dense is not None else _stored_vectors(folder)
            assert old is not None
            if appended:
                vectors = np.concatenate([old, new_vectors.astype(old.dtype)])
            else:
                vectors = np.concatenate([old[keep], new_vectors]) if keep else new_vectors
    lexical = None if tail_only else _stored_lexical(folder)
    if lexical is not None:
        from scipy import sparse

        lexical = sparse.vstack([lexical[keep], _lexical(embedder, new_chunks, settings)]).tocsr()  # type: ignore[index]
    for pid in new_ids:
        digests.pop(pid, None)
    digests.update({p.id: passage_digest(p) for p in passages})
    manifest = folder.manifest
    manifest.keep(options)
    manifest.history.append({"action": "add", "source": str(corpus), "passages": len(passages), "at": _now()})
    manifest.skipped += len(report.skipped)
    _write(settings, folder.path, chunks, digests, vectors, manifest, progress, lexical, _kept_files(folder), base=folder,
           appended=appended, tail_only=tail_only)
    drop_journal(settings)
    return manifest


def _other_file(folder: IndexFolder, passages: Sequence[Passage], clash: Sequence[str]) -> str:
    """When a clashing id is another file's (a second folder's ``readme.md`` beside the first folder's: ids are paths
    relative to the folder given), what ``--replace`` would do, said before it does it (session 51: the suggested
    --replace put the second folder's file in the place of the first's); "" otherwise (an updated copy of the same
    file, or record corpora)."""
    new = {p.id: p.url for p in passages if p.id in set(clash) and p.url.startswith("file:")}
    if not new:
        return ""
    stored = next((c for c in folder.chunks if c.passage_id in new and c.url.startswith("file:")
                   and c.url != new[c.passage_id]), None)
    if stored is None:
        return ""
    return (f", but {stored.passage_id!r} in the index is another file ({stored.url}; this one is "
            f"{new[stored.passage_id]}): --replace would put this one in its place. To keep both, build the index from "
            "a folder that holds both (ids are paths relative to the folder given)")


def _can_take_tail(folder: IndexFolder, added: int) -> bool:
    """Whether ``added`` rows can be appended without reading the stored rows: what `_write` would otherwise rebuild
    from them (a merged BM25 index, a FAISS index off the CPU, learned sparse weights, a Qdrant collection)."""
    m = folder.manifest
    if m.backend != "local" or added == 0 or (m.dense is not None and m.dense.get("learned_sparse")):
        return False
    if m.sparse is not None and (folder.sparse is None or not SegmentedSparse.can_append(folder.path / "sparse", added)):
        return False
    return m.dense is None or (folder.dense is not None and not folder.dense.on_gpu)


@one_writer
def remove_documents(settings: Settings, ids: list[str], by: str = "passage", progress: bool = False) -> IndexManifest:
    """Remove passages (``by="passage"``) or whole documents (``by="doc"``) without re-embedding anything."""
    # open every stored part whatever the query settings say: the stored vectors must be carried over (a caller that
    # asked for no retrievers, to skip loading the embedder, once got an index whose dense part was dropped)
    all_parts = settings.model_copy(deep=True)
    has_dense = settings.dense.enabled and IndexManifest.load(settings.index_dir).dense is not None
    all_parts.retrieval.retrievers = ["bm25", "dense"] if has_dense else ["bm25"]
    folder, digests = _open_for_update(all_parts, None)
    wanted = set(ids)

    def key(c: Chunk) -> str:
        return c.passage_id if by == "passage" else c.doc_id

    stored = list(folder.chunks)  # parsed once
    present = {key(c) for c in stored}
    missing = sorted(wanted - present)
    if missing:
        raise BadInputError(f"{len(missing)} {by} id(s) not in the index (first: {missing[0]!r})")
    keep = [i for i, c in enumerate(stored) if key(c) not in wanted]
    if not keep:
        raise BadInputError(f"removing these would leave index {folder.path.name} empty; delete it instead "
                            f"(`local-rag index delete {folder.path.name}`)")
    removed_passages = {c.passage_id for c in stored if key(c) in wanted}
    chunks = [stored[i] for i in keep]
    old = _stored_vectors(folder)
    vectors = old[keep] if old is not None else None
    lexical = _stored_lexical(folder)
    if lexical is not None:
        lexical = lexical[keep]  # type: ignore[index]
    for pid in removed_passages:
        digests.pop(pid, None)
    manifest = folder.manifest
    kept = _kept_files(folder)
    if kept:  # files of the synced folder none of whose passages is left: `index sync` leaves them out (--restore)
        files = json.loads(kept[FILES_FILE])
        gone = {c.doc_id for c in stored} - {c.doc_id for c in chunks}
        manifest.left_out = sorted(set(manifest.left_out) | {d for d in gone if d in files})
    manifest.history.append({"action": "remove", "by": by, "ids": len(wanted), "passages": len(removed_passages), "at": _now()})
    _write(settings, folder.path, chunks, digests, vectors, manifest, progress, lexical, kept, base=folder)
    return manifest


@one_writer
def rebuild_index(settings: Settings, progress: bool = False, backend: BackendConfig | None = None) -> IndexManifest:
    """Rebuild the BM25 matrix and the FAISS index with the current settings (BM25 parameters, FAISS factory) from
    the stored chunks and vectors, re-embedding nothing. Chunker and embedder must still match. ``backend``: move the
    index there (`index rebuild --backend`); None keeps the index's own backend, and a Qdrant index its server URL
    (``settings.backend`` is for new indexes, as with `add_documents`)."""
    all_parts = settings.model_copy(deep=True)
    all_parts.retrieval.retrievers = ["bm25", "dense"] if settings.dense.enabled else ["bm25"]
    folder, digests = _open_for_update(all_parts, None, derived=False)
    manifest = folder.manifest
    settings = with_code_words(settings, manifest.code)
    if backend is None:
        url = ""
        if manifest.backend == "qdrant":
            from local_rag.index.backends.qdrant import read_meta

            url = str(read_meta(folder.path).get("url") or "")
        backend = BackendConfig(name=manifest.backend, url=url)
    settings = settings.model_copy(update={"backend": backend})
    if manifest.dense is not None and backend.name == "local":
        check_factory(settings.dense.factory, int(manifest.dense.get("dimension") or 0))
    manifest.sparse = _sparse_section(settings)
    if manifest.dense is not None:
        manifest.dense["factory"] = settings.dense.factory
    manifest.history.append({"action": "rebuild", "at": _now()})
    manifest.backend = settings.backend.name
    _write(settings, folder.path, list(folder.chunks), digests, _stored_vectors(folder), manifest, progress,
           _stored_lexical(folder), _kept_files(folder))
    return manifest

"""An interrupted `index build` / `add` / `sync` keeps the vectors it embedded (`local_rag.embed.journal`), and the
same command goes on from there: it embeds only the rest, and the index equals an uninterrupted build bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from local_rag.embed.journal import EmbeddingJournal, journal_folder
from local_rag.index import build_index, open_index
from local_rag.index.sync import sync_index
from local_rag.settings import Settings

from .conftest import HashEmbedder, needs_minilm


def _notes(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):  # lengths differ: the batches are cut from the texts sorted by length
        (folder / f"note{i:03d}.md").write_text(f"# Note {i}\n\n" + f"Reading {i} of the river gauge. " * (1 + i % 7))
    return folder


class Interrupted(HashEmbedder):
    """Ctrl-C after ``batches`` batches."""

    def __init__(self, config, batches: int) -> None:  # type: ignore[no-untyped-def]
        super().__init__(config)
        self.left = batches

    def embed_batch(self, texts, kind):  # type: ignore[no-untyped-def]
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return super().embed_batch(texts, kind)


def _vectors(settings: Settings, embedder: HashEmbedder) -> dict[str, np.ndarray]:
    index = open_index(settings, model_checksum=embedder.checksum)
    assert index.dense is not None
    return {c.id: np.asarray(index.dense.vectors[i]) for i, c in enumerate(index.chunks)}


def test_an_interrupted_build_goes_on_where_it_stopped(tmp_path: Path, fake_settings: Settings,
                                                        hash_embedder: HashEmbedder, caplog: pytest.LogCaptureFixture):
    settings = fake_settings.model_copy(update={"embedder": fake_settings.embedder.model_copy(update={"batch_size": 4})})
    folder = _notes(tmp_path / "notes", 30)
    journal = journal_folder(settings.indexes_dir, settings.index)
    with caplog.at_level("WARNING", logger="local_rag.index"), pytest.raises(KeyboardInterrupt):
        build_index(settings, folder, embedder=Interrupted(settings.embedder, batches=5), progress=False)
    assert "the 20 chunk vectors embedded so far are kept in" in caplog.text and "goes on from there" in caplog.text
    assert (journal / "batches.jsonl").read_text().count("\n") == 5
    assert not settings.index_dir.exists()

    # a torn last line and rows without a line, as a kill in the middle of a write leaves them, are read past
    with (journal / "batches.jsonl").open("a") as fh:
        fh.write('{"key": "abc", "ro')
    with (journal / "vectors.f32").open("ab") as fh:
        fh.write(b"\0" * 64 * 4 * 3)
    resumed = HashEmbedder(settings.embedder)
    caplog.clear()
    with caplog.at_level("WARNING", logger="local_rag.index"):
        build_index(settings, folder, embedder=resumed, progress=False)
    chunks = open_index(settings, model_checksum=hash_embedder.checksum).manifest.chunks
    assert resumed.calls == chunks - 20 and f"20 of {chunks} chunk vectors read back" in caplog.text
    assert not journal.exists()  # the build succeeded: the journal is gone

    fresh = settings.model_copy(update={"index": "fresh"})
    build_index(fresh, folder, embedder=hash_embedder, progress=False)
    got, want = _vectors(settings, hash_embedder), _vectors(fresh, hash_embedder)
    assert got.keys() == want.keys() and all(np.array_equal(got[k], want[k]) for k in want)


def test_an_interrupted_sync_goes_on_and_nothing_is_kept_when_nothing_was_embedded(
        tmp_path: Path, fake_settings: Settings, hash_embedder: HashEmbedder):
    settings = fake_settings.model_copy(update={"embedder": fake_settings.embedder.model_copy(update={"batch_size": 4})})
    folder = _notes(tmp_path / "notes", 4)
    sync_index(settings, folder, embedder=hash_embedder, progress=False)
    before = open_index(settings, model_checksum=hash_embedder.checksum).manifest.chunks
    _notes(folder, 20)  # 16 new files
    with pytest.raises(KeyboardInterrupt):
        sync_index(settings, folder, embedder=Interrupted(settings.embedder, batches=2), progress=False)
    resumed = HashEmbedder(settings.embedder)
    result = sync_index(settings, folder, embedder=resumed, progress=False)
    assert len(result.plan.added) == 16 and result.embedded_chunks == result.manifest.chunks - before
    assert resumed.calls == result.embedded_chunks - 8  # two batches of four read back
    assert not journal_folder(settings.indexes_dir, settings.index).exists()
    # interrupted before its first batch: no journal folder is left behind
    (folder / "note999.md").write_text("# Late\n\nOne more reading.\n")
    with pytest.raises(KeyboardInterrupt):
        sync_index(settings, folder, embedder=Interrupted(settings.embedder, batches=0), progress=False)
    assert not journal_folder(settings.indexes_dir, settings.index).exists()


def test_a_journal_of_another_model_is_emptied_and_a_second_writer_keeps_none(tmp_path: Path):
    folder = tmp_path / ".docs.embedding"
    first = EmbeddingJournal.open(folder, "model-a", 4)
    assert first is not None
    first.add(["a", "b"], "passage", np.ones((2, 4), dtype=np.float32))
    assert EmbeddingJournal.open(folder, "model-a", 4) is None  # another process embeds for the same index
    first.close()
    again = EmbeddingJournal.open(folder, "model-a", 4)
    assert again is not None and again.rows == 2
    got = again.get(["a", "b"], "passage")
    assert got is not None and np.array_equal(got, np.ones((2, 4))) and again.get(["a", "b"], "query") is None
    again.close()
    other = EmbeddingJournal.open(folder, "model-b", 4)
    assert other is not None and other.rows == 0 and other.get(["a", "b"], "passage") is None
    assert json.loads((folder / "meta.json").read_text()) == {"checksum": "model-b", "dimension": 4}
    other.close()


@needs_minilm
@pytest.mark.slow
def test_vectors_read_back_equal_the_real_models_bit_for_bit(tmp_path: Path, minilm, minilm_settings: Settings):
    """With all-MiniLM-L6-v2 the vectors of a batch depend on its padding: a batch read back must be the batch the
    uninterrupted build embeds, so the resumed index equals it exactly."""
    settings = minilm_settings.model_copy(update={"indexes_dir": tmp_path / "indexes"})
    folder = _notes(tmp_path / "notes", 24)

    calls = {"left": 2}
    real = minilm.embed_batch

    def interrupted(texts, kind):  # type: ignore[no-untyped-def]
        if calls["left"] == 0:
            raise KeyboardInterrupt
        calls["left"] -= 1
        return real(texts, kind)

    config = minilm.config
    minilm.config = config.model_copy(update={"batch_size": 8})  # three batches of texts of different lengths
    try:
        minilm.embed_batch = interrupted
        with pytest.raises(KeyboardInterrupt):
            build_index(settings, folder, embedder=minilm, progress=False)
        del minilm.embed_batch
        build_index(settings, folder, embedder=minilm, progress=False)
        fresh = settings.model_copy(update={"index": "fresh"})
        build_index(fresh, folder, embedder=minilm, progress=False)
    finally:
        minilm.__dict__.pop("embed_batch", None)
        minilm.config = config
    a = open_index(settings, model_checksum=minilm.checksum)
    b = open_index(fresh, model_checksum=minilm.checksum)
    assert a.dense is not None and b.dense is not None
    assert np.array_equal(np.asarray(a.dense.vectors), np.asarray(b.dense.vectors))


def test_the_same_batch_twice_is_kept_once(tmp_path: Path):
    """Two batches of the same texts (copied chunks) are one entry: the rows of each line follow the previous
    line's, so a second entry would shift every later batch when read back."""
    folder = tmp_path / ".docs.embedding"
    journal = EmbeddingJournal.open(folder, "m", 2)
    assert journal is not None
    journal.add(["a"], "passage", np.array([[1, 1]], dtype=np.float32))
    journal.add(["a"], "passage", np.array([[1, 1]], dtype=np.float32))
    journal.add(["b"], "passage", np.array([[2, 2]], dtype=np.float32))
    journal.close()
    again = EmbeddingJournal.open(folder, "m", 2)
    assert again is not None and again.rows == 2
    b = again.get(["b"], "passage")
    assert b is not None and b.tolist() == [[2.0, 2.0]]
    again.close()

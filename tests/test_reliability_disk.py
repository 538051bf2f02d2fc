"""A write the machine refuses (a full disk, a file system's size limit): one line, nothing half-written, and the
vectors embedded so far not lost. The limit is real: the child process runs under RLIMIT_FSIZE, so its writes past
it fail with EFBIG as they would on a full or FAT32 disk (Python ignores SIGXFSZ)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from .conftest import MODELS, ROOT
from .docs_fixtures import make_folder


def _limited(limit: int):  # type: ignore[no-untyped-def]
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_an_index_write_the_disk_refuses_is_one_line_and_leaves_the_old_index(tmp_path: Path):
    folder = make_folder(tmp_path / "docs")
    (folder / "long.md").write_text("# Long\n\n" + "The river gauge read high again today. " * 4000)
    env = {**os.environ, "LOCAL_RAG_MODELS_DIR": str(MODELS), "LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes")}
    env.pop("LOCAL_RAG_DEBUG", None)
    args = [sys.executable, "-m", "local_rag", "index", "build", str(folder), "--index", "notes", "--sparse-only",
            "--profile", "cpu-test"]
    small = folder.parent / "small"
    small.mkdir()
    (small / "a.md").write_text("# A\n\nA short note.\n")
    ok = subprocess.run([*args[:5], str(small), *args[6:]], env=env, capture_output=True, text=True, timeout=600,
                        cwd=ROOT)
    assert ok.returncode == 0, ok.stderr
    before = (tmp_path / "indexes" / "notes" / "manifest.json").read_bytes()
    refused = subprocess.run([*args, "--replace"], env=env, capture_output=True, text=True, timeout=600, cwd=ROOT,
                             preexec_fn=_limited(64 * 1024))
    assert refused.returncode == 3 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.strip().splitlines()[-1] == (
        f"error: could not write index notes in {tmp_path / 'indexes'}: File too large; the index there before is "
        "untouched")
    assert (tmp_path / "indexes" / "notes" / "manifest.json").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "indexes").iterdir()) == [".notes.lock", ".notes.swap", "notes"]


def test_a_journal_the_disk_refuses_lets_the_embedding_go_on(tmp_path: Path):
    script = f"""
import logging, numpy as np
from pathlib import Path
from local_rag.embed.journal import EmbeddingJournal
j = EmbeddingJournal.open(Path({str(tmp_path / '.x.embedding')!r}), "m", 256)
for i in range(20):  # 1 KiB a row, 32 KiB a batch: past the limit at the third
    j.add([f"t{{i}}-{{k}}" for k in range(32)], "passage", np.ones((32, 256), dtype=np.float32))
print(j.broken, j.rows)
j.close()
again = EmbeddingJournal.open(Path({str(tmp_path / '.x.embedding')!r}), "m", 256)
print(again.rows, again.get([f"t0-{{k}}" for k in range(32)], "passage") is not None)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limited(80 * 1024))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "64", "64", "True"]
    assert "cannot keep more vectors in" in done.stderr and "File too large" in done.stderr


def test_any_command_a_full_disk_stops_says_so_in_one_line(tmp_path: Path):
    """Outside the index writes (which name the index): `models import` copying onto a disk that refuses the file."""
    from .llm_fixtures import write_tiny_gguf

    gguf = write_tiny_gguf(tmp_path / "tiny.gguf")
    env = {**os.environ, "LOCAL_RAG_MODELS_DIR": str(tmp_path / "models")}
    env.pop("LOCAL_RAG_DEBUG", None)
    refused = subprocess.run([sys.executable, "-m", "local_rag", "models", "import", str(gguf), "--name", "tiny"],
                             env=env, capture_output=True, text=True, timeout=600, cwd=ROOT,
                             preexec_fn=_limited(8 * 1024))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.strip().splitlines()[-1] == (
        "error: File too large (the file system there holds no file this large (FAT32: 4 GiB); choose another place)")
    assert not (tmp_path / "models" / "tiny").exists() and not (tmp_path / "models" / ".tiny.importing").exists()

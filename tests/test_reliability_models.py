"""Issue 27: a model file changed in place is caught by content, at every load and by `models verify`.

The probe: flip one byte of a model file and put its mtime back. The sha256 cache used to be keyed on
(path, size, mtime), so `models verify` said ok and `ask`/`search` ran the corrupted model with exit 0.
Copies in tmp dirs only: the real models/ is never touched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from local_rag.cli.main import cli
from local_rag.errors import ModelError
from local_rag.modelstore import resolve_model
from local_rag.modelstore.gguf_check import resolve_gguf
from local_rag.modelstore.importer import import_path
from local_rag.modelstore.manifest import Manifest, file_sha256
from tests.conftest import CORPUS, MODELS, minilm_present, write_jsonl


def flip_byte_keep_mtime(path: Path, offset: int | None = None) -> None:
    """One byte changed in place, size and mtime as before (what the cache used to look at)."""
    stat = path.stat()
    with path.open("r+b") as fh:
        fh.seek(stat.st_size // 2 if offset is None else offset)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0x01]))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_mtime_ns == stat.st_mtime_ns and path.stat().st_size == stat.st_size


def test_a_flipped_byte_with_its_mtime_restored_fails_verify_and_load(tmp_path: Path, tiny_gguf: Path) -> None:
    models = tmp_path / "models"
    import_path(tiny_gguf, models, name="my-llm")
    target = models / "my-llm" / "tiny.gguf"
    before = file_sha256(target)  # cached now
    assert resolve_gguf("my-llm", models) == target
    flip_byte_keep_mtime(target)
    assert file_sha256(target) != before  # the ctime moved, so the cache does not answer
    with pytest.raises(ModelError, match="sha256 does not match"):
        resolve_gguf("my-llm", models)
    res = CliRunner().invoke(cli, ["models", "verify", "--models-dir", str(models)])
    assert res.exit_code == 4 and "sha256 mismatch" in res.output


def test_verify_force_rehashes_ignoring_the_cache(tmp_path: Path, tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    import_path(tiny_gguf, models, name="my-llm")
    calls = []
    real = file_sha256

    def spy(path: Path, use_cache: bool = True) -> str:
        calls.append(use_cache)
        return real(path, use_cache)

    monkeypatch.setattr("local_rag.modelstore.manifest.file_sha256", spy)
    res = CliRunner().invoke(cli, ["models", "verify", "--force", "--models-dir", str(models)])
    assert res.exit_code == 0, res.output
    assert calls == [False]


def embedder_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "src" / "emb"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"dim": 8}')
    (folder / "model.safetensors").write_bytes(bytes(range(256)) * 64)
    return folder


def test_embedder_folders_are_checked_at_load_like_ggufs(tmp_path: Path) -> None:
    models = tmp_path / "models"
    import_path(embedder_folder(tmp_path), models, name="emb", role="embedder")
    location, checksum = resolve_model("emb", models, role="embedder")
    flip_byte_keep_mtime(location / "model.safetensors")
    with pytest.raises(ModelError, match="model.safetensors: sha256 does not match"):
        resolve_model("emb", models, role="embedder")


def test_a_truncated_model_file_is_named_as_truncated(tmp_path: Path, tiny_gguf: Path) -> None:
    models = tmp_path / "models"
    import_path(tiny_gguf, models, name="my-llm")
    target = models / "my-llm" / "tiny.gguf"
    target.write_bytes(target.read_bytes()[:-100])
    with pytest.raises(ModelError, match="truncated or replaced") as err:
        resolve_gguf("my-llm", models)
    assert "are not in" not in str(err.value)


@pytest.mark.skipif(not minilm_present(), reason="all-MiniLM-L6-v2 not imported (run `make test`)")
def test_corrupted_minilm_copy_stops_search_with_exit_4(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", models / "all-MiniLM-L6-v2")
    manifest = Manifest.load(MODELS)
    copy = Manifest(models, {"all-MiniLM-L6-v2": manifest.get("all-MiniLM-L6-v2")})
    copy.save()
    resolve_model("all-MiniLM-L6-v2", models, role="embedder")  # sound: hashes cached
    env = {"LOCAL_RAG_MODELS_DIR": str(models), "LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes")}
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    assert CliRunner().invoke(cli, ["index", "build", str(corpus), "--index", "h"], env=env).exit_code == 0
    flip_byte_keep_mtime(models / "all-MiniLM-L6-v2" / "model.safetensors")
    res = CliRunner().invoke(cli, ["search", "what is bm25", "--index", "h"], env=env)
    assert res.exit_code == 4, res.output
    assert "model.safetensors: sha256 does not match" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["models", "verify", "all-MiniLM-L6-v2", "--models-dir", str(models)])
    assert res.exit_code == 4 and "sha256 mismatch" in res.output

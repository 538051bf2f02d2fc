"""The demo: profile choice by the models present, and the scripted session over the bundled docs (real models)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from local_rag.cli.main import cli
from local_rag.demo import SCRIPT, demo_profile, docs_folder

from .conftest import MODELS, needs_minilm


def write_manifest(models: Path, names: list[str]) -> None:
    models.mkdir(parents=True, exist_ok=True)
    entries = []
    for name in names:
        (models / name).mkdir()
        (models / name / "model.gguf").write_bytes(b"x")
        entries.append({"name": name, "role": "llm", "format": "gguf", "path": f"{name}/model.gguf", "source": "test",
                        "licence": "test", "files": [{"path": "model.gguf", "size": 1, "sha256": "0" * 64}]})
    (models / "manifest.json").write_text(json.dumps({"models": entries}))


def test_demo_profile_is_the_best_one_whose_llm_is_present(tmp_path: Path) -> None:
    assert demo_profile(tmp_path / "nothing") == "cpu-test"
    write_manifest(tmp_path / "a", ["smollm2-135m-instruct"])
    assert demo_profile(tmp_path / "a") == "cpu-test"
    write_manifest(tmp_path / "b", ["smollm2-135m-instruct", "qwen2.5-coder-1.5b-instruct-q4_k_m"])
    assert demo_profile(tmp_path / "b") == "cpu"
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "manifest.json").write_text("{not json")
    assert demo_profile(tmp_path / "c") == "cpu-test"


def test_the_demo_corpus_is_bundled() -> None:
    names = {p.name for p in docs_folder().glob("*.md")}
    assert {"indexing.md", "retrieval.md"} <= names and len(SCRIPT) >= 3


@needs_minilm
def test_demo_retrieval_only_builds_the_index_once_without_an_llm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    models.mkdir()
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", models / "all-MiniLM-L6-v2")
    shutil.copy(MODELS / "manifest.json", models / "manifest.json")
    monkeypatch.setenv("LOCAL_RAG_MODELS_DIR", str(models))
    monkeypatch.setenv("LOCAL_RAG_INDEXES_DIR", str(tmp_path / "indexes"))
    result = CliRunner().invoke(cli, ["demo", "--profile", "cpu-test", "--retrieval-only"])
    assert result.exit_code == 0, result.output
    assert "built index" in result.output and "indexing.md" in result.output
    assert (tmp_path / "indexes" / "demo" / "manifest.json").exists()
    again = CliRunner().invoke(cli, ["demo", "--profile", "cpu-test", "--retrieval-only"])
    assert again.exit_code == 0 and "built index" not in again.output  # up to date: not rebuilt

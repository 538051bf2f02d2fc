"""An index's adaptation (`local_rag.adaptation`): the settings layer `train adapt` leaves beside the index, where it
sits among the other sources, and what happens when its model is gone or the file is broken. The whole chain
(training, keeping, a real search through the adapted re-scorer) is in test_adapt.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from local_rag.adaptation import (
    adaptation_file,
    adaptations,
    describe,
    in_use,
    read_adaptation,
    remove_adaptation,
    write_adaptation,
)
from local_rag.errors import SettingsError
from local_rag.settings import load_settings

LAYER = {"pipeline": {"cross_encoder": True},
         "reranker": {"backend": "bi-encoder", "model": "notes-adapted", "candidates": 20, "prior_weight": 1.0,
                      "fallback": "skip"}}
RECORD = {"model": "notes-adapted", "mrr@10": [0.41, 0.47], "queries": 30}


@pytest.fixture()
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    models, indexes = tmp_path / "models", tmp_path / "indexes"
    (models / "notes-adapted").mkdir(parents=True)
    indexes.mkdir()
    monkeypatch.setenv("LOCAL_RAG_MODELS_DIR", str(models))
    monkeypatch.setenv("LOCAL_RAG_INDEXES_DIR", str(indexes))
    return models, indexes


def _load(index: str = "notes", config: Path | None = None, **flags: object):
    return load_settings("cpu-test", config, {"index": index, **flags}, adapted=True)


def test_the_adaptation_sits_above_the_profile_and_below_files_variables_and_flags(
        dirs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models, indexes = dirs
    assert not load_settings("cpu-test", None, {"index": "notes"}).pipeline.cross_encoder  # the profile's own
    path = write_adaptation(indexes, "notes", LAYER, RECORD, "# a comment for a person\n")
    assert path == adaptation_file(indexes, "notes") == indexes / "notes.adapted.yaml"
    assert path.read_text(encoding="utf-8").startswith("# a comment") and not list(indexes.glob(".*tmp"))
    s = _load()
    assert s.pipeline.cross_encoder and (s.reranker.backend, s.reranker.model) == ("bi-encoder", "notes-adapted")
    assert in_use(s) == describe(LAYER, RECORD) == (
        "re-scorer notes-adapted (train adapt, held-out MRR@10 0.41 -> 0.47; --no-adaptation leaves it out)")
    # only the commands that answer ask for it; another index has none
    assert not load_settings("cpu-test", None, {"index": "notes"}).pipeline.cross_encoder
    assert not _load("other").pipeline.cross_encoder and in_use(_load("other")) is None
    # off by the setting, from a flag or a variable
    off = _load(index_adaptation=False)
    assert not off.pipeline.cross_encoder and in_use(off) is None
    monkeypatch.setenv("LOCAL_RAG_INDEX_ADAPTATION", "false")
    assert not _load().pipeline.cross_encoder
    monkeypatch.delenv("LOCAL_RAG_INDEX_ADAPTATION")
    # what a user sets explicitly wins: a file, a variable, a flag
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("reranker:\n  candidates: 10\n", encoding="utf-8")
    s = _load(config=cfg)
    assert (s.reranker.model, s.reranker.candidates) == ("notes-adapted", 10)
    monkeypatch.setenv("LOCAL_RAG_RERANKER__MODEL", "all-MiniLM-L6-v2")
    s = _load()
    assert s.reranker.model == "all-MiniLM-L6-v2" and in_use(s) is None  # another re-scorer: not the adaptation's
    monkeypatch.delenv("LOCAL_RAG_RERANKER__MODEL")
    assert not _load(pipeline={"cross_encoder": False}).pipeline.cross_encoder  # --no-cross-encoder


def test_a_missing_model_leaves_the_index_as_it_was_and_a_broken_file_is_one_line(
        dirs: tuple[Path, Path], caplog: pytest.LogCaptureFixture) -> None:
    models, indexes = dirs
    write_adaptation(indexes, "notes", LAYER, RECORD, "")
    (models / "notes-adapted").rmdir()  # `models remove notes-adapted`
    with caplog.at_level(logging.WARNING, logger="local_rag.adaptation"):
        s = _load()
    assert not s.pipeline.cross_encoder and "names the model 'notes-adapted', which is not in" in caplog.text
    assert read_adaptation(indexes, "notes", models) == ({}, {})
    path = adaptation_file(indexes, "notes")
    for text, message in (("reranker: [unclosed\n", "cannot be read: ParserError"),
                          ("- a list\n", "is not an adaptation written by `train adapt`"),
                          ("pipeline:\n  cross_encoder: true\n", "is not an adaptation"),
                          ("index: other\nreranker:\n  model: notes-adapted\n", "sets index, which an index's adaptation may not"),
                          ("llm:\n  model: x\nreranker:\n  model: notes-adapted\n", "sets llm")):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(SettingsError, match=message) as err:
            _load()
        assert str(path) in str(err.value) and "train adapt --index notes" in str(err.value)
    # a work folder's adapted.yaml copied beside its own index is read (its `index` is this one)
    (models / "notes-adapted").mkdir()
    path.write_text("index: notes\nreranker:\n  model: notes-adapted\n", encoding="utf-8")
    assert _load().reranker.model == "notes-adapted"
    # a bad setting inside it is the settings' own one-line error
    path.write_text("reranker:\n  model: notes-adapted\n  candidates: many\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="notes.adapted.yaml: invalid settings: .*reranker.candidates"):
        _load()


def test_removing_takes_only_the_named_models_adaptation(dirs: tuple[Path, Path]) -> None:
    _, indexes = dirs
    assert not remove_adaptation(indexes, "notes", "notes-adapted")  # nothing there
    write_adaptation(indexes, "notes", LAYER, RECORD, "")
    assert not remove_adaptation(indexes, "notes", "notes-adapted-2") and adaptation_file(indexes, "notes").exists()
    assert remove_adaptation(indexes, "notes", "notes-adapted") and not adaptation_file(indexes, "notes").exists()
    adaptation_file(indexes, "broken").write_text("- a list\n", encoding="utf-8")
    assert not remove_adaptation(indexes, "broken", "notes-adapted")  # not ours to judge: its error names it


def test_models_remove_ends_the_adaptations_that_name_the_model(dirs: tuple[Path, Path]) -> None:
    from click.testing import CliRunner

    from local_rag.cli.main import cli
    from local_rag.modelstore.manifest import record_folder

    models, indexes = dirs
    (models / "notes-adapted" / "model.safetensors").write_bytes(b"weights")
    record_folder(models / "notes-adapted", models, "embedder", "adapted to notes", "sentence-transformers")
    write_adaptation(indexes, "notes", LAYER, RECORD, "")
    write_adaptation(indexes, "wiki", LAYER, RECORD, "")
    other = {**LAYER, "reranker": {**LAYER["reranker"], "model": "all-MiniLM-L6-v2"}}
    write_adaptation(indexes, "papers", other, {}, "")
    res = CliRunner().invoke(cli, ["models", "remove", "notes-adapted", "--yes"])
    assert res.exit_code == 0, res.output
    assert "index notes answers without it again" in res.output and "index wiki answers" in res.output
    assert not (models / "notes-adapted").exists() and sorted(p.name for p in indexes.iterdir()) == ["papers.adapted.yaml"]


def test_doctor_lists_every_index_s_adaptation(dirs: tuple[Path, Path]) -> None:
    import json

    from click.testing import CliRunner

    from local_rag.cli.main import cli

    models, indexes = dirs
    write_adaptation(indexes, "notes", LAYER, RECORD, "")
    (indexes / "broken.adapted.yaml").write_text("- a list\n", encoding="utf-8")
    found = adaptations(indexes, models)
    assert found["notes"] == describe(LAYER, RECORD) and found["broken"].startswith("not used: ")
    assert adaptations(indexes, models, "broken") == {"broken": found["broken"]} and adaptations(indexes, models, "x") == {}
    res = CliRunner().invoke(cli, ["doctor", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["adaptations"] == found
    assert "adaptation    index notes: re-scorer notes-adapted" in CliRunner().invoke(cli, ["doctor"]).output


def test_an_index_changed_since_its_adaptation_says_so(dirs: tuple[Path, Path], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`train adapt` records the corpus the check measured; after a sync brings new documents, `index info` and
    `doctor` say the adaptation predates them (it still applies: the user decides)."""
    import json

    from click.testing import CliRunner

    from local_rag.cli.main import cli

    models, indexes = dirs
    monkeypatch.setenv("LOCAL_RAG_CHUNKER__TOKENIZER", "whitespace")  # BM25 alone: no model to load
    (models / "notes-adapted" / "model.safetensors").write_bytes(b"weights")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tides.md").write_text("# Tides\n\nSpring tides come at new and full moon.\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["index", "build", str(folder), "--sparse-only", "--index", "notes"]).exit_code == 0
    manifest = json.loads((indexes / "notes" / "manifest.json").read_text(encoding="utf-8"))
    write_adaptation(indexes, "notes", LAYER, {**RECORD, "corpus_hash": manifest["corpus_hash"], "passages": 1}, "")
    assert adaptations(indexes, models)["notes"] == describe(LAYER, RECORD)  # nothing changed
    (folder / "moons.md").write_text("# Moons\n\nJupiter has dozens of moons.\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["index", "sync", str(folder), "--index", "notes"]).exit_code == 0
    note = "; the index changed since (1 passages then, 2 now): `local-rag train adapt --index notes` again"
    assert note in adaptations(indexes, models)["notes"]
    assert note in CliRunner().invoke(cli, ["index", "info", "--index", "notes"]).output
    write_adaptation(indexes, "notes", LAYER, RECORD, "")  # written before the record had the corpus: no claim
    assert adaptations(indexes, models)["notes"] == describe(LAYER, RECORD)

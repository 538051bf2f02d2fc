"""The query twin (`local_rag.embed.twin`): the real all-MiniLM-L6-v2 exported to ONNX the first time
sentence-transformers loads it, then used at query time (queries, and passages scored then): the same vectors as
torch's, the same order, an index's vectors still from sentence-transformers (loaded only then), no torch import in a
process that only searches, and the cases where it must not be used (bf16, a GPU, the setting off, a damaged
export)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from local_rag.embed.loader import load_embedder
from local_rag.embed.twin import eligible
from local_rag.modelstore.manifest import query_twin_folder as twin_folder
from local_rag.settings import EmbedderConfig

from .conftest import MODELS, ROOT, needs_minilm

QUERIES = ["how do honey bees survive the winter?", "why are some volcanic eruptions explosive?",
           "what makes sourdough bread taste sour?", "when do spring tides happen?"]
PASSAGES = ["Bees cluster around the queen and shiver to keep the hive warm in winter.",
            "Gas trapped in sticky magma makes stratovolcano eruptions explosive.",
            "Lactic and acetic acid from the starter's bacteria give sourdough its sour taste.",
            "Spring tides come at new and full moon, when the Sun and Moon line up."]


def _config(**changes: object) -> EmbedderConfig:
    return EmbedderConfig(model=str(MODELS / "all-MiniLM-L6-v2"), device="cpu", dtype="fp32").model_copy(update=changes)


@needs_minilm
def test_the_twin_embeds_queries_as_torch_does_and_never_loads_torch_for_them(tmp_path: Path) -> None:
    first = load_embedder(_config(), tmp_path)  # no twin yet: sentence-transformers loads, and exports it
    assert first.model is not None and first.twin is not None
    folder = twin_folder(tmp_path, first.checksum)
    assert (folder / "model.onnx").is_file() and folder.parent.name == ".query-onnx"
    torch_only = load_embedder(_config(query_onnx=False), tmp_path)
    assert torch_only.twin is None
    want_q, want_p = torch_only.embed(QUERIES, "query"), torch_only.embed(PASSAGES, "passage")

    again = load_embedder(_config(), tmp_path)  # a later process: the twin is there
    assert again.twin is not None and again.model is None and again.dimension == torch_only.dimension == 384
    got_q = again.embed(QUERIES, "query")
    assert again.model is None  # queries only: sentence-transformers never loaded
    got_p = again.embed(PASSAGES, "passage")  # a passage scored at query time (evidence compression): the twin too
    assert again.model is None  # sentence-transformers never loaded
    assert np.abs(got_q - want_q).max() < 1e-5 and np.abs(got_p - want_p).max() < 1e-5
    assert (np.argsort(-(got_q @ got_p.T), axis=1) == np.argsort(-(want_q @ want_p.T), axis=1)).all()
    # what an index stores comes from the model itself, loaded on demand: an index is what it was
    assert np.array_equal(again.embed(PASSAGES, "passage", for_index=True), want_p) and again.model is not None

    # a process that only embeds queries imports neither torch nor sentence-transformers
    probe = ("import sys; from pathlib import Path; from local_rag.embed.loader import load_embedder; "
             "from local_rag.settings import EmbedderConfig; "
             f"e = load_embedder(EmbedderConfig(model={str(MODELS / 'all-MiniLM-L6-v2')!r}, device='cpu', dtype='fp32'), "
             f"Path({str(tmp_path)!r})); e.embed(['a question'], 'query'); e.embed(['a passage'], 'passage'); "
             "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


@needs_minilm
def test_a_damaged_twin_falls_back_to_torch_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    first = load_embedder(_config(), tmp_path)
    (twin_folder(tmp_path, first.checksum) / "model.onnx").write_bytes(b"not a model")
    with caplog.at_level(logging.WARNING, logger="local_rag.embed.twin"):
        again = load_embedder(_config(), tmp_path)
    assert "cannot be opened" in caplog.text and again.model is not None
    assert np.abs(again.embed(QUERIES, "query") - first.embed(QUERIES, "query")).max() < 1e-5
    third = load_embedder(_config(), tmp_path)  # the fallback exported it again, in place
    assert third.twin is not None and third.model is None
    assert not [p for p in (tmp_path / ".query-onnx").iterdir() if p.name.startswith(".")]  # no export left behind


def test_the_twin_only_stands_in_where_sentence_transformers_runs_fp32_on_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import local_rag.embed.twin as twin

    monkeypatch.setattr(twin, "cpu_has_amx", lambda: False)
    monkeypatch.setattr(twin, "nvml_gpus", lambda: [])
    assert eligible(_config()) and eligible(_config(device="auto", dtype="auto"))
    for changes in ({"query_onnx": False}, {"dtype": "bf16"}, {"dtype": "fp16"}, {"device": "cuda"},
                    {"backend": "onnx"}):
        assert not eligible(_config(**changes)), changes
    monkeypatch.setattr(twin, "cpu_has_amx", lambda: True)  # bf16 autocast: other vectors
    assert not eligible(_config(dtype="auto")) and eligible(_config(dtype="fp32"))
    monkeypatch.setattr(twin, "nvml_gpus", lambda: [{"name": "a GPU"}])  # torch would take it, in fp16
    assert not eligible(_config(device="auto")) and eligible(_config(device="cpu"))


@needs_minilm
def test_models_remove_takes_the_twin_with_the_model(tmp_path: Path) -> None:
    import shutil

    from click.testing import CliRunner

    from local_rag.cli.main import cli
    from local_rag.modelstore.manifest import record_folder

    models = tmp_path / "models"
    shutil.copytree(MODELS / "all-MiniLM-L6-v2", models / "mini")
    record_folder(models / "mini", models, "embedder", "a copy of MiniLM", "sentence-transformers")
    embedder = load_embedder(EmbedderConfig(model="mini", device="cpu", dtype="fp32"), models)
    twin = twin_folder(models, embedder.checksum)
    assert (twin / "model.onnx").is_file()
    res = CliRunner().invoke(cli, ["models", "remove", "mini", "--yes", "--models-dir", str(models)])
    assert res.exit_code == 0, res.output
    assert not twin.exists() and not (models / "mini").exists()

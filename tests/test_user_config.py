"""User-level places: models and indexes in the user data directory outside a checkout, the user config file
(defaults and named profiles), the default profile, and `offline` applied when settings load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from local_rag.errors import SettingsError
from local_rag.paths import default_reports_dir, default_runs_dir, in_checkout
from local_rag.settings import DEFAULT_PROFILE, list_profiles, load_settings

ROOT = Path(__file__).resolve().parents[1]


def _no_folder_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    """The defaults are under test: a run with the shared folders in the environment would read those instead."""
    monkeypatch.delenv("LOCAL_RAG_MODELS_DIR", raising=False)
    monkeypatch.delenv("LOCAL_RAG_INDEXES_DIR", raising=False)


def test_checkout_keeps_models_and_indexes_in_place(monkeypatch: pytest.MonkeyPatch):
    _no_folder_overrides(monkeypatch)
    monkeypatch.chdir(ROOT)
    assert in_checkout()
    s = load_settings("cpu-test")
    assert (s.models_dir, s.indexes_dir, default_runs_dir()) == (Path("models"), Path("indexes"), Path("runs"))
    assert default_reports_dir() == Path("docs/benchmarks")  # where the committed figures live


def test_outside_a_checkout_the_user_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _no_folder_overrides(monkeypatch)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCAL_RAG_HOME", str(tmp_path / "home"))
    assert not in_checkout()
    s = load_settings("cpu-test")
    assert s.models_dir == tmp_path / "home" / "models" and s.indexes_dir == tmp_path / "home" / "indexes"
    assert default_runs_dir() == tmp_path / "home" / "runs"  # `train adapt`'s work: a rerun from anywhere resumes
    # session 51: `local-rag bench` from a pip install wrote docs/benchmarks/ into whatever folder the user was in
    assert default_reports_dir() == tmp_path / "home" / "benchmarks"
    monkeypatch.delenv("LOCAL_RAG_HOME")
    import platformdirs

    assert load_settings("cpu-test").models_dir == Path(platformdirs.user_data_dir("local-rag", appauthor=False)) / "models"


def test_user_config_defaults_and_named_profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        "profile: notes\n"
        "retrieval: {top_k: 7}\n"
        "profiles:\n"
        "  notes: {base: cpu-test, llm: {n_ctx: 1024}}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("LOCAL_RAG_USER_CONFIG", str(cfg))
    s = load_settings()
    assert s.profile == "notes" and s.llm.n_ctx == 1024 and s.llm.model == "smollm2-135m-instruct"
    assert s.retrieval.top_k == 7  # the file's defaults apply to every profile
    assert load_settings("cpu-qwen").retrieval.top_k == 7
    assert "notes" in list_profiles()
    # a settings file and flags still beat the user config
    other = tmp_path / "s.yaml"
    other.write_text("retrieval: {top_k: 3}\n", encoding="utf-8")
    assert load_settings(None, other).retrieval.top_k == 3
    assert load_settings(None, None, {"retrieval": {"top_k": 2}}).retrieval.top_k == 2


def test_bad_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("profiles:\n  mine: {base: no-such-profile}\n", encoding="utf-8")
    monkeypatch.setenv("LOCAL_RAG_USER_CONFIG", str(cfg))
    with pytest.raises(SettingsError, match="not a bundled profile"):
        load_settings("mine")
    cfg.write_text("llm: {no_such_key: 1}\n", encoding="utf-8")
    with pytest.raises(SettingsError, match="no_such_key"):
        load_settings("cpu-test")
    monkeypatch.setenv("LOCAL_RAG_USER_CONFIG", str(tmp_path / "missing.yaml"))
    with pytest.raises(SettingsError, match="not found"):
        load_settings("cpu-test")


def test_default_profile_is_the_demos(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LOCAL_RAG_USER_CONFIG", "")
    monkeypatch.delenv("LOCAL_RAG_PROFILE", raising=False)
    from local_rag.demo import DEMO_PROFILES

    assert DEFAULT_PROFILE == DEMO_PROFILES[0] == load_settings().profile


@pytest.mark.parametrize("offline, expected", [("true", "1"), ("false", "None")])
def test_offline_is_applied_before_any_hub_import(offline: str, expected: str):
    code = ("import os, sys; from local_rag.settings import load_settings; load_settings('cpu-test'); "
            "print(os.environ.get('HF_HUB_OFFLINE'), 'huggingface_hub' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["LOCAL_RAG_OFFLINE"] = offline
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [expected, "False"]

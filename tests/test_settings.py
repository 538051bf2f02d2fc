from __future__ import annotations

from pathlib import Path

import pytest

from local_rag.errors import SettingsError
from local_rag.settings import ChunkerConfig, list_profiles, load_settings


def _leaves(tree: dict, prefix: str = "") -> dict:
    out: dict = {}
    for key, value in tree.items():
        out |= _leaves(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value}
    return out


def test_the_default_cpu_profile_is_cpu_qwen_with_the_levers_and_cpu_fast_swaps_the_model():
    """`base:` in a bundled profile: cpu = cpu-qwen + the speed levers; cpu-fast = cpu + the 0.5B; cpu-hyde = cpu + HyDE."""
    cpu, qwen, fast = (_leaves(load_settings(p).model_dump(mode="json")) for p in ("cpu", "cpu-qwen", "cpu-fast"))
    assert {k for k in cpu if cpu[k] != qwen[k]} == {
        "profile", "evidence.compress", "evidence.budget_tokens", "rewrite.skip_standalone", "generate.prompt",
        "generate.history_step", "rewrite.reply", "llm.prompt_lookup", "llm.prompt_lookup_min_ngram", "fusion.k"}
    assert cpu["fusion.k"] == 20 and qwen["fusion.k"] == 60  # RRF k 20 chosen on the train split (session 33)
    # 300 tokens of evidence chosen on the train split (session 40); cpu-fast and cpu-hyde keep the 400 they were measured with
    assert cpu["evidence.budget_tokens"] == 300 and fast["evidence.budget_tokens"] == qwen["evidence.budget_tokens"] == 400
    assert {k for k in cpu if cpu[k] != fast[k]} == {"profile", "llm.model", "llm.prompt_lookup", "rewrite.reply",
                                                     "evidence.budget_tokens"}
    assert cpu["llm.prompt_lookup_min_ngram"] == 2  # drafts from 2-token matches (session 30)
    assert cpu["pipeline.warm"] and fast["pipeline.warm"] and qwen["pipeline.warm"]  # a code default, in every profile
    assert cpu["llm.prompt_lookup"] == -1 and fast["llm.prompt_lookup"] == 0  # -1: on where llama.cpp uses AMX
    hyde = _leaves(load_settings("cpu-hyde").model_dump(mode="json"))  # cpu + a HyDE passage (session 32)
    assert {k for k in cpu if cpu[k] != hyde[k]} == {"profile", "rewrite.modes", "evidence.budget_tokens"}
    assert hyde["rewrite.modes"] == ["rewrite", "hyde"] and hyde["fusion.k"] == 20


def test_profiles_load_and_name_models():
    assert {"cpu-test", "cpu", "cpu-qwen", "cpu-fast", "cpu-hyde", "gpu-8gb", "gpu-24gb"} <= set(list_profiles())
    gpu = load_settings("gpu-8gb")
    assert gpu.embedder.backend == "bge-m3" and gpu.embedder.model == "bge-m3"
    assert "qwen2.5-7b" in gpu.llm.model
    assert load_settings("gpu-24gb").llm.model.startswith("qwen2.5-14b")
    assert load_settings("cpu-test").embedder.model == "all-MiniLM-L6-v2"
    fast = load_settings("cpu-fast")
    assert fast.llm.model.startswith("qwen2.5-coder-0.5b") and fast.evidence.compress and fast.rewrite.skip_standalone
    assert fast.generate.prompt == "answer_history_first" and fast.llm.prompt_lookup == 0


def test_default_chunker_is_the_design_card():
    assert (ChunkerConfig().size, ChunkerConfig().overlap) == (384, 64)


def test_unknown_profile_lists_valid_ones():
    with pytest.raises(SettingsError, match="valid profiles: .*cpu-test"):
        load_settings("no-such-profile")


def test_unknown_keys_are_refused(tmp_path: Path):
    with pytest.raises(SettingsError, match="chunker.sise"):
        load_settings("cpu-test", overrides={"chunker": {"sise": 3}})
    bad = tmp_path / "s.yaml"
    bad.write_text("retrieval:\n  topk: 3\n")
    with pytest.raises(SettingsError, match="topk"):
        load_settings(config_file=bad)
    # session 52: a misspelt key of a settings file said "chunker.szie: Extra inputs are not permitted", where a
    # misspelt variable was given the closest name
    bad.write_text("chunker:\n  szie: 512\nretrival:\n  k: 3\nzzz: 1\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(config_file=bad)
    assert str(caught.value) == ("invalid settings: unknown setting chunker.szie (did you mean chunker.size?); "
                                 "unknown setting retrival (did you mean retrieval?); unknown setting zzz")


def test_overlap_must_be_below_size():
    with pytest.raises(SettingsError, match="overlap"):
        load_settings(overrides={"chunker": {"size": 64, "overlap": 64}})


def test_a_loop_needs_two_copies():
    with pytest.raises(SettingsError, match="loop_repeats"):
        load_settings(overrides={"llm": {"loop_repeats": 1}})
    assert load_settings(overrides={"llm": {"loop_repeats": 0}}).llm.loop_repeats == 0


def test_precedence_profile_file_env_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    cfg = tmp_path / "s.yaml"
    cfg.write_text("chunker:\n  size: 300\n  overlap: 10\nretrieval:\n  top_k: 7\n")
    s = load_settings("cpu-test", cfg)
    assert (s.chunker.size, s.chunker.overlap, s.retrieval.top_k) == (300, 10, 7)
    monkeypatch.setenv("LOCAL_RAG_CHUNKER__SIZE", "200")
    s = load_settings("cpu-test", cfg)
    assert (s.chunker.size, s.chunker.overlap) == (200, 10)  # env beats file, file fills the rest
    s = load_settings("cpu-test", cfg, {"chunker": {"size": 100}})
    assert s.chunker.size == 100  # flags beat env


def test_env_selects_profile(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LOCAL_RAG_PROFILE", "cpu-qwen")
    assert load_settings().profile == "cpu-qwen"


def test_bad_settings_file(tmp_path: Path):
    with pytest.raises(SettingsError, match="not found"):
        load_settings(config_file=tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n")
    with pytest.raises(SettingsError, match="mapping"):
        load_settings(config_file=bad)


def test_bundled_bases_that_loop_give_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import local_rag.settings as settings_module

    bodies = {"a": {"base": "b", "llm": {"n_ctx": 1024}}, "b": {"base": "a"}, "c": {"base": "c"}}
    monkeypatch.setattr(settings_module, "_bundled_profiles", lambda: sorted(bodies))
    monkeypatch.setattr(settings_module, "_bundled_body", lambda name: dict(bodies[name]))
    with pytest.raises(SettingsError, match=r"profile 'a': its bases loop \(a -> b -> a\)"):
        settings_module.read_profile("a")
    with pytest.raises(SettingsError, match=r"its bases loop \(c -> c\)"):
        settings_module.read_profile("c")


def test_the_idk_gate_is_off_with_another_model_than_the_one_it_was_measured_with(caplog: pytest.LogCaptureFixture):
    gate = {"idk_gate": -1.5, "idk_gate_model": "qwen-measured"}
    with caplog.at_level("WARNING", logger="local_rag.settings"):
        other = load_settings("cpu-qwen", overrides={"generate": gate, "llm": {"model": "another-model"}})
    assert other.generate.idk_gate is None and "the IDK gate is off" in caplog.text
    same = load_settings("cpu-qwen", overrides={"generate": gate, "llm": {"model": "qwen-measured"}})
    assert same.generate.idk_gate == -1.5
    anyone = load_settings("cpu-qwen", overrides={"generate": {"idk_gate": -1.5}, "llm": {"model": "another-model"}})
    assert anyone.generate.idk_gate == -1.5


def test_an_empty_models_or_indexes_dir_means_the_default_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """``LOCAL_RAG_INDEXES_DIR=`` (set empty in a shell or a unit file) once meant the current directory: an index
    build wrote ``./<name>`` wherever it ran and the models were looked for in it."""
    from local_rag.paths import default_indexes_dir, default_models_dir

    monkeypatch.setenv("LOCAL_RAG_MODELS_DIR", "")
    monkeypatch.setenv("LOCAL_RAG_INDEXES_DIR", " ")
    settings = load_settings("cpu-test")
    assert settings.models_dir == default_models_dir() and settings.indexes_dir == default_indexes_dir()
    assert load_settings("cpu-test", overrides={"models_dir": "elsewhere"}).models_dir == Path("elsewhere")


def test_a_known_model_missing_from_the_models_folder_says_how_to_get_it(tmp_path: Path) -> None:
    from local_rag.errors import ModelError
    from local_rag.modelstore import Manifest

    with pytest.raises(ModelError, match=r"model 'all-MiniLM-L6-v2' is not in .*: fetch it with `local-rag models pull "
                       r"all-MiniLM-L6-v2` .* import a copy with .* or point LOCAL_RAG_MODELS_DIR"):
        Manifest.load(tmp_path).get("all-MiniLM-L6-v2")
    with pytest.raises(ModelError, match="unknown model 'gpt-9'; the manifests in .* know: none"):
        Manifest.load(tmp_path).get("gpt-9")


@pytest.mark.parametrize("name", ["../notes", "a/b", ".notes", "a\\b", " notes"])
def test_an_index_name_is_a_plain_folder_name(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Session 48: ``--index ../notes`` built an index outside indexes_dir, ``a/b`` one that `index list` and
    `index delete` never found, ``.notes`` a hidden one. Now each is refused; ``LOCAL_RAG_INDEX=`` is the default."""
    with pytest.raises(SettingsError, match="is not an index name: a plain folder name under indexes_dir"):
        load_settings("cpu-test", overrides={"index": name})
    monkeypatch.setenv("LOCAL_RAG_INDEX", "")
    assert load_settings("cpu-test").index == "default"
    assert load_settings("cpu-test", overrides={"index": "my notes-2.v1"}).index == "my notes-2.v1"


def test_an_index_name_the_file_system_cannot_hold_is_refused() -> None:
    """Session 50: `index build docs --index <300 characters>` was an `OSError: [Errno 36] File name too long`
    traceback (the name, and its lock and staging files beside it, are folder names of at most 255 bytes)."""
    with pytest.raises(SettingsError, match="index name too long: 300 bytes, 200 at most"):
        load_settings("cpu-test", overrides={"index": "a" * 300})
    with pytest.raises(SettingsError, match="index name too long: 202 bytes, 200 at most"):
        load_settings("cpu-test", overrides={"index": "é" * 101})
    assert load_settings("cpu-test", overrides={"index": "a" * 200}).index == "a" * 200


def test_cli_refuses_an_index_name_outside_the_indexes_folder(tmp_path: Path) -> None:
    from .test_cli import assert_clean_error, run

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Rivers\n\nThe river gauge read high in April.\n")
    assert_clean_error(run("index", "build", "docs", "--index", "../evil", "--sparse-only", cwd=tmp_path), 6,
                       "'../evil' is not an index name")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_a_broken_settings_file_is_one_line_with_where(tmp_path: Path) -> None:
    """Session 50: an unclosed bracket in a --config file printed PyYAML's five-line message with a caret drawing; a
    file in another encoding was a UnicodeDecodeError traceback."""
    cases = {
        "bracket.yaml": (b"retrieval:\n  top_k: [\n", "line 3, column 1: expected the node content, but found '<stream end>'"),
        "indent.yaml": (b"a: 1\n b: 2\n", "line 2, column 3: mapping values are not allowed here"),
    }
    for name, (data, where) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(SettingsError) as caught:
            load_settings(config_file=tmp_path / name)
        assert str(caught.value) == f"settings file {tmp_path / name} is not valid YAML/JSON: {where}"
    (tmp_path / "latin1.yaml").write_bytes("retrieval: {top_k: 5}  # réglages\n".encode("latin-1"))
    with pytest.raises(SettingsError, match=r"latin1.yaml is not UTF-8 text \(invalid continuation byte at byte 26\)$"):
        load_settings(config_file=tmp_path / "latin1.yaml")

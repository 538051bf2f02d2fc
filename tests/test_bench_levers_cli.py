"""``local-rag bench-levers``: the speed-lever study as a subcommand reproduces the committed figure."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from local_rag.cli.main import cli

from .conftest import ROOT, needs_mtrag


@needs_mtrag
def test_standalone_reproduces_the_committed_figures(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["bench-levers", "standalone", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    committed = json.loads((ROOT / "docs" / "benchmarks" / "levers" / "standalone.json").read_text(encoding="utf-8"))
    assert json.loads((tmp_path / "standalone.json").read_text(encoding="utf-8")) == committed


def test_an_unknown_configuration_is_bad_input_before_any_model_loads(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["bench-levers", "ablation", "--configs", "baseline,nope", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown ['nope']" in result.output
    assert not list(tmp_path.iterdir())


def test_bad_domains_sizes_and_an_empty_table_are_refused_before_anything_runs(tmp_path: Path) -> None:
    """Session 50: `ablation --domains govt,clapnp` dropped clapnq's turns without a word; `compress --budgets 300,abc`
    was a ValueError traceback; `table --out` of a folder without runs wrote an empty table.md and summary.json."""
    runner = CliRunner()
    out = ["--out", str(tmp_path)]
    result = runner.invoke(cli, ["bench-levers", "ablation", "--domains", "govt,clapnp", *out])
    assert result.exit_code == 2 and result.output.strip() == (
        "error: --domains: unknown ['clapnp']; MTRAG's are clapnq, cloud, fiqa, govt")
    result = runner.invoke(cli, ["bench-levers", "compress", "--budgets", "300,abc", *out])
    assert result.exit_code == 2 and result.output.strip() == (
        "error: --budgets: expected whole numbers >= 1, comma-separated (got '300,abc')")
    for command in (["ablation", "--max-turns", "-1"], ["compress", "--max-tasks", "-2"], ["profile", "--tokens", "0"],
                    ["ablation", "--conversations", "-1"], ["ablation", "--threads", "-4"]):
        result = runner.invoke(cli, ["bench-levers", *command, *out])
        assert result.exit_code == 2 and f"Invalid value for '{command[1]}'" in result.output, command
    result = runner.invoke(cli, ["bench-levers", "table", *out])
    assert result.exit_code == 2 and result.output.strip() == (
        f"error: no ablation runs (*.jsonl) in {tmp_path}: run `local-rag bench-levers ablation --out {tmp_path}` first")
    assert not list(tmp_path.iterdir())


def test_every_configuration_is_a_valid_setting_on_the_benchmark_profile() -> None:
    """A typo in a lever configuration (a key, a value, a prompt's name) fails here, not an hour into a run."""
    from local_rag.bench.lever_runs import CONFIGS
    from local_rag.llm.prompts import list_prompts
    from local_rag.settings import load_settings

    for name, overrides in CONFIGS.items():
        settings = load_settings(profile="cpu-qwen", overrides=overrides)
        assert settings.generate.prompt in list_prompts(), name

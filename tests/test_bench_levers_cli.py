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


def test_every_configuration_is_a_valid_setting_on_the_benchmark_profile() -> None:
    """A typo in a lever configuration (a key, a value, a prompt's name) fails here, not an hour into a run."""
    from local_rag.bench.lever_runs import CONFIGS
    from local_rag.llm.prompts import list_prompts
    from local_rag.settings import load_settings

    for name, overrides in CONFIGS.items():
        settings = load_settings(profile="cpu-qwen", overrides=overrides)
        assert settings.generate.prompt in list_prompts(), name

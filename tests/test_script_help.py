"""Every script of ``scripts/`` is thin (it parses its arguments and calls the package) and its ``--help`` runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_the_help_of_each_script_runs(script: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's package
    result = subprocess.run([sys.executable, str(script), "--help"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "usage:" in result.stdout

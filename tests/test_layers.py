"""The layer contracts hold (import-linter, settings in pyproject.toml): no module imports from a layer above its
own, stage packages stay independent but for the named exceptions, and no import cycle, deferred imports included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_are_kept() -> None:
    pytest.importorskip("importlinter")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's package, not another installed copy
    result = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
                             "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-1000:]
    assert "0 broken" in result.stdout

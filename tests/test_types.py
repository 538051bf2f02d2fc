"""The package type-checks: mypy (settings in pyproject.toml, with the pydantic plugin) finds no error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error_in_the_package() -> None:
    pytest.importorskip("mypy")
    result = subprocess.run([sys.executable, "-m", "mypy", "local_rag"], cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]

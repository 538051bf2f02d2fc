"""What is imported is declared, and what is declared is used (deptry, plus the lazy `require()` imports it cannot
see); core holds what `ask` and `chat` need and evaluation, training and development sit behind extras."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
NAME_MAP: dict[str, str] = PYPROJECT["tool"]["deptry"]["package_module_name_map"]
NOT_IMPORTED = {"pandas"}  # bert-score imports it without declaring it


def _dist(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]


def _module(dist: str) -> str:
    return NAME_MAP.get(dist, dist.replace("-", "_")).lower()


def _declared() -> dict[str, set[str]]:
    """dist -> the groups declaring it ("core" or an extra)."""
    out: dict[str, set[str]] = {}
    for req in PYPROJECT["project"]["dependencies"]:
        out.setdefault(_dist(req), set()).add("core")
    for extra, reqs in PYPROJECT["project"]["optional-dependencies"].items():
        for req in reqs:
            out.setdefault(_dist(req), set()).add(extra)
    return out


def _required_modules() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "local_rag").rglob("*.py"):
        found |= set(re.findall(r'require\("([A-Za-z_][\w]*)', path.read_text(encoding="utf-8")))
    return found


def test_every_lazily_required_module_is_declared_and_every_deptry_ignore_is_one():
    declared = _declared()
    by_module: dict[str, set[str]] = {}
    for dist in declared:
        by_module.setdefault(_module(dist), set()).add(dist)
    required = _required_modules()
    missing = sorted(m for m in required if m.lower() not in by_module)
    assert not missing, f"required() but not declared in pyproject.toml: {missing}"
    reached = {d for m in required for d in by_module[m.lower()]}
    ignored = set(PYPROJECT["tool"]["deptry"]["per_rule_ignores"]["DEP002"])
    # each DEP002 ignore is a package reached only through require() (others are imported where deptry sees them)
    assert ignored - NOT_IMPORTED <= reached, ignored - NOT_IMPORTED - reached


def test_core_is_what_ask_and_chat_need():
    declared = _declared()
    core = {d for d, groups in declared.items() if "core" in groups}
    for dist in ("pytrec-eval-terrier", "trl", "datasets", "pytest", "bert-score", "fastapi"):
        assert dist not in core, f"{dist} belongs behind an extra"
    for dist in ("bm25s", "PyStemmer", "gguf", "tokenizers", "platformdirs", "pydantic-settings", "click"):
        assert dist in core
    assert "pytrec-eval-terrier" in declared and "eval" in declared["pytrec-eval-terrier"]
    assert {"scipy", "tokenizers", "starlette"} <= set(declared)  # imported directly, so declared directly


def test_license_is_an_spdx_string():
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert any(r.startswith("setuptools>=77") for r in PYPROJECT["build-system"]["requires"])


@pytest.mark.skipif(shutil.which("deptry") is None and not (ROOT / ".venv" / "bin" / "deptry").exists(),
                    reason="deptry is not installed (the dev extra)")
def test_deptry_is_clean():
    deptry = shutil.which("deptry") or str(ROOT / ".venv" / "bin" / "deptry")
    out = subprocess.run([deptry, "local_rag"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr

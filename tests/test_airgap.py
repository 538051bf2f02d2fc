"""The air-gapped install: a fresh venv installs local-rag from the wheelhouse alone (``--no-index``), with the
network namespace cut (``unshare -n``; skipped where this user may not create one, since nothing would then prove
the install offline), unpacks the models into the user data directory and runs the demo and a `local-rag ask` on the
demo's index there, outside any checkout.

The wheelhouse is ``$LOCAL_RAG_WHEELHOUSE``, else ``wheelhouse/`` of the checkout, else it is built into a temporary
folder by ``scripts/wheelhouse.sh`` (a few minutes and ~1.6 GB with the demo's models).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def offline_prefix() -> list[str]:
    """``unshare -n`` (no network at all); the test is skipped where this user may not create a network namespace."""
    if shutil.which("unshare") is None:
        pytest.skip("no `unshare` command (util-linux): the network cannot be cut, so the install is not proven offline")
    try:
        out = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True, timeout=20)
        reason = out.stderr.strip() or f"exit {out.returncode}"
    except (OSError, subprocess.SubprocessError) as exc:
        out, reason = None, str(exc)
    if out is None or out.returncode != 0:
        pytest.skip(f"`unshare -n` is not allowed here ({reason}; unprivileged user namespaces off?): the network "
                    "cannot be cut, so the install is not proven offline")
    return ["unshare", "-n"]


def wheelhouse(tmp: Path) -> Path:
    given = os.environ.get("LOCAL_RAG_WHEELHOUSE")
    for folder in ([Path(given)] if given else []) + [ROOT / "wheelhouse"]:
        if (folder / "requirements.txt").is_file():
            return folder
    folder = tmp / "wheelhouse"
    env = {**os.environ, "VENV": str(Path(sys.executable).parent.parent),
           "MODELS": "all-MiniLM-L6-v2 smollm2-135m-instruct"}
    out = subprocess.run(["bash", str(ROOT / "scripts" / "wheelhouse.sh"), str(folder)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    return folder


@pytest.mark.slow
def test_install_from_the_wheelhouse_without_network_and_run_the_demo(tmp_path: Path):
    cut = offline_prefix()
    house = wheelhouse(tmp_path)
    # no pip configuration may point at an index or a wheel folder: only the wheelhouse
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHONPATH", "LOCAL_RAG_", "VIRTUAL_ENV"))}
    env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "LOCAL_RAG_HOME": str(tmp_path / "home"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"), "LOCAL_RAG_USER_CONFIG": ""}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)

    def run(*args: str, timeout: int = 1800) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([*cut, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout)
        assert out.returncode == 0, f"{args}: {out.stdout[-2000:]}\n{out.stderr[-3000:]}"
        return out

    run(str(venv / "bin" / "pip"), "install", "--no-index", "--find-links", str(house), "-r",
        str(house / "requirements.txt"))
    run(str(venv / "bin" / "local-rag"), "models", "unpack", str(house / "models.tar"))
    assert (tmp_path / "home" / "models" / "manifest.local.json").is_file()  # outside a checkout: the user data dir
    demo = run(str(venv / "bin" / "local-rag"), "demo", "--profile", "cpu-test")
    assert "local-rag demo" in demo.stdout and demo.stdout.count("user>") == 4
    assert (tmp_path / "home" / "indexes" / "demo" / "manifest.json").is_file()
    asked = run(str(venv / "bin" / "local-rag"), "ask", "Which fusion method merges the ranked lists?", "--index", "demo",
                "--profile", "cpu-test", "--json")
    result = json.loads(asked.stdout)
    assert result["kind"] in ("answer", "decline") and result["answer"] and result["passages"]

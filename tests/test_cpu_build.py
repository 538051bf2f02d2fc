"""The llama.cpp build against this CPU (`local_rag.llm.cpu_build`): the real build probed in a child process, a child
killed by SIGILL reported as a build for another CPU, and doctor's line."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from local_rag.device import amx_tiles_granted, cpu_flag_set
from local_rag.errors import ModelError
from local_rag.llm.cpu_build import (
    advice,
    amx_hint,
    build_features,
    build_key,
    check_installed,
    missing_features,
    probe,
)

from .llm_fixtures import SMOLLM, llama_cpp_or_skip, load_real
from .test_cli import ROOT, run

CUDA_INFO = ("CUDA : ARCHS = 890 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | "
             "AVX2 = 1 | F16C = 1 | FMA = 1 | AVX512 = 0 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | ")


def test_the_cpu_section_is_read_and_other_backends_are_not():
    assert build_features(CUDA_INFO) == ["SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA"]  # AVX512 = 0, USE_GRAPHS not CPU
    assert missing_features(["AVX2", "AVX512", "AVX512_VNNI"], {"avx2", "fma"}) == ["AVX512", "AVX512_VNNI"]
    assert advice({"features": ["AVX2"], "missing": []}) is None
    line = advice({"features": ["AVX2", "AVX512"], "missing": ["AVX512"]})
    assert line is not None and "AVX512" in line and "install_llama_cpp.sh" in line and "\n" not in line


def test_the_installed_build_runs_on_this_cpu():
    llama_cpp_or_skip()
    result = probe()
    assert "error" not in result, result
    features = result["features"]
    assert isinstance(features, list) and features  # every x86 build lists some (SSE3 at least)
    if cpu_flag_set() is not None:
        assert result["missing"] == []  # built here, for this CPU, by scripts/install_llama_cpp.sh


def test_a_child_killed_by_sigill_is_named_a_build_for_another_cpu(tmp_path: Path):
    python = tmp_path / "python"  # stands in for an interpreter whose llama.cpp uses an instruction this CPU lacks
    python.write_text("#!/bin/sh\nkill -ILL $$\n", encoding="utf-8")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    result = probe(str(python))
    assert "SIGILL" in str(result["error"]) and "another CPU" in str(result["error"])
    line = advice(result)
    assert line is not None and "install_llama_cpp.sh" in line
    failing = tmp_path / "python-fails"
    failing.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named llama_cpp' >&2\nexit 1\n", encoding="utf-8")
    failing.chmod(failing.stat().st_mode | stat.S_IEXEC)
    assert probe(str(failing)) == {"error": "importing llama_cpp failed: ModuleNotFoundError: No module named llama_cpp"}
    assert advice(probe(str(failing))) is None  # not a CPU mismatch: doctor prints the error itself


def test_doctor_reports_what_the_build_uses():
    llama_cpp_or_skip()
    result = run("doctor", "--json", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    build = json.loads(result.stdout)["llama_cpp_cpu_build"]
    assert build["features"] and build["advice"] is None
    text = run("doctor", cwd=ROOT)
    assert "built for" in text.stdout and "SSE3" in text.stdout


def test_the_wheel_cache_key_names_the_cpu_or_portable():
    script = str(ROOT / "scripts" / "install_llama_cpp.sh")
    env = {k: v for k, v in os.environ.items() if k not in ("LLAMA_CPP_PORTABLE", "LLAMA_CPP_FLAVOUR", "LLAMA_CPP_AMX")}
    native = subprocess.run(["bash", script, "--print-key"], capture_output=True, text=True, env=env, check=True)
    amx = "amx" if amx_tiles_granted() and native.stdout.startswith("cpu-") else "noamx"
    assert re.fullmatch(rf"(cpu|cuda)-{amx}-[0-9a-f]{{8}}", native.stdout.strip()), native.stdout
    without = subprocess.run(["bash", script, "--print-key"], capture_output=True, text=True, check=True,
                             env=env | {"LLAMA_CPP_AMX": "0", "LLAMA_CPP_FLAVOUR": "cpu"})
    assert re.fullmatch(r"cpu-noamx-[0-9a-f]{8}", without.stdout.strip()), without.stdout
    portable = subprocess.run(["bash", script, "--print-key"], capture_output=True, text=True, check=True,
                              env=env | {"LLAMA_CPP_PORTABLE": "1", "LLAMA_CPP_FLAVOUR": "cpu"})
    assert portable.stdout.strip() == "cpu-noamx-portable"


@pytest.fixture
def fresh_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    check_installed.cache_clear()
    yield tmp_path / "cache" / "local-rag" / "llama-cpu-check.json"
    check_installed.cache_clear()


def test_the_check_probes_once_and_remembers_the_answer(fresh_check: Path):
    llama_cpp_or_skip()
    check_installed()  # this build runs here: nothing raised
    key = build_key()
    remembered = json.loads(fresh_check.read_text(encoding="utf-8"))
    assert key in remembered and remembered[key]["missing"] == [] and remembered[key]["features"]


def test_the_backend_stops_with_one_line_on_a_build_for_another_cpu(fresh_check: Path):
    llama_cpp_or_skip()
    fresh_check.parent.mkdir(parents=True)  # what the probe would have found on an older CPU than the build's
    fresh_check.write_text(json.dumps({build_key(): {"features": ["AVX2", "AVX512"], "missing": ["AVX512"]}}),
                           encoding="utf-8")
    with pytest.raises(ModelError, match="built for another CPU: it uses AVX512") as err:
        load_real(SMOLLM, n_ctx=512)
    assert "install_llama_cpp.sh" in str(err.value) and "\n" not in str(err.value)


def test_amx_tiles_are_offered_only_with_the_flags_and_the_kernels_grant():
    flags = cpu_flag_set() or set()
    granted = amx_tiles_granted()
    assert isinstance(granted, bool)
    if not {"amx_int8", "amx_tile", "avx512_vnni"} <= flags:
        assert granted is False


def test_doctor_hints_at_an_amx_rebuild_only_where_the_tiles_go_unused():
    without = {"features": ["SSE3", "AVX2", "AVX512_VNNI"], "missing": []}
    hint = amx_hint(without, tiles_granted=True)
    assert hint and "bash scripts/install_llama_cpp.sh" in hint
    assert amx_hint(without, tiles_granted=False) is None
    assert amx_hint({"features": ["AVX2", "AMX_INT8"], "missing": []}, tiles_granted=True) is None
    assert amx_hint({"error": "importing llama_cpp failed"}, tiles_granted=True) is None

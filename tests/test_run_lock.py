"""One writer per run folder: a second run into a folder in use fails with a clear error and writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from local_rag.errors import BadInputError
from local_rag.evaluation.lock import run_lock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fcntl locks")


def test_a_second_holder_is_refused_and_the_lock_is_released_after(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    with run_lock(folder):
        assert (folder / ".lock").read_text() == f"pid {os.getpid()}\n"
        with pytest.raises(BadInputError, match=f"in use by pid {os.getpid()}"), run_lock(folder):
            pass
    with run_lock(folder):  # released on exit
        pass


def test_a_lock_held_by_another_process_stops_the_eval_commands(tmp_path: Path) -> None:
    from local_rag.cli.main import cli

    out = tmp_path / "run"
    out.mkdir()
    (out / "scored.jsonl").write_text('{"task_id": "kept"}\n')
    holder = subprocess.Popen(  # another process holds the folder, as a running eval would
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from local_rag.evaluation.lock import "
         "run_lock\nwith run_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)", str(out)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        predictions = tmp_path / "p.jsonl"
        predictions.write_text("")
        for args in (["eval", "generation", "--setting", "reference", "--predictions", str(predictions)],
                     ["eval", "retrieval", "--domains", "", "--mode", "lastturn"]):
            result = CliRunner().invoke(cli, [*args, "--out", str(out)])
            assert result.exit_code == 2 and f"in use by pid {holder.pid}" in result.output, result.output
        assert (out / "scored.jsonl").read_text() == '{"task_id": "kept"}\n'  # nothing touched
    finally:
        holder.kill()
        holder.wait()
    result = CliRunner().invoke(cli, ["eval", "generation", "--setting", "reference", "--predictions",
                                      str(predictions), "--out", str(out), "--no-charts"])
    assert "in use" not in result.output  # the lock went with the process


def test_a_run_refused_for_its_input_leaves_no_folder(tmp_path: Path) -> None:
    """Session 48: `eval generation --predictions missing.jsonl --out runs/x` (or a malformed file) failed in one line
    but left runs/x with its lock file (and an empty scored.jsonl): a folder of nothing. A folder the run created and
    left empty is removed; one that held anything, or that was there before, stays."""
    from local_rag.cli.main import cli

    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n")
    for predictions in (tmp_path / "missing.jsonl", bad):
        out = tmp_path / f"run-{predictions.stem}"
        result = CliRunner().invoke(cli, ["eval", "generation", "--setting", "reference", "--predictions",
                                          str(predictions), "--out", str(out)])
        assert result.exit_code == 2 and not out.exists(), result.output
    kept = tmp_path / "kept"
    kept.mkdir()
    with run_lock(kept):
        pass
    assert kept.is_dir() and (kept / ".lock").exists()  # there before: not ours to remove
    with run_lock(tmp_path / "wrote"):
        (tmp_path / "wrote" / "scored.jsonl").write_text('{"task_id": "t"}\n')
    assert (tmp_path / "wrote" / "scored.jsonl").exists()

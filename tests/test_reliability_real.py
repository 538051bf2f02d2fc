"""Issue 27 with the real small models: a MiniLM index whose every file is damaged, and a flipped byte in a copy of
the SmolLM2 GGUF, through the real CLI. A clear error with its exit code or the sound index's exact answer.

Copies in tmp dirs only; the real models/ is never written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from local_rag.cli.main import cli
from local_rag.modelstore.manifest import Manifest

from .conftest import CORPUS, MODELS, minilm_present, write_jsonl
from .llm_fixtures import SMOLLM
from .test_reliability_corruption import FILES
from .test_reliability_models import flip_byte_keep_mtime

pytestmark = pytest.mark.skipif(not minilm_present(), reason="all-MiniLM-L6-v2 not imported (run `make test`)")


def invoke(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    res = CliRunner().invoke(cli, args, env=env)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res.exit_code, res.output


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("real")
    models = tmp / "models"
    models.mkdir()
    manifest = Manifest.load(MODELS)
    names = ["all-MiniLM-L6-v2"] + ([SMOLLM] if manifest.entries.get(SMOLLM) and manifest.is_present(manifest.get(SMOLLM)) else [])
    for name in names:
        shutil.copytree(MODELS / manifest.get(name).path, models / manifest.get(name).path)
    Manifest(models, {n: manifest.get(n) for n in names}).save()
    env = {"LOCAL_RAG_MODELS_DIR": str(models), "LOCAL_RAG_INDEXES_DIR": str(tmp / "indexes"), "LOCAL_RAG_INDEX": "sound"}
    code, out = invoke(["index", "build", str(write_jsonl(tmp / "c.jsonl", CORPUS)), "--json"], env)
    assert code == 0, out
    code, out = invoke(["search", "how are ranked lists fused", "--json"], env)
    assert code == 0, out
    return {**env, "baseline": json.dumps(hits(out)), "tmp": str(tmp)}


def hits(output: str) -> list[tuple[str, float]]:
    data = json.loads(output[output.index("{"):])
    return [(h["passage_id"], round(h["score"], 6)) for h in data["hits"]]


@pytest.mark.parametrize("rel", FILES)
def test_minilm_index_with_a_flipped_byte_in_each_file(real, rel: str):
    tmp = Path(real["tmp"])
    name = f"flip-{rel.replace('/', '-')}"
    shutil.copytree(tmp / "indexes" / "sound", tmp / "indexes" / name)
    flip_byte_keep_mtime(tmp / "indexes" / name / rel)
    env = {k: v for k, v in real.items() if k.startswith("LOCAL_RAG_")} | {"LOCAL_RAG_INDEX": name}
    code, out = invoke(["index", "verify"], env)
    assert code == 3 and "Traceback" not in out, out
    code, out = invoke(["search", "how are ranked lists fused", "--json"], env)
    assert code == 3 or (code == 0 and json.dumps(hits(out)) == real["baseline"]), out
    if code:
        assert len([line for line in out.splitlines() if line.startswith("error:")]) == 1


def test_smollm_copy_with_a_flipped_byte_is_refused_by_ask(real):
    tmp = Path(real["tmp"])
    gguf = next((tmp / "models").rglob("*.gguf"), None)
    if gguf is None:
        pytest.skip("smollm2-135m-instruct not imported")
    flip_byte_keep_mtime(gguf)
    env = {k: v for k, v in real.items() if k.startswith("LOCAL_RAG_")}
    code, out = invoke(["ask", "how are ranked lists fused", "--no-rewrite"], env)
    assert code == 4 and "sha256 does not match" in out, out
    code, out = invoke(["models", "verify", SMOLLM, "--models-dir", str(tmp / "models")], {})
    assert code == 4 and "sha256 mismatch" in out

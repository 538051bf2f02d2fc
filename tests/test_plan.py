"""``local-rag plan``: memory estimates from GGUF headers and model files, checked against hand-computed bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from local_rag.bench.plan import LLAMA_GPU_RESERVE, GiB, MiB, parse_size, plan_profile, plan_table
from local_rag.errors import BadInputError, ModelError
from local_rag.modelstore.shapes import gguf_shape, known_shape, llm_shape
from tests.conftest import make_settings
from tests.llm_fixtures import MODELS, SMOLLM, model_or_skip, write_tiny_gguf

ROOT = Path(__file__).resolve().parents[1]


def write_attention_gguf(path: Path, layers: int = 4, n_head: int = 8, n_head_kv: int = 2, embedding: int = 256,
                         vocab: int = 100, tied: bool = False) -> Path:
    """A tiny llama-shaped GGUF with attention metadata: blocks, token embeddings and (unless tied) an output."""
    gguf = pytest.importorskip("gguf")
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny attention model")
    writer.add_block_count(layers)
    writer.add_context_length(4096)
    writer.add_embedding_length(embedding)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_chat_template("{{ messages }}")
    writer.add_tensor("token_embd.weight", np.zeros((vocab, embedding), dtype=np.float32))
    for i in range(layers):
        writer.add_tensor(f"blk.{i}.attn_q.weight", np.zeros((embedding, embedding), dtype=np.float32))
    if not tied:
        writer.add_tensor("output.weight", np.zeros((vocab, embedding), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.mark.parametrize(("text", "expected"), [("8GB", 8 * GiB), ("8g", 8 * GiB), ("7.5GiB", int(7.5 * GiB)),
                                                ("512MB", 512 * MiB), ("24", 24 * GiB), ("1000b", 1000)])
def test_parse_size(text: str, expected: int):
    assert parse_size(text) == expected


def test_parse_size_refuses_garbage():
    with pytest.raises(BadInputError, match="memory size"):
        parse_size("lots")


def test_tiny_gguf_weights_are_read_and_an_unknown_kv_cache_is_said(tmp_path: Path):
    path = write_tiny_gguf(tmp_path / "tiny.gguf")  # 3 blocks of 64x32 float32, no attention metadata
    shape = gguf_shape(path)
    assert shape.n_layers == 3 and shape.layer_bytes == 3 * 64 * 32 * 4 and shape.input_bytes == 0
    assert shape.kv_bytes(1024) is None
    settings = make_settings(tmp_path, llm={"model": str(path), "n_ctx": 256})
    plan = plan_profile(settings, vram=0, ram=16 * GiB)
    assert any("KV cache unknown" in n for n in plan.notes)
    assert plan.fits and plan.gpu_layers == 0


def test_kv_cache_and_offload_are_hand_computed(tmp_path: Path):
    path = write_attention_gguf(tmp_path / "att.gguf")
    shape = gguf_shape(path)
    # head_dim = 256 / 8 = 32; K and V, 4 layers, 2 KV heads, f16
    assert (shape.n_layers, shape.n_head_kv, shape.head_dim_k) == (4, 2, 32)
    assert shape.kv_bytes(1024) == 2 * 4 * 1024 * 2 * 32 * 2 == 1_048_576
    assert shape.layer_bytes == 4 * 256 * 256 * 4 and shape.input_bytes == shape.output_bytes == 100 * 256 * 4
    assert not shape.tied and shape.bytes_read_per_token == shape.layer_bytes + shape.output_bytes

    settings = make_settings(tmp_path, llm={"model": str(path), "n_ctx": 1024}, dense={"enabled": False},
                             indexes_dir=str(tmp_path / "none"))
    # a GPU with room for the reserve plus exactly 2 layers (weights + their KV cache): 2 of 4 layers offloaded
    per_layer = 256 * 256 * 4 + 1_048_576 // 4
    plan = plan_profile(settings, vram=LLAMA_GPU_RESERVE + 2 * per_layer + 10, ram=16 * GiB)
    assert plan.gpu_layers == 2 and plan.n_layers == 4
    gpu = {c.name: c.bytes for c in plan.components if c.where == "GPU"}
    assert gpu["KV cache, n_ctx 1024 (f16)"] == 1_048_576 // 2
    assert "offload: 2 of 4 layers" in plan.verdict
    # a large GPU: every layer, and the largest context is what the room left after the weights holds
    big = plan_profile(settings, vram=LLAMA_GPU_RESERVE + 64 * MiB, ram=16 * GiB)
    assert big.gpu_layers == 4 and big.fits
    room = 64 * MiB - shape.layer_bytes - shape.output_bytes
    assert big.max_n_ctx == min(room // (2 * 4 * 2 * 32 * 2) // 256 * 256, 4096)
    assert "| KV cache, n_ctx 1024 (f16) | 1 MiB | GPU |" in plan_table(big)


def test_tied_embeddings_count_the_table_for_the_output(tmp_path: Path):
    shape = gguf_shape(write_attention_gguf(tmp_path / "tied.gguf", tied=True))
    assert shape.tied and shape.output_bytes == 0 and shape.output_read_bytes == shape.input_bytes


def test_known_models_are_marked_estimates_and_unknown_ones_refused(tmp_path: Path):
    shape = llm_shape("qwen2.5-7b-instruct-q4_k_m", tmp_path)
    assert "estimate" in shape.source
    assert shape.kv_bytes(8192) == 2 * 28 * 8192 * 4 * 128 * 2  # 448 MiB
    with pytest.raises(ModelError, match="not known"):
        known_shape("no-such-model")


def test_real_smollm2_gguf():
    pytest.importorskip("gguf")
    model_or_skip(SMOLLM)
    shape = llm_shape(SMOLLM, MODELS)
    assert shape.source.startswith("gguf:")
    # SmolLM2-135M: 30 layers, 9 heads of 64 dims, 3 KV heads -> 2 x 30 x 3 x 64 x 2 B = 23,040 B per token
    assert (shape.n_layers, shape.n_head_kv, shape.head_dim_k) == (30, 3, 64)
    assert shape.kv_bytes(2048) == 2 * 30 * 2048 * 3 * 64 * 2 == 47_185_920
    size = Path(str(shape.source).removeprefix("gguf:")).stat().st_size
    assert 0.9 * size < shape.file_bytes <= size


def test_plan_cli_json_and_table(tmp_path: Path):
    from local_rag.cli.main import cli

    result = CliRunner().invoke(cli, ["plan", "--vram", "8GB", "--ram", "16GB", "--profile", "gpu-8gb", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (plan,) = data["plans"]
    assert plan["profile"] == "gpu-8gb" and data["vram_bytes"] == 8 * GiB
    assert plan["gpu_layers"] == plan["n_layers"] == 28 and plan["verdict"].startswith("fits")
    result = CliRunner().invoke(cli, ["plan", "--vram", "4GB", "--profile", "gpu-24gb"])
    assert result.exit_code == 0, result.output
    assert "offload:" in result.output and "| component | bytes | where | from |" in result.output
    assert CliRunner().invoke(cli, ["plan", "--vram", "eight"]).exit_code == 2
    # --vram none is the CPU-only plan the help promised (it was "not a memory size"); session 49
    result = CliRunner().invoke(cli, ["plan", "--vram", "none", "--profile", "cpu", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["vram_bytes"] == 0 and json.loads(result.output)["vram_from"] == "none: CPU only"
    # bad input is one line (--passages -1 was a math-domain traceback; --index nosuch a table of "unknown")
    env = {"LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes")}
    for args, message in ((["--passages", "-1"], "--passages"), (["--ram", "0GB"], "--ram 0GB"),
                          (["--index", "nosuch"], "no index 'nosuch' under")):
        result = CliRunner().invoke(cli, ["plan", "--profile", "cpu", *args], env=env)
        assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["plan", "--profile", "cpu", "--index", "nosuch", "--passages", "1000"], env=env)
    assert result.exit_code == 0 and "estimated for 1,000 passages" in result.output


def test_plan_loads_no_model_and_no_heavy_library():
    code = ("import sys; from click.testing import CliRunner; from local_rag.cli.main import cli; "
            "r = CliRunner().invoke(cli, ['plan', '--vram', '24GB']); assert r.exit_code == 0, r.output; "
            "print(sorted(m for m in ('torch', 'llama_cpp', 'faiss', 'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_plan_counts_faiss_scratch_and_an_hnsw_index_as_its_flat_gpu_copy(tmp_path: Path):
    from local_rag.index.dense import GPU_TEMP_MEMORY

    hnsw = make_settings(tmp_path, dense={"factory": "HNSW32"}, llm={"model": "qwen2.5-7b-instruct-q4_k_m"})
    comps = {c.name: c for c in plan_profile(hnsw, vram=24 * GiB, ram=64 * GiB, passages=10_000).components}
    assert comps["FAISS GPU scratch memory"].bytes == GPU_TEMP_MEMORY and comps["FAISS GPU scratch memory"].where == "GPU"
    flat = comps["FAISS index (HNSW -> flat on the GPU)"]
    assert flat.where == "GPU" and flat.bytes == int(10_000 * 1.16) * 384 * 4
    assert comps["FAISS index (HNSW graph, kept on the CPU)"].where == "CPU"
    cpu = {c.name for c in plan_profile(hnsw, vram=0, ram=64 * GiB, passages=10_000).components}
    assert "FAISS GPU scratch memory" not in cpu and "FAISS index" in cpu


def test_plan_kv_cache_is_at_the_context_llama_cpp_uses(tmp_path: Path):
    # llm.n_ctx above the trained 32k context: the cache is planned at 32k, as llama.cpp caps it
    s = make_settings(tmp_path, llm={"model": "qwen2.5-7b-instruct-q4_k_m", "n_ctx": 65536})
    p = plan_profile(s, vram=80 * GiB, ram=64 * GiB, passages=1000)
    kv = [c for c in p.components if c.name.startswith("KV cache")]
    assert p.n_ctx == 32768 and kv and sum(c.bytes or 0 for c in kv) == 2 * 28 * 4 * 128 * 2 * 32768


def test_plan_counts_the_likelihood_reranker_as_a_second_gguf(tmp_path: Path):
    path = write_attention_gguf(tmp_path / "scorer.gguf", layers=4, n_head=8, n_head_kv=2, embedding=256, vocab=100)
    shape = gguf_shape(path)
    s = make_settings(tmp_path, pipeline={"cross_encoder": True}, llm={"model": "qwen2.5-7b-instruct-q4_k_m"}, dense={"enabled": False},
                      reranker={"backend": "likelihood", "model": str(path), "max_length": 256})
    kv = 2 * 4 * 512 * 2 * 32 * 2  # K and V x layers x n_ctx (256 + 256) x KV heads x head dims x f16
    assert shape.kv_bytes(512) == kv
    gpu = {c.name: c for c in plan_profile(s, vram=24 * GiB, ram=64 * GiB).components}
    main = gpu[f"reranker {path} (likelihood: a second GGUF)"]
    assert main.where == "GPU" and main.bytes == shape.layer_bytes + shape.output_read_bytes + kv + LLAMA_GPU_RESERVE
    assert gpu[f"reranker {path}: token embeddings"].bytes == shape.input_bytes
    assert "torch CUDA context" not in gpu  # llama.cpp, not torch, runs it
    cpu = {c.name: c for c in plan_profile(s, vram=0, ram=64 * GiB).components}
    assert cpu[f"reranker {path} (likelihood: a second GGUF)"].bytes == (
        shape.layer_bytes + shape.input_bytes + shape.output_bytes + kv)
    missing = s.model_copy(update={"reranker": s.reranker.model_copy(update={"model": "no-such-gguf"})})
    (row,) = [c for c in plan_profile(missing, vram=0, ram=64 * GiB).components if "no-such-gguf" in c.name]
    assert row.bytes is None and row.note
    shared = s.model_copy(update={"reranker": s.reranker.model_copy(update={"model": s.llm.model})})
    plan = plan_profile(shared, vram=24 * GiB, ram=64 * GiB)  # the LLM scores: no second GGUF, no second KV cache
    assert not [c for c in plan.components if c.name.startswith("reranker")]
    assert "the likelihood reranker scores with the LLM itself: no second GGUF" in plan.notes

"""Random-weight GGUFs in a real model's shape (`local_rag.bench.shape_gguf`) and their timing through the real
llama.cpp backend (`local-rag bench-levers llm-speed`): the layout llama.cpp's Q4_K_M gives, a tiny shape that
llama.cpp loads and decodes with SmolLM2's tokenizer, and one-line errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from local_rag.bench.shape_gguf import SHAPES, Shape, q4_k_m_tensors, write_shape_gguf
from local_rag.cli.main import cli
from local_rag.errors import BadInputError

from .llm_fixtures import MODELS, SMOLLM, llama_cpp_or_skip, model_or_skip

TINY = Shape("tiny", n_layer=2, n_embd=256, n_ff=512, n_head=4, n_head_kv=4, n_vocab=49152, context_length=2048)


def smollm_gguf() -> Path:
    llama_cpp_or_skip()
    model_or_skip(SMOLLM)
    return next((MODELS / SMOLLM).glob("*.gguf"))


def test_the_1_5b_layout_is_llama_cpp_q4_k_m() -> None:
    tensors = q4_k_m_tensors(SHAPES["qwen2.5-1.5b"])
    assert len(tensors) == 339  # Qwen2.5-Coder-1.5B-Instruct Q4_K_M's count
    q6 = {name.split(".")[1] for name, kind, _ in tensors if kind == "Q6_K" and name.startswith("blk.")}
    # the blocks whose attn_v and ffn_down the real file keeps in Q6_K (read from it with gguf.GGUFReader)
    assert q6 == {str(i) for i in (0, 1, 5, 6, 7, 8, 9, 10, 13, 16, 19, 21, 24, 27)}
    assert ("output.weight", "Q6_K", (1536, 151936)) in tensors
    assert ("blk.3.ffn_down.weight", "Q4_K", (8960, 1536)) in tensors
    assert ("blk.0.attn_k.weight", "Q4_K", (1536, 256)) in tensors


def test_a_dimension_k_quants_cannot_hold_is_bad_input() -> None:
    with pytest.raises(BadInputError, match="multiple of 256"):
        q4_k_m_tensors(Shape("odd", 2, 896, 4864, 14, 2, 151936))  # Qwen2.5-0.5B: 896 columns


def test_a_tiny_shape_loads_in_llama_cpp_and_decodes(tmp_path: Path) -> None:
    from local_rag.bench.llm_speed import llm_speed

    path = write_shape_gguf(tmp_path / "tiny.gguf", TINY, smollm_gguf(), seed=1)
    assert not list(tmp_path.glob("*.partial"))
    run = llm_speed(path, prompt_tokens=[40, 80], new_tokens=8, repeats=1, n_gpu_layers=0, n_ctx=256, n_threads=1)
    assert [r["prompt_tokens"] for r in run["rows"]] == pytest.approx([40, 80], abs=3)
    for row in run["rows"]:
        assert row["completion_tokens"][0] >= 1 and row["decode_tok_s"] > 0 and row["prefill_tok_s"] > 0
    assert run["n_gpu_layers"] == 0 and run["name"].startswith("random weights, tiny")


def test_a_tokenizer_larger_than_the_shape_is_bad_input(tmp_path: Path) -> None:
    small = Shape("small", 2, 256, 512, 4, 4, n_vocab=1000)
    with pytest.raises(BadInputError, match="more than small's 1000 rows"):
        write_shape_gguf(tmp_path / "s.gguf", small, smollm_gguf())
    assert not list(tmp_path.iterdir())


def test_the_command_times_a_gguf_and_refuses_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["bench-levers", "llm-speed", "--shape", "qwen9"])
    assert result.exit_code == 2 and "unknown shape 'qwen9'" in result.output
    result = runner.invoke(cli, ["bench-levers", "llm-speed", "--shape", "qwen2.5-7b"])
    assert result.exit_code == 2 and "--shape needs --vocab-from" in result.output
    result = runner.invoke(cli, ["bench-levers", "llm-speed", "--gguf", str(tmp_path / "none.gguf")])
    assert result.exit_code == 2 and "does not exist" in result.output
    result = runner.invoke(cli, ["bench-levers", "llm-speed", "--gguf", __file__, "--prompt-tokens", "600,lots"])
    assert result.exit_code == 2 and "--prompt-tokens: expected whole numbers >= 1, comma-separated" in result.output
    result = runner.invoke(cli, ["bench-levers", "llm-speed", "--gguf", __file__, "--repeats", "0"])
    assert result.exit_code == 2 and "--repeats" in result.output
    path = write_shape_gguf(tmp_path / "tiny.gguf", TINY, smollm_gguf())
    out = tmp_path / "speed.json"
    result = runner.invoke(cli, ["bench-levers", "llm-speed", "--gguf", str(path), "--prompt-tokens", "30",
                                 "--new-tokens", "4", "--repeats", "1", "--gpu-layers", "0", "--threads", "1",
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output
    runs = json.loads(out.read_text(encoding="utf-8"))["runs"]
    assert len(runs) == 1 and runs[0]["rows"][0]["completion_tokens"] == [4]

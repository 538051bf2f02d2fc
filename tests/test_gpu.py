"""The GPU paths, run for real where a CUDA GPU is there (skipped elsewhere, so in CI): automatic device choice, the
MiniLM embedder in fp16 on the GPU against fp32 on the CPU, a tiny cross-encoder and bi-encoder trained on the GPU
and scored there in fp16 against the CPU, ONNX Runtime's provider choice, and what `doctor` reports.

`bash scripts/gpu_check.sh` runs these on a lent GPU machine (docs/benchmarks/gpu/); the LLM test needs a CUDA build of
llama.cpp too (`scripts/gpu_llm_check.sh` builds one)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from local_rag.settings import EmbedderConfig, RerankerConfig

from .conftest import CORPUS, MODELS, needs_minilm
from .test_train import EXAMPLES, _models

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU visible to torch")]

TEXTS = [f"{r['title']}: {r['text']}" for r in CORPUS]


def test_auto_picks_cuda_and_nvml_reads_the_gpu() -> None:
    from local_rag.device import nvml_gpus, torch_device

    assert torch_device("auto") == "cuda" and torch_device("cpu") == "cpu"
    gpus = nvml_gpus()
    if not gpus:
        pytest.skip("nvidia-ml-py is not installed: NVML cannot be read")
    assert gpus[0]["total"] > gpus[0]["free"] > 0 and gpus[0]["name"]


def test_doctor_reports_the_gpu_and_names_every_cpu_fallback(tmp_path: Path) -> None:
    from local_rag.cli.doctor import collect

    from .conftest import make_settings

    report = collect(make_settings(tmp_path))
    assert report["torch"]["cuda_available"] and report["torch"]["cuda_build"]
    warnings = report["cpu_fallbacks"]
    ort = pytest.importorskip("onnxruntime")
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        assert any("onnxruntime is the CPU build" in w for w in warnings)
    assert not any("torch" in w for w in warnings)


@needs_minilm
def test_minilm_on_cuda_is_fp16_and_agrees_with_fp32_on_the_cpu() -> None:
    from local_rag.embed import load_embedder

    gpu = load_embedder(EmbedderConfig(device="auto"), MODELS)
    cpu = load_embedder(EmbedderConfig(device="cpu", dtype="fp32"), MODELS)
    assert (gpu.device, gpu.dtype) == ("cuda", "fp16")
    a, b = gpu.embed_batch(TEXTS, "passage"), cpu.embed_batch(TEXTS, "passage")
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cos.min() > 0.999
    q = gpu.embed_batch(["what do cats eat"], "query")[0]
    assert int(np.argmax(a @ q)) in (0, 1)  # a cat passage first


@needs_minilm
def test_cross_encoder_trained_on_cuda_scores_in_fp16_like_fp32_on_the_cpu(tmp_path: Path) -> None:
    pytest.importorskip("datasets", reason="the train extra is not installed")
    from local_rag.rerank import load_reranker
    from local_rag.train.reranker import RerankerTraining, train_reranker

    models = _models(tmp_path)
    cfg = RerankerTraining(loss="bce", max_steps=8, batch_size=8, max_length=64, negatives=2, learning_rate=1e-4)
    train_reranker(EXAMPLES, "all-MiniLM-L6-v2", "gpu-tiny", models, cfg, {"file": "fixture"}, progress=False)
    gpu = load_reranker(RerankerConfig(model="gpu-tiny", max_length=64), models)
    cpu = load_reranker(RerankerConfig(model="gpu-tiny", device="cpu", max_length=64), models)
    assert gpu.device == "cuda" and next(gpu.model.model.parameters()).dtype == torch.float16
    texts = ["Cats hunt mice and eat fish.", "FAISS is a library for dense vector search.", "Dogs bark."]
    g, c = gpu.score("what do cats eat", texts), cpu.score("what do cats eat", texts)
    assert all(math.isfinite(s) for s in g) and g == pytest.approx(c, abs=2e-2)
    assert np.argsort(g).tolist() == np.argsort(c).tolist()


@needs_minilm
def test_embedder_fine_tuned_on_cuda_reloads_as_a_bi_encoder_on_both_devices(tmp_path: Path) -> None:
    pytest.importorskip("datasets", reason="the train extra is not installed")
    from local_rag.rerank import load_reranker
    from local_rag.train.embedder import EmbedderTraining, train_embedder

    models = _models(tmp_path)
    cfg = EmbedderTraining(loss="mnrl", max_steps=4, batch_size=8, max_length=48, negatives=1)
    train_embedder(EXAMPLES, "all-MiniLM-L6-v2", "gpu-emb-tiny", models, cfg, {"file": "fixture"}, progress=False)
    texts = ["Cats hunt mice and eat fish.", "FAISS is a library for dense vector search."]
    scores = [
        load_reranker(
            RerankerConfig(backend="bi-encoder", model="gpu-emb-tiny", device=d, max_length=48), models
        ).score("what do cats eat", texts)
        for d in ("auto", "cpu")
    ]
    assert scores[0] == pytest.approx(scores[1], abs=5e-3) and scores[0][0] > scores[0][1]


def test_onnx_runtime_uses_cuda_only_when_its_gpu_build_is_there() -> None:
    ort = pytest.importorskip("onnxruntime")
    from local_rag.device import onnx_probe_providers, onnx_providers

    chosen = onnx_providers()
    if "CUDAExecutionProvider" in ort.get_available_providers():
        assert chosen[0] == "CUDAExecutionProvider" and "CUDAExecutionProvider" in (onnx_probe_providers() or [])
    else:
        assert chosen == ["CPUExecutionProvider"] and onnx_probe_providers() is None


def test_the_llm_loads_and_answers_on_the_gpu_after_numpy_and_torch() -> None:
    """The CUDA build of llama.cpp crashed at load when numpy came first (sessions 25-37; fixed by
    `local_rag.llm.native`). In a fresh process, as a pipeline runs: numpy, torch with a CUDA tensor, then local-rag's
    backend with every layer offloaded (SmolLM2), and a short reply."""
    import subprocess
    import sys

    from .llm_fixtures import SMOLLM, llama_cpp_or_skip, model_or_skip

    llama_cpp_or_skip()
    model_or_skip(SMOLLM)
    import llama_cpp

    if not llama_cpp.llama_supports_gpu_offload():
        pytest.skip("llama.cpp is a CPU build: rebuild with scripts/install_llama_cpp.sh on this GPU machine")
    code = f"""
import numpy, torch
torch.zeros(1, device="cuda")
from local_rag.llm.llamacpp import LlamaCppLLM
from local_rag.settings import LLMConfig
llm = LlamaCppLLM(LLMConfig(model={SMOLLM!r}, n_ctx=512, n_gpu_layers=-1, max_tokens=8), models_dir={str(MODELS)!r})
reply = llm.run([{{"role": "user", "content": "Say hello."}}], stage="gpu-test")
print(llm.n_gpu_layers, reply.call.completion_tokens)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    layers, tokens = (int(x) for x in out.stdout.split()[-2:])
    assert layers != 0 and tokens > 0

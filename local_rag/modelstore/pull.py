"""``local-rag models pull``: the one command that uses the network.

It downloads a known model's official files from Hugging Face (on a connected machine), checks that the files the
model needs arrived, and installs them atomically into ``models/`` with their sha256 in the manifest. Everything
else in local-rag runs offline; `local-rag models pack` carries the result to an air-gapped machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.errors import LocalRagError, ModelError
from local_rag.modelstore.importer import install, known_model
from local_rag.modelstore.manifest import ModelEntry

Downloader = Callable[..., Any]


def _hf_download() -> Downloader:
    # pull is the only command allowed online: lift the offline switch that backends set, for this process only
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.pop(key, None)
    hub = require("huggingface_hub", "`local-rag models pull`")
    constants = getattr(hub, "constants", None)
    if constants is not None and hasattr(constants, "HF_HUB_OFFLINE"):
        constants.HF_HUB_OFFLINE = False
    return hub.snapshot_download


def missing_required(folder: Path, required: tuple[str, ...]) -> list[str]:
    """Required paths that did not arrive (or arrived empty)."""
    return [r for r in required if not (folder / r).is_file() or (folder / r).stat().st_size == 0]


def pull(name: str, models_dir: str | Path, downloader: Downloader | None = None) -> ModelEntry:
    """Download the official files of a known model and install them.

    Args:
        name: a name from `local_rag.modelstore.sources.KNOWN_MODELS` with a Hugging Face source.
        models_dir: the ``models/`` folder.
        downloader: ``huggingface_hub.snapshot_download`` (the default) or a stand-in with its signature.

    Raises:
        ModelError: unknown name, no official source, a failed download, or required files missing.
    """
    known = known_model(name)
    if known.hf is None:
        raise ModelError(f"{name} has no official download source; use `local-rag models import {name}`")
    download = downloader or _hf_download()
    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.pull-", dir=models_dir))
    try:
        try:
            download(
                repo_id=known.hf.repo,
                revision=known.hf.revision,
                allow_patterns=list(known.hf.files) or None,
                local_dir=str(staging),
            )
        except LocalRagError:
            raise
        except Exception as exc:  # noqa: BLE001 - hub errors are many classes; one line says what failed
            raise ModelError(download_failure(known.hf.repo, name, exc)) from exc
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's bookkeeping, not model files
        missing = missing_required(staging, known.hf.required)
        if missing:
            raise ModelError(f"{name}: the download from {known.hf.repo} lacks {', '.join(missing)}; nothing installed")
        if not any(p.is_file() for p in staging.rglob("*")):
            raise ModelError(f"{name}: no files matched {known.hf.files} in {known.hf.repo}; nothing installed")
        return install(known, [staging], models_dir, source=f"hf:{known.hf.repo}@{known.hf.revision}",
                       check_pypi=False, move=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


#: what huggingface_hub's errors say when the hub cannot be reached (no network, no DNS, a proxy refusing)
_UNREACHABLE = ("Name or service not known", "Temporary failure in name resolution", "ConnectError",
                "Connection refused", "Network is unreachable", "cannot find the appropriate snapshot folder",
                "timed out")


def download_failure(repo: str, name: str, exc: BaseException) -> str:
    """One line for a failed download: the error's first line, and on a machine that cannot reach the hub the way
    to install the files without it (huggingface_hub's own message runs over several lines).

    Example:
        >>> download_failure("BAAI/bge-m3", "bge-m3", OSError("[Errno -2] Name or service not known"))
        'download of BAAI/bge-m3 failed: OSError: [Errno -2] Name or service not known; Hugging Face cannot be reached from this machine: copy the model folder here and run `local-rag models import PATH --name bge-m3` (docs/install.md, air-gapped installs)'
    """
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else ""
    line = f"download of {repo} failed: {type(exc).__name__}" + (f": {first}" if first else "")
    if any(marker.lower() in text.lower() for marker in _UNREACHABLE):
        line += (f"; Hugging Face cannot be reached from this machine: copy the model folder here and run "
                 f"`local-rag models import PATH --name {name}` (docs/install.md, air-gapped installs)")
    return line

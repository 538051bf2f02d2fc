"""``local-rag models remove``: delete a model's files and the entry this machine made for it.

An entry of ``manifest.json`` (shipped with the project) stays, shown as missing, so the model can be imported or
pulled again; an entry only ``manifest.local.json`` holds (an import, a trained or exported model) goes with its files.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from local_rag.errors import ModelError
from local_rag.modelstore.manifest import Manifest, folder_bytes, query_twin_folder


@dataclass
class Removed:
    name: str
    freed: int  # bytes of the files deleted
    entry_kept: bool  # the shipped entry stays (the model can be imported or pulled again)


def target(manifest: Manifest, name: str) -> Path:
    """The folder (or file) that removing ``name`` deletes.

    Raises:
        ModelError: unknown name, or an entry whose path leads outside the models folder.
    """
    entry = manifest.get(name)
    root = manifest.location(entry)
    base = manifest.models_dir.resolve()
    if not entry.path or root.resolve() == base or not root.resolve().is_relative_to(base):
        raise ModelError(f"model {name!r} has the path {entry.path!r}, not a folder inside {manifest.models_dir}: "
                         "delete its files by hand")
    return root


def remove_model(name: str, models_dir: str | Path) -> Removed:
    """Delete model ``name``'s folder (or file) under ``models_dir`` and its local manifest entry.

    Raises:
        ModelError: see `target`.
    """
    manifest = Manifest.load(models_dir)
    root = target(manifest, name)
    freed = 0
    if root.is_dir() and not root.is_symlink():
        freed = folder_bytes(root)
        shutil.rmtree(root)
    elif root.exists() or root.is_symlink():
        freed = 0 if root.is_symlink() else root.stat().st_size
        root.unlink()
    twin = query_twin_folder(models_dir, manifest.get(name).checksum)
    if twin.is_dir():  # its query twin (`local_rag.embed.twin`): made from these files, useless without them
        freed += folder_bytes(twin)
        shutil.rmtree(twin)
    kept = name in manifest.shipped
    if kept:
        manifest.entries[name] = manifest.shipped[name]
    else:
        del manifest.entries[name]
    manifest.save()
    return Removed(name, freed, kept)

"""The re-scorer `local-rag train adapt` kept for an index, applied wherever the index answers.

When `train adapt` keeps a model, it writes ``<indexes_dir>/<index>.adapted.yaml`` beside the index folder (not in
it: the folder holds only files its manifest records, and `index add|remove` swap it whole). The file is a settings
layer (``pipeline.cross_encoder``, ``reranker``) plus an ``adapted_by`` record of what was measured. `ask`, `chat`,
`search` and `serve` apply it (`local_rag.settings.load_settings` with ``adapted=True``) above the profile and the
user config's defaults and below a ``--config`` file, ``LOCAL_RAG_*`` variables and flags, so whatever a user sets
explicitly still wins; ``index_adaptation: false`` (``--no-adaptation``) leaves it out. `eval` and `bench` never
apply it: they measure the profile as given.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import yaml

from local_rag.errors import SettingsError

SUFFIX = ".adapted.yaml"
RECORD = "adapted_by"  # what was measured; not a setting, removed before the layer is merged
LAYER_KEYS = {"pipeline", "reranker"}  # what an adaptation may set: not the index, the folders or the LLM

log = logging.getLogger("local_rag.adaptation")


def adaptation_file(indexes_dir: Path, index: str) -> Path:
    """Where an index's adaptation lives: beside its folder."""
    return Path(indexes_dir) / f"{index}{SUFFIX}"


def read_adaptation(indexes_dir: Path, index: str, models_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(settings layer, record)`` of the index's adaptation; ``({}, {})`` when it has none, or when the model it
    names is gone from ``models_dir`` (a warning says so: the index then answers as if it had none).

    Raises:
        SettingsError: the file is not a mapping of YAML with a ``reranker``, or sets more than ``pipeline`` and
            ``reranker`` (one line naming the file and the way out).
    """
    path = adaptation_file(indexes_dir, index)
    if not path.is_file():
        return {}, {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SettingsError(f"{path} (written by `train adapt`) cannot be read: {type(exc).__name__}; delete it, "
                            f"or run `local-rag train adapt --index {index}` again") from exc
    if not isinstance(data, dict) or not isinstance(data.get("reranker"), dict):
        raise SettingsError(f"{path} is not an adaptation written by `train adapt`; delete it, or run "
                            f"`local-rag train adapt --index {index}` again")
    record = data.pop(RECORD, None) or {}
    if data.get("index") == index:  # a work folder's adapted.yaml copied here names its index: the same one
        data.pop("index")
    other = sorted(set(data) - LAYER_KEYS)
    if other:
        raise SettingsError(f"{path} sets {', '.join(other)}, which an index's adaptation may not (only "
                            f"{' and '.join(sorted(LAYER_KEYS))}); delete it, or run `local-rag train adapt --index "
                            f"{index}` again")
    model = str(data["reranker"].get("model", ""))
    if not model or not (Path(models_dir) / model).exists():
        log.warning("index %s's adaptation (%s) names the model %r, which is not in %s: not used (run `local-rag train "
                    "adapt --index %s` again, or delete the file)", index, path, model, models_dir, index)
        return {}, {}
    return data, dict(record)


def write_adaptation(indexes_dir: Path, index: str, layer: dict[str, Any], record: dict[str, Any], head: str) -> Path:
    """Write the index's adaptation (``head``: comment lines for a person opening the file); atomic."""
    path = adaptation_file(indexes_dir, index)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(head + yaml.safe_dump({**layer, RECORD: record}, sort_keys=False), encoding="utf-8")
    tmp.replace(path)
    return path


def remove_adaptation(indexes_dir: Path, index: str, model: str) -> bool:
    """Remove the index's adaptation when it names ``model`` (a later run of `train adapt` that no longer keeps that
    model); another model's adaptation, or a file that cannot be read, stays. True when a file was removed."""
    path = adaptation_file(indexes_dir, index)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    reranker = data.get("reranker") if isinstance(data, dict) else None
    if not isinstance(reranker, dict) or reranker.get("model") != model:
        return False
    path.unlink(missing_ok=True)
    return True


def remove_adaptations_of(indexes_dir: Path, model: str) -> list[str]:
    """Remove every index's adaptation that names ``model`` (`local-rag models remove`); the indexes it removed."""
    paths = sorted(Path(indexes_dir).glob(f"*{SUFFIX}")) if Path(indexes_dir).is_dir() else []
    return [index for index in (p.name[: -len(SUFFIX)] for p in paths) if remove_adaptation(indexes_dir, index, model)]


def describe(layer: dict[str, Any], record: dict[str, Any]) -> str:
    """One line for an adaptation: its model and what the held-out check measured."""
    gain = record.get("mrr@10")
    measured = f", held-out MRR@10 {gain[0]} -> {gain[1]}" if isinstance(gain, list) and len(gain) == 2 else ""
    return f"re-scorer {layer['reranker'].get('model')} (train adapt{measured}; --no-adaptation leaves it out)"


def adaptations(indexes_dir: Path, models_dir: Path, index: str | None = None) -> dict[str, str]:
    """Every index's adaptation under ``indexes_dir`` (or ``index``'s alone): index name -> `describe`, or why it is
    not used (a broken file, a missing model); for `local-rag doctor` and `index info`."""
    out: dict[str, str] = {}
    paths = [adaptation_file(indexes_dir, index)] if index else sorted(Path(indexes_dir).glob(f"*{SUFFIX}"))
    for path in paths if Path(indexes_dir).is_dir() else []:
        if not path.is_file():
            continue
        index = path.name[: -len(SUFFIX)]
        try:
            layer, record = read_adaptation(indexes_dir, index, models_dir)
        except SettingsError as exc:
            out[index] = f"not used: {exc}"
            continue
        out[index] = (describe(layer, record) + _changed_since(indexes_dir, index, record)) if layer else \
            "not used: its model is missing"
    return out


def _changed_since(indexes_dir: Path, index: str, record: dict[str, Any]) -> str:
    """``"; the index changed since ..."`` when its documents are no longer those the adaptation was measured on (an
    `index add`, `remove` or `sync` since; ``record`` names the corpus hash and passages of then), else ``""``."""
    import json

    if not isinstance(record.get("corpus_hash"), str):
        return ""  # written before `train adapt` recorded it
    try:  # the manifest's two fields read directly: settings import this module, and it stays below the index package
        manifest = json.loads((Path(indexes_dir) / index / "manifest.json").read_text(encoding="utf-8"))
        corpus_hash, passages = manifest["corpus_hash"], manifest["passages"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if corpus_hash == record["corpus_hash"]:
        return ""
    return (f"; the index changed since ({record.get('passages')} passages then, {passages} now): `local-rag train "
            f"adapt --index {index}` again to adapt to the changes")


def in_use(settings: Any) -> str | None:
    """`describe` of the adaptation these settings apply (`load_settings(..., adapted=True)`), None when they apply
    none (no file, ``--no-adaptation``, or a flag, variable or file that set another re-scorer): for the banners."""
    if not (settings.index_adaptation and settings.pipeline.cross_encoder and settings.reranker.backend == "bi-encoder"):
        return None  # nothing read: a missing model's warning is said once, by `load_settings`
    layer, record = read_adaptation(settings.indexes_dir, settings.index, settings.models_dir)
    model = layer.get("reranker", {}).get("model")
    return describe(layer, record) if model and settings.reranker.model == model else None

"""Running a sentence-transformers trainer to a model folder under ``models/``: resume, check, record, install.

A run checkpoints into ``<models>/.<name>.training`` and resumes from there when the base model, the settings (other
than how long to train) and the data are the ones the checkpoints were made with (``run.json`` there); checkpoints
of another run are cleared with a warning, never resumed into a model of mixed data. The finished model is saved to a staging
folder with ``training.json`` (base model, settings, data sha256, time, peak memory, loss log, metrics), moved to
``<models>/<name>`` (the previous one is replaced only then) and recorded in the manifest with every file's sha256.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_rag.errors import BadInputError, ModelError

log = logging.getLogger("local_rag.train")
# settings that say how long to train, not what is trained: changing them continues the same run
LENGTH_SETTINGS = ("epochs", "max_steps", "save_steps")


def check_run(epochs: float, batch_size: int, learning_rate: float, max_steps: int,
              at_least: dict[str, tuple[int, int]] | None = None) -> None:
    """Refuse, in one line naming the option, a training setting no run can train with, before any data is written or
    any model loaded (a batch of 0 failed in torch's sampler after the queries were written; 0 epochs trained no step
    and installed the base model as if trained). ``at_least``: further settings, ``{"--rank": (value, least)}``.

    Raises:
        BadInputError: the first setting out of range.
    """
    if not (epochs > 0 and math.isfinite(epochs)):
        raise BadInputError(f"--epochs must be above 0, got {epochs}")
    if batch_size < 1:
        raise BadInputError(f"--batch-size must be at least 1, got {batch_size}")
    if not (learning_rate > 0 and math.isfinite(learning_rate)):
        raise BadInputError(f"--lr must be above 0, got {learning_rate}")
    if max_steps == 0 or max_steps < -1:
        raise BadInputError(f"--max-steps must be at least 1 (or -1, no limit), got {max_steps}")
    for option, (value, least) in (at_least or {}).items():
        if value < least:
            raise BadInputError(f"{option} must be at least {least}, got {value}")


@dataclass
class TrainedModel:
    kind: str  # cross-encoder | embedder
    base: str
    source: Path
    name: str
    models_dir: Path
    role: str  # reranker | embedder
    description: str


def base_folder(base: str, models_dir: str | Path) -> Path:
    """The folder of the base model (a manifest name or a path), refusing a missing one in one line."""
    from local_rag.modelstore import resolve_model

    try:
        folder, _ = resolve_model(base, models_dir)
    except ModelError as exc:
        raise ModelError(f"base model: {exc}") from exc
    if not (folder / "config.json").exists():
        raise ModelError(f"base model {base!r} ({folder}) is not a transformers model folder (no config.json)")
    return folder



def install_folder(staging: Path, target: Path) -> None:
    """Move a finished model folder from ``staging`` to ``target``; a previous ``target`` is replaced only then."""
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def run_and_install(trainer: Any, model: Any, what: TrainedModel, settings: dict[str, Any], data: dict[str, Any]) -> Path:
    """Train (resuming from the last checkpoint of an interrupted run), refuse a non-finite loss, install."""
    from local_rag.sysinfo import peak_rss_mb

    work = Path(trainer.args.output_dir)
    resume = resumable(work, {"base": what.base, "settings": settings, "data": data})
    started = time.perf_counter()
    result = trainer.train(resume_from_checkpoint=True if resume else None)
    seconds = time.perf_counter() - started
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    if not all(math.isfinite(x) for x in losses) or not math.isfinite(result.training_loss):
        raise ModelError(f"training diverged (loss {result.training_loss}); nothing was installed")
    record = {
        "kind": what.kind, "base_model": what.base, "base_folder": str(what.source), "settings": settings, "data": data,
        "train_seconds": round(seconds, 1), "resumed": resume, "steps": trainer.state.global_step,
        "final_loss": round(float(result.training_loss), 5), "loss_log": [round(x, 5) for x in losses],
        "peak_rss_mb": round(peak_rss_mb(), 1), "metrics": {},
    }
    staging = what.models_dir / f".{what.name}.staging"
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(str(staging))
    (staging / "training.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    target = what.models_dir / what.name
    install_folder(staging, target)
    record_trained(target, what.models_dir, what.role, what.description, what.kind)
    shutil.rmtree(work, ignore_errors=True)
    return target


def record_trained(folder: Path, models_dir: Path, role: str, description: str, kind: str) -> None:
    """Record a model folder `run_and_install` made (its ``training.json`` beside it) in the manifest."""
    from local_rag.modelstore.manifest import record_folder

    record_folder(folder, models_dir, role, description, kind, source="trained: local-rag train (see training.json)")


def resumable(work: Path, run: dict[str, Any]) -> bool:
    """Whether ``work`` holds checkpoints of this ``run`` (base, settings, data) to resume from.

    Checkpoints written for another run (its ``run.json`` differs) are removed with a warning, so the new run starts
    over; a folder from before ``run.json`` was kept resumes as it did. ``run.json`` is then written for this run.
    """
    key = {**run, "settings": {k: v for k, v in run["settings"].items() if k not in LENGTH_SETTINGS}}
    text = json.dumps(key, sort_keys=True, default=str)
    marker = work / "run.json"
    found = work.exists() and any(p.name.startswith("checkpoint-") for p in work.iterdir())
    if found and marker.exists() and marker.read_text(encoding="utf-8") != text:
        log.warning("%s holds checkpoints of another run (base model, settings or data differ): starting over", work)
        shutil.rmtree(work)
        found = False
    work.mkdir(parents=True, exist_ok=True)
    marker.write_text(text, encoding="utf-8")
    return found


def add_metrics(folder: Path, models_dir: Path, metrics: dict[str, Any]) -> None:
    """Merge ``metrics`` into the model's ``training.json`` and refresh its manifest entry."""
    from local_rag.modelstore.manifest import Manifest, record_folder

    path = folder / "training.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record.setdefault("metrics", {}).update(metrics)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    entry = Manifest.load(models_dir).get(folder.name)
    record_folder(folder, models_dir, entry.role, entry.description, entry.format, entry.source)

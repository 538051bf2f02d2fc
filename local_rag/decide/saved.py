"""A fitted scikit-learn model and its JSON meta in one folder (``model.joblib`` beside ``<name>.json``): the decider,
the support classifier and the draft gate are saved and read alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from local_rag.errors import ModelError

MODEL = "model.joblib"


def save_fitted(folder: Path, model: Any, meta: dict[str, Any], meta_name: str) -> Path:
    """Write ``model.joblib`` and ``meta_name`` into ``folder`` (created)."""
    import joblib

    folder.mkdir(parents=True, exist_ok=True)
    joblib.dump(model, folder / MODEL)
    (folder / meta_name).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return folder


def read_fitted(folder: Path, meta_name: str, what: str, command: str) -> tuple[Any, dict[str, Any]]:
    """The model and meta saved in ``folder``.

    Raises:
        ModelError: a file is missing or unreadable (the message names ``what`` and the ``command`` that rebuilds it).
    """
    import joblib

    try:
        meta = json.loads((folder / meta_name).read_text(encoding="utf-8"))
        model = joblib.load(folder / MODEL)
    except (OSError, ValueError, EOFError) as exc:
        raise ModelError(f"the {what} in {folder} cannot be read ({exc}); rebuild it with `{command}`") from exc
    return model, meta

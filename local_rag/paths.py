"""Where models, indexes and the user config live.

Inside a local-rag checkout (the working directory holds local-rag's ``pyproject.toml``) models and indexes stay in
``models/`` and ``indexes/`` of the checkout, as the Makefile, tests and benchmarks expect. Anywhere else they go to
the user data directory (platformdirs: ``~/.local/share/local-rag`` on Linux, ``~/Library/Application
Support/local-rag`` on macOS, ``%LOCALAPPDATA%\\local-rag`` on Windows), so ``local-rag`` works from any folder after
``pip install``. ``LOCAL_RAG_HOME`` moves the user data directory; ``LOCAL_RAG_MODELS_DIR`` and
``LOCAL_RAG_INDEXES_DIR`` (settings) move each folder on its own.

The user config file (``config.yaml`` in the user config directory, ``~/.config/local-rag`` on Linux, or the file
``LOCAL_RAG_USER_CONFIG`` names; empty = none) holds defaults and named profiles, read by `local_rag.settings`:

    profile: notes-gpu          # the profile used when none is given
    llm: {n_threads: 4}         # defaults over every profile
    profiles:
      notes-gpu:                # a named profile: a bundled one (`base`) plus changes
        base: gpu-8gb
        retrieval: {top_k: 8}
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "local-rag"
MAX_NAME_BYTES = 200  # an index or model name: a folder beside its hidden lock and staging files (255 bytes each)


def name_problem(name: str, kind: str, folder: str, reserved: tuple[str, ...] = ()) -> str | None:
    """Why ``name`` cannot name an index or model (``kind``) folder under ``folder`` (``indexes_dir``,
    ``models_dir``), or None: '/', '\\' or NUL in it, a leading '.', leading or trailing space (a path outside the
    folder, one `list` never finds, a hidden one), one of the folder's ``reserved`` file names, or more bytes than
    the folder and its lock and staging files hold.
    """
    if (not name.strip() or name.startswith(".") or any(c in name for c in "/\\\0") or name != name.strip()
            or name in reserved):
        article = "an" if kind[:1] in "aeiou" else "a"
        return (f"{name!r} is not {article} {kind} name: a plain folder name under {folder} (no '/' or '\\', not "
                "starting with '.', no leading or trailing space)")
    if len(name.encode()) > MAX_NAME_BYTES:
        return f"{kind} name too long: {len(name.encode())} bytes, {MAX_NAME_BYTES} at most"
    return None


def in_checkout(folder: Path | None = None) -> bool:
    """True when ``folder`` (default: the working directory) is a local-rag source checkout."""
    project = (folder or Path.cwd()) / "pyproject.toml"
    try:
        return f'name = "{APP}"' in project.read_text(encoding="utf-8")
    except OSError:
        return False


def user_data_dir() -> Path:
    """The user data directory (``LOCAL_RAG_HOME`` when set)."""
    home = os.environ.get("LOCAL_RAG_HOME")
    if home:
        return Path(home).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def default_models_dir() -> Path:
    """``models`` in a checkout, else ``<user data dir>/models``."""
    return Path("models") if in_checkout() else user_data_dir() / "models"


def default_indexes_dir() -> Path:
    """``indexes`` in a checkout, else ``<user data dir>/indexes``."""
    return Path("indexes") if in_checkout() else user_data_dir() / "indexes"


def default_runs_dir() -> Path:
    """``runs`` in a checkout, else ``<user data dir>/runs``: the work folders of the commands a user runs on their
    own documents (`train adapt`, `synth queries`' cache), so a rerun from another folder resumes the same work."""
    return Path("runs") if in_checkout() else user_data_dir() / "runs"


def default_reports_dir() -> Path:
    """``docs/benchmarks`` in a checkout (where the committed figures live), else ``<user data dir>/benchmarks``: the
    report files of `local-rag bench` run from a pip install (before, a ``docs/benchmarks`` folder appeared in
    whatever folder the user was in)."""
    return Path("docs/benchmarks") if in_checkout() else user_data_dir() / "benchmarks"


def user_config_file() -> Path | None:
    """The user config file: ``LOCAL_RAG_USER_CONFIG`` when set (empty = none), else ``config.yaml`` in the user
    config directory when it exists. None when there is none."""
    given = os.environ.get("LOCAL_RAG_USER_CONFIG")
    if given is not None:
        return Path(given).expanduser() if given else None
    import platformdirs

    path = Path(platformdirs.user_config_dir(APP, appauthor=False)) / "config.yaml"
    return path if path.is_file() else None

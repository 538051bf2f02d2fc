"""Settings from ``LOCAL_RAG_*`` environment variables, refused with one line naming the variable.

pydantic-settings reads the variables; this module checks them first: a variable that names no setting (a typo
such as ``LOCAL_RAG_CHUNK__SIZE``) is refused like an unknown key in a settings file, and a value that cannot be
parsed (a list or mapping that is not JSON) names its variable instead of a 60-line traceback.

Variables that are not settings but are read elsewhere are listed in `OTHER_VARIABLES`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_settings import SettingsError as SourceError

from local_rag.errors import SettingsError

PREFIX = "LOCAL_RAG_"
# read by the CLI, scripts or the shell scripts, not settings fields
OTHER_VARIABLES = frozenset({
    "DEBUG", "CONFIG", "API_KEY", "MTRAG_DIR", "WHEEL_CACHE", "WHEELHOUSE", "HOME", "USER_CONFIG",
})


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _is_mapping(annotation: Any) -> bool:
    return annotation is dict or typing.get_origin(annotation) is dict


def setting_names(model: type[BaseModel], prefix: str = "") -> tuple[set[str], set[str]]:
    """(every settable path as ``A__B__C``, the paths of mapping fields, under which any key may follow)."""
    names: set[str] = set()
    open_ended: set[str] = set()
    for name, info in model.model_fields.items():
        path = f"{prefix}{name.upper()}"
        names.add(path)
        sub = _model_of(info.annotation)
        if sub is not None:
            more, more_open = setting_names(sub, path + "__")
            names |= more
            open_ended |= more_open
        elif _is_mapping(info.annotation):
            open_ended.add(path)
    return names, open_ended


def check_names(model: type[BaseModel], environ: dict[str, str] | None = None) -> None:
    """Refuse ``LOCAL_RAG_*`` variables that name no setting.

    Raises:
        SettingsError: the first unknown variable, with the closest known name.
    """
    environ = dict(os.environ) if environ is None else environ
    names, open_ended = setting_names(model)
    for var in sorted(environ):
        if not var.upper().startswith(PREFIX):
            continue
        rest = var[len(PREFIX):].upper()
        if rest in names or rest in OTHER_VARIABLES or any(rest.startswith(p + "__") for p in open_ended):
            continue
        guess = difflib.get_close_matches(rest, sorted(names), n=1)
        hint = f"; did you mean {PREFIX}{guess[0]}?" if guess else ""
        raise SettingsError(f"unknown setting in environment variable {var} (unset it or fix the name){hint}")


def read_env(source: Any) -> dict[str, Any]:
    """``source()`` (pydantic-settings' environment source), its parse errors turned into one line naming the
    variable."""
    try:
        return dict(source())
    except (SourceError, RecursionError, ValueError) as exc:  # ValueError: a JSON integer of too many digits
        match = re.search(r'field "(\w+)"', str(exc))
        field = match.group(1).upper() if match else ""
        vars_ = sorted(v for v in os.environ if v.upper().startswith(f"{PREFIX}{field}") and v.upper() != PREFIX + "DEBUG")
        shown = ", ".join(f"{v}={os.environ[v][:60]!r}" for v in vars_) or "a LOCAL_RAG_* variable"
        raise SettingsError(
            f"cannot parse environment variable {shown}: lists and mappings must be JSON, e.g. "
            f"{PREFIX}RETRIEVAL__RETRIEVERS='[\"bm25\"]' or {PREFIX}FUSION__WEIGHTS='{{\"bm25\": 2}}'"
        ) from exc


def variable_of(loc: tuple[Any, ...]) -> str:
    """The environment variable that sets the setting at ``loc``, when one is set (for error messages)."""
    for depth in range(len(loc), 0, -1):
        var = PREFIX + "__".join(str(p) for p in loc[:depth]).upper()
        if var in os.environ:
            return var
    return ""


def describe_value_errors(errors: list[dict[str, Any]], model: type[BaseModel] | None = None) -> str:
    """The validation errors in one line; with ``model``, a key that names no setting (in a settings file, a profile,
    an override) is "unknown setting chunker.szie (did you mean chunker.size?)", as an unknown variable is (before:
    "chunker.szie: Extra inputs are not permitted")."""
    names = sorted(n.lower().replace("__", ".") for n in setting_names(model)[0]) if model is not None else []
    parts = []
    for err in errors:
        where = ".".join(str(p) for p in err["loc"])
        if err.get("type") == "extra_forbidden" and names:
            guess = difflib.get_close_matches(where.lower(), names, n=1)
            parts.append(f"unknown setting {where}" + (f" (did you mean {guess[0]}?)" if guess else ""))
            continue
        var = variable_of(tuple(err["loc"]))
        parts.append(f"{where}: {err['msg']}" + (f" (from {var}={json.dumps(os.environ[var])[:60]})" if var else ""))
    return "; ".join(parts)

"""Errors that the CLI turns into one clear line and a non-zero exit code.

Every error a user can cause (bad input, a missing model, an index built with other settings) is a
`LocalRagError`; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class LocalRagError(Exception):
    """Base class: a problem the user can fix. ``exit_code`` is what the CLI exits with."""

    exit_code = 1


class BadInputError(LocalRagError):
    """Malformed input: a corpus line, a conversation file, a query file."""

    exit_code = 2


class IndexError_(LocalRagError):  # noqa: N801 - the builtin name is taken
    """A missing, corrupt or mismatched index."""

    exit_code = 3


class ModelError(LocalRagError):
    """A missing, corrupt or unverified model file."""

    exit_code = 4


class MissingDependencyError(LocalRagError):
    """An optional dependency (an extra) is not installed."""

    exit_code = 5


class SettingsError(LocalRagError):
    """Invalid settings: unknown keys, unknown profile, bad values."""

    exit_code = 6

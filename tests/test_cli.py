"""The CLI as a user runs it: exit codes, one-line errors (never a traceback), --json output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import CORPUS, MODELS, ROOT, needs_minilm, write_jsonl


def run(*args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "LOCAL_RAG_DEBUG"}  # a test asks for it in ``env``
    full_env.update({"LOCAL_RAG_MODELS_DIR": str(MODELS), "LOCAL_RAG_INDEXES_DIR": str(cwd / "indexes"), **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "local_rag", *args], cwd=cwd, env=full_env, capture_output=True, text=True, input=stdin, timeout=600
    )


def assert_clean_error(result: subprocess.CompletedProcess[str], code: int, pattern: str) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    assert pattern in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: ")


def test_bad_corpus_inputs_give_one_line_errors(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(CORPUS[0]) + "\n{oops\n")
    assert_clean_error(run("index", "build", str(bad), "--sparse-only", cwd=tmp_path), 2, "bad.jsonl:2: not valid JSON")
    assert_clean_error(run("index", "build", str(tmp_path / "missing.jsonl"), "--sparse-only", cwd=tmp_path), 2, "corpus not found")
    dup = write_jsonl(tmp_path / "dup.jsonl", [CORPUS[0], CORPUS[0]])
    assert_clean_error(run("index", "build", str(dup), "--sparse-only", cwd=tmp_path), 2, "duplicate passage id")
    # session 50: a spreadsheet was read as JSONL: "notes.csv:1: not valid JSON", as if a broken corpus (session 53:
    # spreadsheets are read as tables; session 55: old binary Word files are read, a WordPerfect one is not)
    binary = tmp_path / "notes.wpd"
    binary.write_bytes(b"\xffWPC a WordPerfect document")
    assert_clean_error(run("index", "build", str(binary), "--sparse-only", cwd=tmp_path), 2,
                       "notes.wpd: not a corpus local-rag reads: JSONL passages (.jsonl, .jsonl.gz, .zip), a BEIR "
                       "folder, or documents (.txt .md .markdown .mdx .qmd .rmd .rst .adoc .org .tex .bib .ipynb .html .htm .pdf .docx "
                       ".doc .rtf .odt .pptx .ppt .pps .odp .epub .eml .emlx .msg .mbox .pst .ost .ics .vcf .enex .mht .mhtml .vtt .srt .csv .tsv .xlsx .xls .ods .docm .dotx .dotm .pptm "
                       ".ppsx .ppsm .potx .potm .xlsm .xltx .xltm) or a folder of them")
    cut = tmp_path / "notes.doc"
    cut.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 a Word 97 document cut short")
    assert_clean_error(run("index", "build", str(cut), "--sparse-only", cwd=tmp_path), 2,
                       "notes.doc: cannot be parsed as DOC (NotOleFileError: not an OLE2 structured storage file)")
    named = tmp_path / "passages.data"  # JSONL under another name still reads, a byte-order mark included
    named.write_bytes(b"\xef\xbb\xbf" + (json.dumps(CORPUS[0]) + "\n").encode())
    assert run("index", "build", str(named), "--sparse-only", "--index", "named", cwd=tmp_path).returncode == 0
    assert not (tmp_path / "indexes" / "default").exists()
    # session 52: with no models yet, a web address or a mistyped folder was answered "model 'all-MiniLM-L6-v2' is
    # not in ..."; with them, "corpus not found: https:/docs.example.com"; a quoted ~ was not explained
    empty = {"LOCAL_RAG_MODELS_DIR": str(tmp_path / "no-models")}
    for args, said in ((("index", "build", "https://docs.example.com/guide/"), "https://docs.example.com/guide/ is a "
                        "web address: local-rag reads files on this machine and never goes online; save the pages first"),
                       (("index", "sync", "www.example.com"), "www.example.com is a web address"),
                       (("index", "add", "file:///srv/notes%20old"), "is a file URL: give the path itself (/srv/notes old)"),
                       (("index", "build", str(tmp_path / "typo")), f"corpus not found: {tmp_path / 'typo'}")):
        assert_clean_error(run(*args, cwd=tmp_path, env=empty), 2, said)
    home = {**empty, "HOME": str(tmp_path)}
    assert_clean_error(run("index", "build", "~/bad.jsonl", cwd=tmp_path, env=home), 2,
                       f"corpus not found: ~/bad.jsonl (the shell did not expand ~ inside quotes: write {bad})")
    ok = run("index", "build", str(bad), "--sparse-only", "--skip-bad", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "skipped 1" in ok.stdout


def test_a_missing_tokenizer_is_said_before_any_document_is_read(tmp_path: Path) -> None:
    """Session 52: `index build notes --sparse-only` (help: "no embedding model needed") on a machine without the
    embedder's folder read every document (5,000 notes: the whole progress bar), then stopped on "model
    'all-MiniLM-L6-v2' is not in ...": the chunker cuts with that model's tokenizer. Now the model is looked for first,
    the message says why a BM25-only index needs it and how to do without."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(3):
        (notes / f"n{i}.md").write_text(f"# Note {i}\n\nGlaciers carve moraines over centuries.\n", encoding="utf-8")
    empty = {"LOCAL_RAG_MODELS_DIR": str(tmp_path / "no-models")}
    failed = run("index", "build", str(notes), "--sparse-only", cwd=tmp_path, env=empty)
    assert_clean_error(failed, 4, "a --sparse-only index is chunked with its tokenizer too; "
                                  "LOCAL_RAG_CHUNKER__TOKENIZER=whitespace chunks at spaces instead")
    assert "reading" not in failed.stderr  # no document was read
    spaces = {**empty, "LOCAL_RAG_CHUNKER__TOKENIZER": "whitespace"}
    assert run("index", "build", str(notes), "--sparse-only", cwd=tmp_path, env=spaces).returncode == 0
    found = run("search", "moraines", cwd=tmp_path, env=empty)  # the index's own tokenizer: no model needed
    assert found.returncode == 0 and "n0.md" in found.stdout, found.stderr


def test_json_arrays_of_passages_are_read_and_archives_of_documents_are_named(tmp_path: Path) -> None:
    """Session 51: a `.json` array of passages (as many tools export them) stopped at "line 1: not valid JSON"
    (pretty-printed) or "expected a JSON object, got list"; a zip of Markdown notes said "the archive holds no .jsonl
    file", a `.tar.gz` of them "line 1: not valid JSON"; a JSON report given by mistake, "line 1: not valid JSON"."""
    import tarfile
    import zipfile

    array = tmp_path / "passages.json"
    array.write_text(json.dumps(CORPUS, indent=2), encoding="utf-8")
    assert run("index", "build", str(array), "--sparse-only", "--index", "arr", cwd=tmp_path).returncode == 0
    result = run("search", CORPUS[0]["text"], "--index", "arr", "--json", cwd=tmp_path)
    assert json.loads(result.stdout)["hits"][0]["passage_id"] == CORPUS[0]["_id"]
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps([CORPUS[0], CORPUS[0]]), encoding="utf-8")
    assert_clean_error(run("index", "build", str(dup), "--sparse-only", cwd=tmp_path), 2, "dup.json[2]: duplicate passage id")
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"command": "x", "tasks": 3}, indent=2), encoding="utf-8")
    assert_clean_error(run("index", "build", str(report), "--sparse-only", cwd=tmp_path), 2,
                       "report.json: one JSON object (keys: command, tasks), not passages")
    one = tmp_path / "one.json"  # session 52 (noticed in 51): one passage, pretty-printed, was "line 1: not valid JSON"
    one.write_text(json.dumps(CORPUS[0], indent=2), encoding="utf-8")
    built = run("index", "build", str(one), "--sparse-only", "--index", "one", cwd=tmp_path)
    assert built.returncode == 0 and "1 passages" in built.stdout, built.stderr
    lines = write_jsonl(tmp_path / "lines.json", CORPUS)  # JSON lines under a .json name: read as before
    assert run("index", "build", str(lines), "--sparse-only", "--index", "lines", cwd=tmp_path).returncode == 0
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "cats.md").write_text("# Cats\n\nCats sleep a lot.\n", encoding="utf-8")
    with zipfile.ZipFile(tmp_path / "notes.zip", "w") as archive:
        archive.write(notes / "cats.md", "cats.md")
    with tarfile.open(tmp_path / "notes.tar.gz", "w:gz") as archive:
        archive.add(notes / "cats.md", "cats.md")
    assert_clean_error(run("index", "build", "notes.zip", "--sparse-only", cwd=tmp_path), 2,
                       "notes.zip: a zip of 1 document(s), not JSONL passages: unpack it and build from its folder "
                       "(`unzip notes.zip -d notes && local-rag index build notes`)")
    assert_clean_error(run("index", "build", "notes.tar.gz", "--sparse-only", cwd=tmp_path), 2,
                       "notes.tar.gz: a tar archive, not JSONL passages: unpack it and build from its folder")


def test_adding_a_second_folder_whose_file_takes_the_id_of_the_firsts_says_what_replace_would_do(tmp_path: Path) -> None:
    """Session 51: `index add ~/home --index notes` (built from ~/work) with a readme.md in both said "already in the
    index; use --replace to update them", and the --replace it suggested put home's readme in the place of work's."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (work / "readme.md").write_text("# Work\n\nThe work project alpha.\n", encoding="utf-8")
    (home / "readme.md").write_text("# Home\n\nThe garden plans.\n", encoding="utf-8")
    assert run("index", "build", str(work), "--index", "notes", "--sparse-only", cwd=tmp_path).returncode == 0
    assert_clean_error(run("index", "add", str(home), "--index", "notes", cwd=tmp_path), 2,
                       f"'readme.md' in the index is another file ({(work / 'readme.md').as_uri()}; this one is "
                       f"{(home / 'readme.md').as_uri()}): --replace would put this one in its place")
    (work / "readme.md").write_text("# Work\n\nThe work project alpha, updated.\n", encoding="utf-8")
    result = run("index", "add", str(work), "--index", "notes", cwd=tmp_path)  # the same file, changed: as before
    assert result.returncode == 2 and "use --replace to update them" in result.stderr
    assert "another file" not in result.stderr


@needs_minilm
def test_sync_builds_a_new_sparse_only_index_when_asked(tmp_path: Path) -> None:
    """Session 51: `index sync FOLDER --index NEW` built a new index with vectors and had no `--sparse-only`, so a
    BM25-only index of a folder could not be kept by sync from the start."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "cats.md").write_text("# Cats\n\nCats sleep twelve hours a day.\n", encoding="utf-8")
    result = run("index", "sync", str(notes), "--index", "bm25", "--sparse-only", cwd=tmp_path)
    assert result.returncode == 0 and "no index bm25 yet: built it" in result.stdout, result.stderr
    assert json.loads((tmp_path / "indexes" / "bm25" / "manifest.json").read_text())["dense"] is None
    assert run("index", "sync", str(notes), "--index", "bm25", "--sparse-only", cwd=tmp_path).returncode == 0
    assert run("index", "build", str(notes), "--index", "full", cwd=tmp_path).returncode == 0
    assert_clean_error(run("index", "sync", str(notes), "--index", "full", "--sparse-only", cwd=tmp_path), 2,
                       "--sparse-only is for a new index; full has vectors, which a sync keeps")


def test_verify_json_for_a_scheduled_check(tmp_path: Path) -> None:
    """Session 51: `index verify` printed only lines for people; a scheduled check now reads {index, ok, problems}."""
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    assert run("index", "build", str(corpus), "--index", "v", "--sparse-only", cwd=tmp_path).returncode == 0
    result = run("index", "verify", "v", "--json", cwd=tmp_path)
    assert result.returncode == 0 and json.loads(result.stdout) | {"path": ""} == {
        "index": "v", "path": "", "deep": False, "ok": True, "problems": []}
    (tmp_path / "indexes" / "v" / "chunks.jsonl").write_text("")
    result = run("index", "verify", "v", "--json", "--deep", cwd=tmp_path)
    report = json.loads(result.stdout)
    assert result.returncode == 3 and report["ok"] is False and report["deep"] and report["problems"]


def test_bad_settings_and_missing_index(tmp_path: Path):
    assert_clean_error(run("search", "x", "--profile", "nope", cwd=tmp_path), 6, "unknown profile 'nope'")
    assert_clean_error(run("search", "x", "--retriever", "bm25", cwd=tmp_path), 3, "no index at")
    assert_clean_error(run("search", cwd=tmp_path), 2, "give either a QUESTION or --conversation")
    # the commands that answer check the index first: a greeting is not answered from a missing index, and a chat
    # stops before its first turn instead of at its first question (the conversation then lost)
    assert_clean_error(run("ask", "hello", "--index", "typo", cwd=tmp_path), 3, "no index at")
    chat = run("chat", "--index", "typo", "--history", "", cwd=tmp_path, stdin="hello\nwhat is bm25?\n")
    assert_clean_error(chat, 3, "no index at")
    assert "you>" not in chat.stdout
    # ... and the models a turn loads: a missing LLM is one line before the first question too
    assert run("index", "build", str(write_jsonl(tmp_path / "c.jsonl", CORPUS)), "--sparse-only", "--index", "s",
               cwd=tmp_path).returncode == 0
    chat = run("chat", "--index", "s", "--history", "", cwd=tmp_path, stdin="what is bm25?\n",
               env={"LOCAL_RAG_LLM__MODEL": "no-such-llm"})
    assert_clean_error(chat, 4, "no-such-llm")
    assert "you>" not in chat.stdout
    assert_clean_error(run("index", "info", cwd=tmp_path, env={"LOCAL_RAG_CHUNKER__SIZE": "abc"}), 6, "chunker.size")


def test_search_table_names_the_section_of_a_piece(tmp_path: Path):
    """`search`'s table shows where in a long file a hit is: its title and the section its chunk starts in."""
    folder = tmp_path / "docs"
    folder.mkdir()
    tides = "Neap tides come at the quarter moons, when the Sun and the Moon pull at right angles. " * 12
    lava = "A shield volcano is built by fluid lava flows that spread wide and form gentle slopes. " * 12
    (folder / "sea.md").write_text(f"# The sea\n\n## Volcanoes\n\n{lava}\n\n## Neap tides\n\n{tides}\n", encoding="utf-8")
    assert run("index", "build", str(folder), "--sparse-only", "--index", "p", cwd=tmp_path).returncode == 0
    result = run("search", "when are tides weak", "--index", "p", "--retriever", "bm25", "-k", "1", cwd=tmp_path,
                 env={"COLUMNS": "250"})
    assert result.returncode == 0, result.stderr
    assert "sea.md#s1" in result.stdout and "§ Neap tides" in result.stdout


def test_sparse_index_lifecycle_and_json_search(tmp_path: Path):
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    built = run("index", "build", str(corpus), "--sparse-only", "--index", "s", cwd=tmp_path)
    assert built.returncode == 0, built.stderr  # session 59: a crash (-11) once in CI, its stack cut from the report
    info = json.loads(run("index", "info", "--index", "s", "--json", cwd=tmp_path).stdout)
    assert info["passages"] == len(CORPUS) and info["dense"] is None
    result = run("search", "bm25 ranking function", "--index", "s", "--retriever", "bm25", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["hits"][0]["passage_id"] == "d3-0" and data["queries"][0]["mode"] == "lastturn"
    assert {"passage_id", "title", "score", "scores", "rank", "text"} <= set(data["hits"][0])
    # with the profile's retrievers the index's shape is followed: BM25 alone, said once (before: "has no dense
    # index: rebuild it")
    plain = run("search", "bm25 ranking function", "--index", "s", "--json", cwd=tmp_path)
    assert plain.returncode == 0 and "has no vectors (built with --sparse-only)" in plain.stderr, plain.stderr
    assert json.loads(plain.stdout)["hits"] == data["hits"]
    # words no passage holds: a sentence saying so and what to try (before: an empty table), and [] in JSON
    none = run("search", "zzzz qqqq", "--index", "s", cwd=tmp_path)
    assert none.returncode == 0 and none.stdout.startswith("no passage matches: zzzz qqqq (BM25 matches"), none.stdout
    assert json.loads(run("search", "zzzz qqqq", "--index", "s", "--json", cwd=tmp_path).stdout)["hits"] == []
    # --cross-encoder: a missing reranker is one line, or with reranker.fallback skip a warning and the same hits
    rerank = ("search", "bm25 ranking function", "--index", "s", "--retriever", "bm25", "--json", "--cross-encoder")
    missing = {"LOCAL_RAG_RERANKER__MODEL": "no-such-reranker", "LOCAL_RAG_RERANKER__FALLBACK": "error"}
    assert_clean_error(run(*rerank, cwd=tmp_path, env=missing), 4, "no-such-reranker")
    skipped = run(*rerank, cwd=tmp_path, env={**missing, "LOCAL_RAG_RERANKER__FALLBACK": "skip"})
    assert skipped.returncode == 0 and "warning: reranker no-such-reranker unavailable" in skipped.stderr
    assert json.loads(skipped.stdout)["hits"] == data["hits"]
    conv = tmp_path / "conv.json"
    conv.write_text(json.dumps([{"speaker": "user", "text": "tell me about cats"}, {"speaker": "agent", "text": "ok"},
                                {"speaker": "user", "text": "how long do they sleep"}]))
    result = run("search", "--conversation", str(conv), "--mode", "lastturn,questions", "--index", "s", "--retriever", "bm25", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hits"][0]["passage_id"] == "d1-1"
    conv.write_text('[{"speaker": "robot", "text": "hi"}]')
    assert_clean_error(run("search", "--conversation", str(conv), "--index", "s", cwd=tmp_path), 2, "unknown speaker 'robot'")
    assert run("index", "remove", "d3-0", "--index", "s", cwd=tmp_path).returncode == 0
    # add and sync follow the index as built: BM25 only, with no flag repeated
    more = write_jsonl(tmp_path / "more.jsonl", [{"_id": "d6-0", "title": "Owls", "text": "Owls hunt at night."}])
    added = run("index", "add", str(more), "--index", "s", cwd=tmp_path)
    assert added.returncode == 0 and f"now {len(CORPUS)} passages" in added.stdout, added.stderr
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# Owls\n\nOwls sleep by day.\n")
    assert run("index", "build", str(tmp_path / "notes"), "--sparse-only", "--index", "n", cwd=tmp_path).returncode == 0
    (tmp_path / "notes" / "a.md").write_text("# Owls\n\nOwls sleep by day and hunt mice at night.\n")
    synced = run("index", "sync", str(tmp_path / "notes"), "--index", "n", "--json", cwd=tmp_path)
    assert synced.returncode == 0 and json.loads(synced.stdout)["changed"] == ["a.md"], synced.stderr
    assert run("index", "verify", "--index", "s", cwd=tmp_path).returncode == 0
    (tmp_path / "indexes" / "s" / "chunks.jsonl").write_text("garbage\n")
    assert_clean_error(run("index", "verify", "--index", "s", cwd=tmp_path), 3, "problem")


def test_a_build_does_not_replace_an_index_of_other_documents_unless_told(tmp_path: Path):
    """`index build` under a name taken by an index of another corpus refused to replace it silently (an hour of
    embedding lost to a name reused by mistake): one line, the index untouched; the same corpus rebuilds, by its
    path as given or resolved, keeping the index's adaptation; --replace rebuilds from the other and drops it."""
    first = write_jsonl(tmp_path / "a.jsonl", CORPUS)
    other = write_jsonl(tmp_path / "b.jsonl", [{"_id": "z-0", "title": "Owls", "text": "Owls hunt at night."}])
    build = ("index", "build", "--sparse-only", "--index", "n")
    assert run(*build, str(first), cwd=tmp_path).returncode == 0
    before = (tmp_path / "indexes" / "n" / "manifest.json").read_bytes()
    assert_clean_error(run(*build, str(other), cwd=tmp_path), 2, f"index n exists, built from {first}")
    assert (tmp_path / "indexes" / "n" / "manifest.json").read_bytes() == before
    assert run(*build, "a.jsonl", cwd=tmp_path).returncode == 0  # the same file, relative
    adapted = tmp_path / "indexes" / "n.adapted.yaml"  # as `train adapt` leaves it: for a's documents
    adapted.write_text("reranker: {backend: bi-encoder, model: n-adapted}\npipeline: {cross_encoder: true}\n")
    assert run(*build, str(first), cwd=tmp_path).returncode == 0 and adapted.exists()  # a rebuild keeps it
    replaced = run(*build, str(other), "--replace", "--json", cwd=tmp_path)
    assert replaced.returncode == 0 and json.loads(replaced.stdout)["passages"] == 1, replaced.stderr
    assert not adapted.exists() and "its re-scorer was adapted to the documents of" in replaced.stderr


@needs_minilm
def test_index_built_with_another_model_is_refused(tmp_path: Path):
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    assert run("index", "build", str(corpus), "--index", "h", cwd=tmp_path).returncode == 0
    result = run("search", "cats", "--index", "h", cwd=tmp_path, env={"LOCAL_RAG_EMBEDDER__MODEL": "bge-m3", "LOCAL_RAG_EMBEDDER__BACKEND": "bge-m3"})
    assert result.returncode in (3, 4)  # the model is missing (4) or the index mismatches (3): both one line
    assert "Traceback" not in result.stderr and result.stderr.startswith("error: ")
    # a search chunks nothing: it reads the index's chunking from its manifest (session 51); opening the index with
    # other chunker settings (what the MTRAG evaluations do) is still refused, saying how to rebuild
    result = run("search", "cats", "--index", "h", "--profile", "cpu-test", cwd=tmp_path, env={"LOCAL_RAG_CHUNKER__SIZE": "128"})
    assert result.returncode == 0, result.stderr
    from local_rag.errors import IndexError_
    from local_rag.index import open_index
    from local_rag.settings import load_settings

    strict = load_settings("cpu-test", None, {"index": "h", "indexes_dir": str(tmp_path / "indexes"), "chunker": {"size": 128},
                                              "models_dir": str(MODELS)})
    with pytest.raises(IndexError_, match="rebuild it with `local-rag index build") as refused:
        open_index(strict)
    built = json.loads((tmp_path / "indexes" / "h" / "manifest.json").read_text())["chunker"]["size"]
    assert str(refused.value).endswith(f", or read it with its own chunking (LOCAL_RAG_CHUNKER__SIZE={built})")
    # an index embedded with another model (a folder path here, as `train adapt` users name theirs) says how to query it
    minilm = str(MODELS / "all-MiniLM-L6-v2")
    built = run("index", "build", str(corpus), "--index", "other", cwd=tmp_path, env={"LOCAL_RAG_EMBEDDER__MODEL": minilm})
    assert built.returncode == 0, built.stderr
    assert_clean_error(run("search", "cats", "--index", "other", cwd=tmp_path), 3, f"LOCAL_RAG_EMBEDDER__MODEL={minilm})")
    found = run("search", "cats", "--index", "other", "--json", cwd=tmp_path, env={"LOCAL_RAG_EMBEDDER__MODEL": minilm})
    assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr
    # `index remove` keeps the dense part (it once rewrote the index without its vectors: search then failed)
    assert run("index", "remove", CORPUS[0]["_id"], "--index", "h", cwd=tmp_path).returncode == 0
    assert (tmp_path / "indexes" / "h" / "dense" / "faiss.index").exists()
    assert run("index", "verify", "--index", "h", "--deep", cwd=tmp_path).returncode == 0
    result = run("search", "cats", "--index", "h", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert CORPUS[0]["_id"] not in {hit["passage_id"] for hit in json.loads(result.stdout)["hits"]}


def test_eval_retrieval_on_a_small_mtrag_shaped_task(tmp_path: Path):
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    assert run("index", "build", str(corpus), "--sparse-only", "--index", "mtrag-toy", cwd=tmp_path).returncode == 0
    tasks = tmp_path / "tasks" / "toy"
    (tasks / "qrels").mkdir(parents=True)
    write_jsonl(tasks / "toy_lastturn.jsonl", [{"_id": "c1<::>1", "text": "|user|: what is bm25"}, {"_id": "c2<::>1", "text": "|user|: tell me about dogs"}])
    (tasks / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nc1<::>1\td3-0\t1\nc2<::>1\td2-0\t1\nc2<::>1\td9-9\t1\n")
    out = tmp_path / "out"
    result = run("eval", "retrieval", "--tasks-root", str(tmp_path / "tasks"), "--domains", "toy", "--retriever", "bm25", "--out", str(out), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    scores = json.loads((out / "scores.json").read_text())
    metrics = scores["domains"]["toy"]["metrics"]
    assert metrics["queries"] == 2 and metrics["recall_10"] == pytest.approx(0.75) and metrics["ndcg_cut_1"] == pytest.approx(1.0)
    run_lines = [json.loads(line) for line in (out / "run-toy.jsonl").read_text().splitlines()]
    assert run_lines[0]["task_id"] == "c1<::>1" and run_lines[0]["Collection"] == "toy"
    assert 0 < len(run_lines[0]["contexts"]) <= 10 and set(run_lines[0]["contexts"][0]) == {"document_id", "score"}
    assert "| toy | 2 |" in (out / "scores.md").read_text()
    # a misspelt mode was dropped (the run used lastturn and was labelled "bm25_lastrun"); a misspelt domain or a
    # missing index of a later domain failed after the earlier domains ran: now refused before anything runs
    for args, code, message in ((["--mode", "lastrun"], 2, "--mode: unknown 'lastrun'; valid: lastturn"),
                                (["--domains", "toy,tox"], 2, "no task folder"),
                                (["--domains", "toy", "--index-prefix", "other-"], 3, "no index at")):
        result = run("eval", "retrieval", "--tasks-root", str(tmp_path / "tasks"), "--domains", "toy", "--retriever",
                     "bm25", *args, "--out", str(tmp_path / "refused"), cwd=tmp_path)
        assert_clean_error(result, code, message)
        assert not (tmp_path / "refused").exists()

    # an interrupted run (one query written, the next cut mid-line) resumes: the written query is kept, not rerun
    first = (out / "run-toy.jsonl").read_text().splitlines()[0]
    (out / "run-toy.jsonl").write_text(first + "\n" + '{"task_id": "c2<::>1", "Coll')
    result = run("eval", "retrieval", "--tasks-root", str(tmp_path / "tasks"), "--domains", "toy", "--retriever", "bm25", "--out", str(out), "--json", "--resume", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    resumed = json.loads((out / "scores.json").read_text())["domains"]["toy"]
    assert resumed["resumed"] == 1 and resumed["metrics"] == metrics
    assert [json.loads(line)["task_id"] for line in (out / "run-toy.jsonl").read_text().splitlines()] == ["c1<::>1", "c2<::>1"]


def test_runs_of_generation_tasks_are_compared_against_their_gold_contexts(tmp_path: Path):
    """`eval retrieval --generation-tasks` records the tasks file in scores.json, and `eval compare` scores such runs
    against those tasks' gold contexts (it read the retrieval tasks' qrels, which hold no unanswerable task)."""
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    assert run("index", "build", str(corpus), "--sparse-only", "--index", "mtrag-govt", cwd=tmp_path).returncode == 0
    from local_rag.mtrag import COLLECTIONS

    def task(tid: str, turns: list[str], gold: list[str]) -> dict[str, object]:
        messages = [{"speaker": "user" if i % 2 == 0 else "agent", "text": t} for i, t in enumerate(turns)]
        return {"task_id": tid, "Collection": COLLECTIONS["govt"], "input": messages,
                "contexts": [{"document_id": d} for d in gold]}

    gen = write_jsonl(tmp_path / "tasks.jsonl", [
        task("g1<::>2", ["tell me about cats", "Cats purr.", "how long do they sleep"], ["d1-1"]),
        task("g2<::>1", ["what is bm25"], ["d3-0"]),
        task("g3<::>1", ["who won the cup"], [])])  # unanswerable: no gold, not scored
    for folder, mode in (("a", "lastturn"), ("b", "questions")):
        result = run("eval", "retrieval", "--generation-tasks", str(gen), "--domains", "govt", "--retriever", "bm25",
                     "--mode", mode, "--out", str(tmp_path / folder), "--json", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "a" / "scores.json").read_text())["settings"]["generation_tasks"] == str(gen.resolve())
    result = run("eval", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--resamples", "50", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["tasks"] == 2 and payload["unit"] == "queries"
    ndcg1 = {r["metric"]: r for r in payload["rows"]}["nDCG@1"]
    assert ndcg1["b"] >= ndcg1["a"]  # the whole conversation finds the cat's sleep where "how long do they sleep" may not
    # a run of the retrieval tasks beside one of generation tasks: not the same gold, so one line naming both ways out
    scores = json.loads((tmp_path / "b" / "scores.json").read_text())
    scores["settings"]["generation_tasks"] = None
    (tmp_path / "b" / "scores.json").write_text(json.dumps(scores))
    assert_clean_error(run("eval", "compare", str(tmp_path / "a"), str(tmp_path / "b"), cwd=tmp_path), 2,
                       "--generation-tasks FILE or --tasks-root DIR")
    named = run("eval", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--generation-tasks", str(gen), "--json",
                "--resamples", "50", cwd=tmp_path)
    assert named.returncode == 0 and json.loads(named.stdout)["rows"] == payload["rows"], named.stderr
    assert_clean_error(run("eval", "compare", str(tmp_path / "a"), str(tmp_path / "b"), "--generation-tasks", str(gen),
                           "--tasks-root", str(tmp_path), cwd=tmp_path), 2, "not both")


def test_doctor_json(tmp_path: Path):
    result = run("doctor", "--json", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert {"python", "packages", "gpus", "faiss", "models", "onnxruntime_providers", "llama_cpp", "ocr"} <= set(report)
    assert "cpu-test" in report["profiles"]
    if report["ocr"]:  # the ocr extra (session 54): which RapidOCR reads scanned pages
        assert set(report["ocr"]) == {"rapidocr-onnxruntime", "pypdfium2"} and all(report["ocr"].values())
    # session 55: which document formats this installation reads (the docs extra is installed for the tests)
    assert report["documents"]["missing"] == {} and {".pdf", ".doc", ".msg", ".vtt"} <= set(report["documents"]["readable"])
    assert report["documents"]["chat_exports"] == ["Slack", "Discord", "Telegram", "Google Chat", "Mattermost", "Google Keep", "ChatGPT",
                                                       "Claude"]  # session 57
    assert report["documents"]["code"] == 89  # sessions 58-59: suffixes and manifest names `index build --code` reads
    assert ("documents     53 formats and Slack, Discord, Telegram, Google Chat, Mattermost, Google Keep, ChatGPT, Claude exports read, source code "
            "and configuration (89 kinds of file) with --code (the docs extra installed)" in run("doctor", cwd=ROOT).stdout)


def test_a_crash_in_native_code_prints_the_python_stack_that_led_to_it(tmp_path: Path):
    """`local-rag`'s entry point turns on faulthandler: a segfault inside native code (here a NULL read through
    ctypes, standing in for llama.cpp's CUDA load crash of sessions 25-37) reports the Python frames leading to it."""
    code = ("import ctypes, importlib\nm = importlib.import_module('local_rag.cli.main')\n"
            "def load_the_model(**kwargs):\n    ctypes.string_at(0)\n"
            "m.cli.main = load_the_model\nm.main()\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=60)
    assert result.returncode != 0
    assert "Fatal Python error: Segmentation fault" in result.stderr and "load_the_model" in result.stderr


def test_a_rebuild_hint_names_the_folder_the_index_was_built_from(tmp_path: Path):
    """Session 48: "rebuild it with `local-rag index build CORPUS --index notes`" left the user to remember the path;
    now the folder or file the index follows is named when it is there from where the command runs."""
    (tmp_path / "my docs").mkdir()
    (tmp_path / "my docs" / "a.md").write_text("# Rivers\n\nThe river gauge read high in April.\n")
    assert run("index", "build", "my docs", "--index", "notes", "--sparse-only", cwd=tmp_path).returncode == 0
    assert_clean_error(run("train", "adapt", "--index", "notes", cwd=tmp_path), 3,
                       "has no dense index (it was built sparse only): rebuild it with `local-rag index build 'my docs' "
                       "--index notes`")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = run("train", "adapt", "--index", "notes", cwd=elsewhere,
                env={"LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes")})
    assert_clean_error(moved, 3, "`local-rag index build CORPUS --index notes`")


def test_index_info_verify_rebuild_take_the_name_as_delete_does_and_rebuild_a_sparse_only_index(tmp_path: Path):
    """Session 50: `index info notes` was "Got unexpected extra argument (notes)" (only `--index notes` worked, while
    `index delete notes` takes the name); `index rebuild` of a --sparse-only index (after changing BM25's k1) was
    "has no dense index (it was built sparse only): rebuild it with `index build`", and printed "FAISS None"."""
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    env = {"LOCAL_RAG_INDEXES_DIR": str(tmp_path / "indexes"), "LOCAL_RAG_MODELS_DIR": str(MODELS)}
    corpus = str(write_jsonl(tmp_path / "c.jsonl", CORPUS))
    runner = CliRunner()
    assert runner.invoke(cli, ["index", "build", corpus, "--sparse-only", "--index", "notes"], env=env).exit_code == 0
    res = runner.invoke(cli, ["index", "info", "notes", "--json"], env=env)
    assert res.exit_code == 0 and json.loads(res.output)["name"] == "notes"
    res = runner.invoke(cli, ["index", "verify", "notes"], env={**env, "LOCAL_RAG_INDEX": "other"})  # NAME wins
    assert res.exit_code == 0 and res.output.strip().endswith("notes: ok")
    res = runner.invoke(cli, ["index", "info", "notes", "--index", "other"], env=env)
    assert res.exit_code == 2 and res.output.strip() == "error: two indexes named: 'notes' and --index 'other'; give one"
    res = runner.invoke(cli, ["index", "rebuild", "notes"], env={**env, "LOCAL_RAG_SPARSE__K1": "1.5"})
    assert res.exit_code == 0, res.output
    assert "'k1': 1.5" in res.output and res.output.strip().endswith("no vectors (sparse only)")
    res = runner.invoke(cli, ["search", "cats", "--index", "notes"], env={**env, "LOCAL_RAG_SPARSE__K1": "1.5"})
    assert res.exit_code == 0, res.output  # the rebuilt BM25 is the one the settings ask for
    one = str(write_jsonl(tmp_path / "one.jsonl", CORPUS[:1]))
    assert runner.invoke(cli, ["index", "build", one, "--sparse-only", "--index", "one"], env=env).exit_code == 0
    res = runner.invoke(cli, ["index", "remove", CORPUS[0]["_id"], "--index", "one"], env=env)
    assert res.exit_code == 2 and res.output.strip() == (
        "error: removing these would leave index one empty; delete it instead (`local-rag index delete one`)")


def test_counts_of_tasks_and_candidates_below_one_are_refused_before_anything_runs(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch):
    """Session 50: `eval retrieval --limit -1` (or `eval generation --limit -2`, `--candidates 0`) was taken as given:
    a negative limit dropped tasks from the end of a sha1 order; `--candidates 0` was refused as a setting only."""
    from click.testing import CliRunner

    from local_rag.cli.main import cli

    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in (["eval", "retrieval", "--limit", "-1"], ["eval", "retrieval", "--candidates", "0"],
                 ["eval", "generation", "--setting", "reference", "--predictions", "p.jsonl", "--limit", "-2"],
                 ["train", "support", "--limit", "0"], ["train", "generator", "--name", "g", "--limit", "-1"]):
        res = runner.invoke(cli, args)
        option = next(a for a in args if a in ("--limit", "--candidates"))
        assert res.exit_code == 2 and f"Invalid value for '{option}'" in res.output, (args, res.output)
    assert not list(tmp_path.iterdir())


@needs_minilm
def test_an_index_built_with_its_own_chunk_size_is_searched_and_added_to_as_built(tmp_path: Path) -> None:
    """Session 51: `index build docs --chunk-size 32 --chunk-overlap 8` (options of the build) made an index that
    `search`, `ask`, `chat`, `serve`, `index add`, `index sync` and `train adapt` refused ("was chunked with {'size':
    32, ...}, settings say {'size': 256, ...}: rebuild it") unless the same sizes were set again for each. The index's
    chunking is now read from its manifest: it is searched, and new documents are chunked as the others were."""
    docs = tmp_path / "docs"
    docs.mkdir()
    words = " ".join(f"word{i}" for i in range(120))
    (docs / "cats.md").write_text(f"# Cats\n\nCats sleep twelve to sixteen hours a day. {words}\n")
    (docs / "dogs.md").write_text("# Dogs\n\nDogs bark at strangers.\n")
    assert run("index", "build", str(docs), "--index", "small", "--chunk-size", "32", "--chunk-overlap", "8",
               cwd=tmp_path).returncode == 0
    manifest = tmp_path / "indexes" / "small" / "manifest.json"
    chunked = json.loads(manifest.read_text())["chunker"]
    assert (chunked["size"], chunked["overlap"]) == (32, 8)
    result = run("search", "how long do cats sleep", "--index", "small", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hits"][0]["doc_id"] == "cats.md"
    (docs / "birds.md").write_text(f"# Birds\n\nBirds sing at dawn. {words}\n")
    result = run("index", "sync", str(docs), "--index", "small", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    after = json.loads(manifest.read_text())
    chunks = [json.loads(line) for line in (tmp_path / "indexes" / "small" / "chunks.jsonl").read_text().splitlines()]
    birds = [c for c in chunks if c["passage_id"].startswith("birds.md")]
    cats = [c for c in chunks if c["passage_id"].startswith("cats.md")]
    assert after["chunker"] == chunked and len(birds) >= 10 and len(cats) >= 10  # 32-token chunks (256: 2 each)
    # an explicit other chunking for a build stays the build's (a rebuild is how an index changes its chunking)
    result = run("index", "build", str(docs), "--index", "small", "--chunk-size", "64", "--chunk-overlap", "8",
                 cwd=tmp_path)
    assert result.returncode == 0 and json.loads(manifest.read_text())["chunker"]["size"] == 64
    assert "longer than" not in result.stderr
    # chunks longer than the embedder reads: its vectors would see their start only; the build says so
    result = run("index", "build", str(docs), "--index", "long", "--chunk-size", "300", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert ("note: chunks of 300 tokens are longer than all-MiniLM-L6-v2 reads (256): its vectors see the first 256 "
            "tokens of each, BM25 all of it; --chunk-size 256 or less keeps whole chunks in both") in result.stderr
    result = run("index", "build", str(docs), "--index", "long-bm25", "--chunk-size", "300", "--sparse-only", cwd=tmp_path)
    assert result.returncode == 0 and "longer than" not in result.stderr


def test_a_question_of_dash_is_read_from_standard_input(tmp_path: Path) -> None:
    """Session 51: `echo "..." | local-rag search -` (or `ask -`) searched for "-" itself and answered it, while
    `--conversation -` read standard input. Now `-` reads the question there; an empty one is refused."""
    corpus = write_jsonl(tmp_path / "c.jsonl", CORPUS)
    assert run("index", "build", str(corpus), "--index", "s", "--sparse-only", cwd=tmp_path).returncode == 0
    result = run("search", "-", "--index", "s", "--json", cwd=tmp_path, stdin="how do cats spend the day\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["queries"][0]["text"] == "how do cats spend the day"
    for command in ("search", "ask"):
        assert_clean_error(run(command, "-", "--index", "s", cwd=tmp_path, stdin="  \n"), 2, "the question is empty")


def test_an_index_of_another_language_is_searched_with_its_own_bm25_and_unspaced_text_is_named(tmp_path: Path) -> None:
    """Session 51: an index built with `LOCAL_RAG_SPARSE__STEMMER=german` (German documents) was refused by `search`,
    `ask`, `chat`, `serve`, `index add` and `sync` ("has BM25 stemmer='german', settings say 'english': rebuild it")
    unless each was given the same settings; `index rebuild` (for a new FAISS factory, a repair) turned it back to
    English without a word. And a folder of Chinese documents was built without a word, then found nothing."""
    docs = tmp_path / "de"
    docs.mkdir()
    (docs / "katzen.md").write_text("# Katzen\n\nKatzen schlafen zwölf bis sechzehn Stunden am Tag.\n", encoding="utf-8")
    (docs / "hunde.md").write_text("# Hunde\n\nHunde bellen Fremde an.\n", encoding="utf-8")
    german = {"LOCAL_RAG_SPARSE__STEMMER": "german", "LOCAL_RAG_SPARSE__STOPWORDS": "de"}
    assert run("index", "build", str(docs), "--index", "de", "--sparse-only", cwd=tmp_path, env=german).returncode == 0
    result = run("search", "wie lange schläft eine Katze", "--index", "de", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [h["passage_id"] for h in json.loads(result.stdout)["hits"]] == ["katzen.md"]  # "schläft" stems as "schlafen"
    (docs / "voegel.md").write_text("# Vögel\n\nVögel singen morgens.\n", encoding="utf-8")
    assert run("index", "sync", str(docs), "--index", "de", cwd=tmp_path).returncode == 0
    manifest = tmp_path / "indexes" / "de" / "manifest.json"
    assert json.loads(manifest.read_text())["sparse"]["stemmer"] == "german"
    result = run("index", "rebuild", "de", cwd=tmp_path)  # its settings are the new parameters, and it says so
    assert result.returncode == 0 and "note: BM25 stemmer 'german' -> 'english', stopwords 'de' -> 'en'" in result.stderr
    assert run("index", "rebuild", "de", cwd=tmp_path, env=german).returncode == 0
    from local_rag.errors import IndexError_
    from local_rag.index import open_index
    from local_rag.settings import load_settings

    strict = load_settings("cpu-test", None, {"index": "de", "indexes_dir": str(tmp_path / "indexes"),
                                              "models_dir": str(MODELS), "dense": {"enabled": False},
                                              "retrieval": {"retrievers": ["bm25"]}})
    with pytest.raises(IndexError_, match=r"or read it with its own \(LOCAL_RAG_SPARSE__STEMMER=german\)$"):
        open_index(strict)

    zh = tmp_path / "zh"
    zh.mkdir()
    (zh / "cats.md").write_text("# 猫\n\n猫每天睡十二到十六个小时。\n", encoding="utf-8")
    (zh / "dogs.md").write_text("# Dogs\n\nDogs bark at strangers.\n", encoding="utf-8")
    result = run("index", "build", str(zh), "--index", "zh", "--sparse-only", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: 1 of 2 chunks are mostly in a script written without spaces (Chinese, Japanese, Thai...)" in result.stdout
    assert "all-MiniLM-L6-v2 reads English" not in result.stdout  # a sparse-only index has no embedder to name

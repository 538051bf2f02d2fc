from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

import pytest

from local_rag.corpus.readers import CorpusReport, read_corpus
from local_rag.errors import BadInputError

from .conftest import CORPUS, MTRAG, needs_mtrag, write_jsonl


def test_jsonl_gz_zip_and_beir_folder_read_the_same(tmp_path: Path, corpus_file: Path):
    plain = list(read_corpus(corpus_file))
    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(gzip.compress(corpus_file.read_bytes()))
    zipped = tmp_path / "c.jsonl.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.write(corpus_file, "clapnq.jsonl")
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_bytes(corpus_file.read_bytes())
    for other in (gz, zipped, beir):
        assert list(read_corpus(other)) == plain
    assert [p.id for p in plain] == [r["_id"] for r in CORPUS]
    assert plain[0].title == "Cats" and plain[0].url == "u1" and plain[0].doc_id == "d1"


def test_corpus_hash_is_order_independent(tmp_path: Path):
    a, b = CorpusReport(), CorpusReport()
    list(read_corpus(write_jsonl(tmp_path / "a.jsonl", CORPUS), report=a))
    list(read_corpus(write_jsonl(tmp_path / "b.jsonl", CORPUS[::-1]), report=b))
    assert a.corpus_hash == b.corpus_hash and a.passages == len(CORPUS)
    c = CorpusReport()
    list(read_corpus(write_jsonl(tmp_path / "c.jsonl", [*CORPUS[:-1], {**CORPUS[-1], "text": "changed"}]), report=c))
    assert c.corpus_hash != a.corpus_hash


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "jsonl:2: not valid JSON"),
        ('["a list"]', "jsonl:2: expected a JSON object"),
        ('{"title": "no id", "text": "x"}', "jsonl:2: missing '_id'"),
        ('{"_id": "e", "text": "   "}', "jsonl:2: empty text"),
        ('{"_id": "e", "text": 5}', "jsonl:2: missing or non-string 'text'"),
        ('{"_id": "d1-0", "text": "again"}', "duplicate passage id 'd1-0'"),
    ],
)
def test_bad_lines_name_file_and_line_and_can_be_skipped(tmp_path: Path, line: str, message: str):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(CORPUS[0]) + "\n" + line + "\n" + json.dumps(CORPUS[2]) + "\n")
    with pytest.raises(BadInputError, match=message):
        list(read_corpus(path))
    report = CorpusReport()
    ids = [p.id for p in read_corpus(path, skip_bad=True, report=report)]
    assert ids == ["d1-0", "d2-0"] and len(report.skipped) == 1


def test_wrong_encoding_and_missing_file(tmp_path: Path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps({"_id": "x", "text": "caf\u00e9"}, ensure_ascii=False).encode("latin-1") + b"\n")
    with pytest.raises(BadInputError, match="latin1.jsonl:1: not UTF-8"):
        list(read_corpus(path))
    with pytest.raises(BadInputError, match="corpus not found"):
        list(read_corpus(tmp_path / "nope.jsonl"))
    bad_zip = tmp_path / "x.jsonl.zip"
    bad_zip.write_bytes(b"not a zip")
    with pytest.raises(BadInputError, match="not a valid zip"):
        list(read_corpus(bad_zip))


def test_folder_of_documents(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# Alpha title\n\nSome markdown text.")
    (tmp_path / "sub" / "b.txt").write_text("Plain text file.")
    (tmp_path / "c.html").write_text(
        "<html><head><title>Gamma</title><style>p{}</style></head><body><p>Hello <b>world</b></p>"
        "<script>alert(1)</script><p>Second &amp; last</p></body></html>"
    )
    (tmp_path / "ignored.bin").write_bytes(b"\x00\x01")
    passages = {p.id: p for p in read_corpus(tmp_path)}
    assert set(passages) == {"a.md", "sub/b.txt", "c.html"}
    assert passages["a.md"].title == "Alpha title"
    assert passages["c.html"].title == "Gamma"
    assert "alert" not in passages["c.html"].text and "Second & last" in passages["c.html"].text
    assert passages["sub/b.txt"].url.startswith("file://")


@needs_mtrag
def test_official_pool_file_reads_cleanly():
    report = CorpusReport()
    passages = list(read_corpus(MTRAG / "corpora" / "pool" / "govt.jsonl", report=report))
    assert len(passages) == 447 and not report.skipped


def test_mtrag_document_ids_group_passages_of_one_page():
    # ClapNQ ids put the Wikipedia page id before an underscore: two passages of one page are one document
    from local_rag.corpus.readers import mtrag_doc_id

    assert mtrag_doc_id("502521937_10538-10692-0-150") == mtrag_doc_id("502521937_11181-12353-0-1168") == "502521937"
    assert mtrag_doc_id("ibmcld_00474-7885-8455") == "ibmcld_00474"
    assert mtrag_doc_id("100045-0-277") == "100045"
    assert mtrag_doc_id("0027bff8d2a891ff-41576-43247") == "0027bff8d2a891ff"

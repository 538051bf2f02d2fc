"""The chunk list read by offset (`local_rag.index.chunkfile`): the same rows as parsing the whole file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local_rag.errors import IndexError_
from local_rag.index.chunkfile import BLOCK, ChunkFile, line_starts
from local_rag.records import Chunk


def _chunks(n: int) -> list[Chunk]:
    return [Chunk(id=f"c{i}", passage_id=f"p{i // 2}", doc_id="d", text=f"text {i} é\u2028 \"quoted\"") for i in range(n)]


def _write(path: Path, chunks: list[Chunk], last_newline: bool = True) -> Path:
    text = "".join(json.dumps(c.to_json(), ensure_ascii=False) + "\n" for c in chunks)
    path.write_text(text if last_newline else text[:-1], encoding="utf-8")
    return path


@pytest.mark.parametrize("last_newline", [True, False])
def test_rows_equal_a_full_parse(tmp_path: Path, last_newline: bool) -> None:
    chunks = _chunks(7)
    file = ChunkFile(_write(tmp_path / "chunks.jsonl", chunks, last_newline))
    assert len(file) == 7 and list(file) == chunks
    assert file[0] == chunks[0] and file[-1] == chunks[-1] and file[2:5] == chunks[2:5] and file[::3] == chunks[::3]
    assert file.nbytes() == 8 * 8
    with pytest.raises(IndexError):
        file[7]


def test_empty_file_and_line_ends_across_blocks(tmp_path: Path) -> None:
    assert len(ChunkFile(_write(tmp_path / "empty.jsonl", []))) == 0
    blocks = [b"x" * 5 + b"\n" + b"ab", b"c\n", b"", b"\nz"]  # a line across blocks, an empty line, no last newline
    assert line_starts(blocks).tolist() == [0, 6, 10, 11, 12]
    assert line_starts([b"a\n"]).tolist() == [0, 2] and line_starts([]).tolist() == [0]
    path = tmp_path / "big.jsonl"
    _write(path, _chunks(3))
    path.write_bytes(path.read_bytes()[:-1] + b" " * BLOCK + b"\n")  # a row longer than one read block
    assert len(ChunkFile(path)) == 3 and ChunkFile(path)[2] == _chunks(3)[2]


def test_missing_file_and_corrupt_row_give_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(IndexError_, match="missing or unreadable"):
        ChunkFile(tmp_path / "nope.jsonl")
    path = _write(tmp_path / "chunks.jsonl", _chunks(3))
    path.write_bytes(path.read_bytes().replace(b'"id": "c1"', b'"id": c1!'))
    file = ChunkFile(path)
    assert file[0].id == "c0"
    with pytest.raises(IndexError_, match="row 1 is not a chunk"):
        file[1]


class _Counting(list):  # type: ignore[type-arg]
    reads = 0

    def __getitem__(self, i):  # type: ignore[no-untyped-def]
        _Counting.reads += 1
        return super().__getitem__(i)


def test_passages_from_rows_stop_reading_once_the_top_k_is_settled() -> None:
    """Rows best first: the early stop gives exactly the full scan's passages (ties at the k-th score included) and
    reads fewer rows; rows out of order are scanned whole."""
    import types

    import numpy as np

    from local_rag.retrieve.retrievers import BM25Retriever

    rng = np.random.default_rng(5)
    chunks = _Counting(Chunk(id=f"c{i}", passage_id=f"p{rng.integers(0, 40)}", doc_id="d", text="t") for i in range(300))
    retriever = object.__new__(BM25Retriever)
    retriever.folder = types.SimpleNamespace(chunks=chunks)  # type: ignore[assignment]
    for _ in range(20):
        scores = np.sort(rng.integers(0, 30, 300).astype(np.float32))[::-1]  # many ties
        rows = rng.permutation(300)
        rows[-5:] = -1
        best: dict[str, tuple[float, str]] = {}
        for r, s in zip(rows.tolist(), scores.tolist(), strict=True):
            c = chunks[r] if r >= 0 else None
            if c is not None and (c.passage_id not in best or s > best[c.passage_id][0]):
                best[c.passage_id] = (s, c.id)
        want = sorted(((-s, pid, cid) for pid, (s, cid) in best.items()))[:10]
        _Counting.reads = 0
        got = retriever._to_passages(rows, scores, 10)
        assert [(-h.score, h.passage_id, h.chunk_id) for h in got] == want
        assert _Counting.reads < 295
        _Counting.reads = 0
        shuffled = rng.permutation(300)
        got = retriever._to_passages(rows[shuffled], scores[shuffled], 10)
        # (which chunk of a passage stands for it on a tied score follows the row order, as it always did)
        assert [(-h.score, h.passage_id) for h in got] == [w[:2] for w in want] and _Counting.reads == 295

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from local_rag.corpus.chunking import Chunker, WhitespaceTokenizer, load_tokenizer, windows
from local_rag.records import Passage

from .conftest import MODELS, needs_minilm


@given(n=st.integers(0, 3000), size=st.integers(2, 600), data=st.data())
@settings(max_examples=300, deadline=None)
def test_windows_cover_with_exact_overlap(n: int, size: int, data: st.DataObject):
    overlap = data.draw(st.integers(0, size - 1))
    spans = windows(n, size, overlap)
    assert spans[0][0] == 0 and spans[-1][1] == n
    for start, end in spans:
        assert 0 <= start < end or n == 0
        assert end - start <= size
    for (s1, e1), (s2, _e2) in zip(spans, spans[1:], strict=False):
        assert s2 == s1 + size - overlap  # constant stride
        assert e1 - s2 == overlap
    covered = set()
    for start, end in spans:
        covered.update(range(start, end))
    assert covered == set(range(n))


def test_chunker_whitespace_texts_and_ids():
    passage = Passage("p1", " ".join(f"w{i}" for i in range(10)), title="T", doc_id="d1")
    chunks = list(Chunker(WhitespaceTokenizer(), size=4, overlap=1).chunk([passage]))
    assert [c.text for c in chunks] == ["w0 w1 w2 w3", "w3 w4 w5 w6", "w6 w7 w8 w9"]
    assert [c.id for c in chunks] == ["p1#0", "p1#1", "p1#2"]
    assert {c.passage_id for c in chunks} == {"p1"} and {c.doc_id for c in chunks} == {"d1"}
    assert all(passage.text[c.start : c.end] == c.text for c in chunks)


def test_short_passage_is_one_chunk_with_its_whole_text():
    passage = Passage("p", "  hello   world \n")
    (chunk,) = Chunker(WhitespaceTokenizer(), 8, 2).chunk([passage])
    assert chunk.text == passage.text


@needs_minilm
@given(words=st.lists(st.text(alphabet="abcdefghij éü,.-'", min_size=1, max_size=12), min_size=1, max_size=400))
@settings(max_examples=40, deadline=None)
def test_real_tokenizer_windows_are_substrings_with_configured_overlap(words: list[str]):
    tokenizer = load_tokenizer(MODELS / "all-MiniLM-L6-v2")
    text = " ".join(words)
    if not text.strip():
        return
    size, overlap = 32, 8
    chunks = list(Chunker(tokenizer, size, overlap).chunk([Passage("p", text)]))
    offsets = tokenizer.offsets([text])[0]
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        inside = [o for o in offsets if o[0] >= chunk.start and o[1] <= chunk.end]
        assert len(inside) <= size
    for a, b in zip(chunks, chunks[1:], strict=False):
        shared = [o for o in offsets if o[0] >= b.start and o[1] <= a.end]
        assert len(shared) == overlap


@needs_minilm
def test_a_text_longer_than_a_block_is_tokenized_in_blocks_to_the_same_chunks(monkeypatch) -> None:
    """Session 51: a 15 MB record was tokenized whole (2.5 GB of memory, 17 s); longer than `BLOCK_CHARS` it is now
    tokenized in blocks cut at whitespace, where the pre-tokenizer splits anyway: the same offsets and chunks
    (the 15 MB record: byte-identical chunks.jsonl, 743 MB, 11 s)."""
    from local_rag.corpus import chunking

    words = "alpha beta, gamma. delta épsilon zeta-eta theta's iota kappa1 lambda\n".split(" ")
    text = " ".join(words[i % len(words)] for i in range(6000)) + " " + "x" * 300
    tokenizer = load_tokenizer(MODELS / "all-MiniLM-L6-v2")
    whole = tokenizer.offsets([text])[0]
    monkeypatch.setattr(chunking, "BLOCK_CHARS", 997)
    assert tokenizer.offsets(["short text", text])[1] == whole
    chunker = Chunker(tokenizer, size=64, overlap=16)
    passage = Passage("p", text)
    blocked = [c.text for c in chunker.chunk([passage])]
    monkeypatch.setattr(chunking, "BLOCK_CHARS", 10**9)
    assert blocked == [c.text for c in chunker.chunk([passage])] and len(blocked) > 20

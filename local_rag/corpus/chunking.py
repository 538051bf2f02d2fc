"""Re-chunking passages into overlapping token windows of the embedding model's tokenizer.

A passage of ``n`` tokens gives windows starting at ``0, step, 2*step, ...`` with ``step = size - overlap``; the last
window ends at ``n``. Windows are cut back to character offsets of the original text, so a chunk's text is a
substring of its passage and every chunk keeps its passage id and document id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from local_rag._optional import require
from local_rag.errors import ModelError
from local_rag.records import Chunk, Passage


class Tokenizer(Protocol):
    """What the chunker needs: character offsets of each token of each text."""

    name: str

    def offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]: ...


class WhitespaceTokenizer:
    """Tokens are runs of non-space characters. Dependency-free; for tests and for BM25-only indexes."""

    name = "whitespace"

    def offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        return [[m.span() for m in re.finditer(r"\S+", text)] for text in texts]


BLOCK_CHARS = 100_000  # a longer text is tokenized in blocks (`HFTokenizer._long_offsets`); MTRAG's passages are far shorter


class HFTokenizer:
    """A Hugging Face fast tokenizer read from a model folder's ``tokenizer.json`` (no transformers needed)."""

    def __init__(self, folder: str | Path, name: str = "") -> None:
        tokenizers = require("tokenizers", "chunking with the embedding model's tokenizer")
        path = Path(folder) / "tokenizer.json"
        if not path.exists():
            raise ModelError(f"no tokenizer.json in {folder}: cannot chunk with this model's tokenizer")
        self._tok = tokenizers.Tokenizer.from_file(str(path))
        self._tok.no_truncation()
        self._tok.no_padding()
        self.name = name or Path(folder).name

    def offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        texts = list(texts)
        short = [i for i, text in enumerate(texts) if len(text) <= BLOCK_CHARS]
        encodings = self._tok.encode_batch([texts[i] for i in short], add_special_tokens=False)
        out: list[list[tuple[int, int]] | None] = [None] * len(texts)
        for i, enc in zip(short, encodings, strict=True):
            out[i] = [span for span in enc.offsets if span[1] > span[0]]
        return [spans if spans is not None else self._long_offsets(texts[i]) for i, spans in enumerate(out)]

    def _long_offsets(self, text: str) -> list[tuple[int, int]]:
        """The offsets of a text longer than `BLOCK_CHARS`, tokenized in blocks cut at whitespace (where the
        pre-tokenizer splits anyway: the same tokens). Whole, a 15 MB record took 2.5 GB to tokenize (session 51)."""
        spans: list[tuple[int, int]] = []
        start = 0
        while start < len(text):
            end = min(start + BLOCK_CHARS, len(text))
            if end < len(text):
                space = next((j for j in range(end, max(start, end - 10_000), -1) if text[j - 1].isspace()), end)
                end = space
            enc = self._tok.encode(text[start:end], add_special_tokens=False)
            spans.extend((a + start, b + start) for a, b in enc.offsets if b > a)
            start = end
        return spans


def load_tokenizer(name_or_folder: str | Path, label: str = "") -> Tokenizer:
    """``"whitespace"`` or a model folder holding ``tokenizer.json``."""
    if str(name_or_folder) == "whitespace":
        return WhitespaceTokenizer()
    return HFTokenizer(name_or_folder, label)


def windows(n_tokens: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Token windows ``[start, end)`` covering ``n_tokens`` with the given size and overlap.

    Example:
        >>> windows(10, 4, 1)
        [(0, 4), (3, 7), (6, 10)]
    """
    if n_tokens <= size:
        return [(0, n_tokens)]
    step = size - overlap
    out = []
    start = 0
    while True:
        end = min(start + size, n_tokens)
        out.append((start, end))
        if end >= n_tokens:
            return out
        start += step


def nearest_heading(passage: Passage, start: int, end: int) -> str:
    """The heading in effect in the middle of the chunk ``[start, end)`` (a chunk that crosses into a new section
    mostly belongs to it), else the passage's own (the one in effect where it starts), else the first one inside.

    Example:
        >>> p = Passage("p", "# A\\ntext\\n# B\\nmore", headings=((0, "A"), (9, "B")))
        >>> nearest_heading(p, 4, 9), nearest_heading(p, 6, 18)
        ('A', 'B')
    """
    middle = (start + end) // 2
    before = [h for off, h in passage.headings if off <= middle]
    if before:
        return before[-1]
    if passage.section:
        return passage.section
    inside = [h for off, h in passage.headings if start < off < end]
    return inside[0] if inside else ""


class Chunker:
    """Splits passages into `Chunk` windows of ``size`` tokens sharing ``overlap`` tokens.

    Example:
        >>> chunker = Chunker(WhitespaceTokenizer(), size=4, overlap=1)
        >>> [c.text for c in chunker.chunk([Passage("p1", "a b c d e f g h i j")])]
        ['a b c d', 'd e f g', 'g h i j']
    """

    def __init__(self, tokenizer: Tokenizer, size: int = 384, overlap: int = 64, batch_size: int = 256) -> None:
        if overlap >= size:
            raise ValueError(f"overlap ({overlap}) must be smaller than size ({size})")
        self.tokenizer = tokenizer
        self.size = size
        self.overlap = overlap
        self.batch_size = batch_size

    def chunk(self, passages: Iterable[Passage]) -> Iterator[Chunk]:
        batch: list[Passage] = []
        for passage in passages:
            batch.append(passage)
            if len(batch) >= self.batch_size:
                yield from self._chunk_batch(batch)
                batch = []
        if batch:
            yield from self._chunk_batch(batch)

    def _chunk_batch(self, passages: list[Passage]) -> Iterator[Chunk]:
        all_offsets = self.tokenizer.offsets([p.text for p in passages])
        for passage, offsets in zip(passages, all_offsets, strict=True):
            if not offsets:
                spans = [(0, len(passage.text))]
            else:
                spans = []
                for start, end in windows(len(offsets), self.size, self.overlap):
                    # the first window starts at 0 and the last ends at the text's end, so nothing is lost
                    c_start = 0 if start == 0 else offsets[start][0]
                    c_end = len(passage.text) if end == len(offsets) else offsets[end - 1][1]
                    spans.append((c_start, c_end))
            for i, (c_start, c_end) in enumerate(spans):
                yield Chunk(
                    id=f"{passage.id}#{i}",
                    passage_id=passage.id,
                    doc_id=passage.doc_id,
                    text=passage.text[c_start:c_end],
                    title=passage.title,
                    url=passage.url,
                    start=c_start,
                    end=c_end,
                    page=passage.page,
                    section=nearest_heading(passage, c_start, c_end),
                    line=_first_line(passage, c_start, c_end),
                )


def _first_line(passage: Passage, start: int, end: int) -> int:
    """The file's line the chunk ``passage.text[start:end]`` begins on, its leading blank lines skipped (0 when the
    passage's lines are not counted: all but source code)."""
    if not passage.line:
        return 0
    text = passage.text[start:end]
    return passage.line + passage.text.count("\n", 0, start) + len(text) - len(text.lstrip("\n"))

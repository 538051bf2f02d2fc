"""Reading corpora (MTRAG/BEIR jsonl, zipped jsonl, folders of documents) and re-chunking them."""

from __future__ import annotations

from local_rag.corpus.chunking import Chunker, load_tokenizer
from local_rag.corpus.readers import CorpusReport, read_corpus

__all__ = ["Chunker", "CorpusReport", "load_tokenizer", "read_corpus"]

"""`Searcher`: what the pipeline asks of retrieval, one ranked list of passages for a turn's query variants.

`local_rag.retrieve.hybrid.HybridRetriever` is the one the pipeline opens; a benchmark may hand the pipeline any
object with the same ``search`` (e.g. the tasks' reference passages for MTRAG Task B).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from local_rag.records import Hit, Query
from local_rag.retrieve.scope import Scope


class Searcher(Protocol):
    def search(self, queries: Sequence[Query], top_k: int | None = None, scope: Scope | None = None) -> list[Hit]:
        """The passages for ``queries`` (fused when several), best first, at most ``top_k``; with ``scope``, only
        passages of the documents it names."""
        ...

"""Moved to `local_rag.subset` (a low module, so that every layer uses the one picker). Kept while branches written
against the old path land; import `local_rag.subset` instead."""

from local_rag.subset import by_sha1, first_by_sha1, pick, sha1_of, stratified  # noqa: F401

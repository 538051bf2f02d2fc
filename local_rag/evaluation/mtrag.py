"""Moved to `local_rag.mtrag` (a low module, so that stage packages may read MTRAG files without importing the
evaluation layer). Kept while branches written against the old path land; import `local_rag.mtrag` instead."""

from local_rag.mtrag import *  # noqa: F403

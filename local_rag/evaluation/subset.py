"""Moved to `local_rag.subset` (a low module, so that every layer uses the one picker). Kept while branches written
against the old path land; import `local_rag.subset` instead."""

from local_rag.subset import by_sha1 as by_sha1
from local_rag.subset import first_by_sha1 as first_by_sha1
from local_rag.subset import pick as pick
from local_rag.subset import sha1_of as sha1_of
from local_rag.subset import stratified as stratified

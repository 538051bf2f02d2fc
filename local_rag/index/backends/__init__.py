"""Index backends other than the local one (FAISS + bm25s files in the index folder): `qdrant`."""

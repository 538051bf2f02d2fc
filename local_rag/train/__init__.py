"""Training our own retrieval specialists offline: data from MTRAG train conversations, a cross-encoder, an embedder."""

"""Session 45: the bi-encoder re-scorer's passage memory changes no rank. Ranks of every written query of a `train
adapt` work folder with the stock MiniLM re-scoring the first stage's top 20 (prior weight 1), with the memory and
without it (MEMORY = 0), and the wall time of each.

Usage: python docs/benchmarks/adapt/memory_check.py runs/adapt/projdocs-s45-e1/synth.jsonl.queries.jsonl projdocs
"""

import json
import sys
import time

from local_rag.rerank import bi_encoder
from local_rag.settings import load_settings
from local_rag.train.synth import SynthQuery
from local_rag.train.synth_run import heldout_ranks

path, index = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as fh:
    queries = [SynthQuery(r["passage_id"], r["kind"], r["text"]) for r in map(json.loads, fh)]
settings = load_settings(overrides={"index": index})
settings = settings.model_copy(update={"reranker": settings.reranker.model_copy(update={
    "backend": "bi-encoder", "model": "all-MiniLM-L6-v2", "candidates": 20, "prior_weight": 1.0})})
ranks = {}
for memory in (bi_encoder.MEMORY, 0):
    bi_encoder.MEMORY = memory
    started = time.perf_counter()
    ranks[memory] = heldout_ranks(settings, queries, "chunk", ["all-MiniLM-L6-v2"], progress=False)
    print(f"memory {memory}: {time.perf_counter() - started:.1f} s", flush=True)
with_memory, without = ranks.values()
print(f"{len(queries)} queries, the same ranks in every row: {with_memory == without}")

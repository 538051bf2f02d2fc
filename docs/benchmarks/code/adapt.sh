#!/usr/bin/env bash
# Session 59: `train adapt` (the product's offline adaptation, docs/training.md) on the code index of run.sh: does a
# re-scorer fine-tuned on questions Qwen2.5-Coder-1.5B writes for this package's own code find their chunks better
# than the first stage (BM25 with identifiers split + MiniLM)? Cross-validated over the documents (5 folds), as
# `train adapt` decides by default. PASSAGES=150 reuses run.sh's questions (committed LLM replies: 6 min here, the
# fine-tunes only); PASSAGES=350 the 350 chunks' replies committed in adapt-cache-350.jsonl (9 min here; written
# afresh, ~20 min more of the 1.5B). The report is copied to docs/benchmarks/code/adapt-$PASSAGES.json.
#   bash docs/benchmarks/code/run.sh && PASSAGES=350 bash docs/benchmarks/code/adapt.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
P=${PASSAGES:-150}
W=runs/adapt-code-$P; mkdir -p $W
export LOCAL_RAG_INDEXES_DIR=$PWD/runs/code/indexes
if [ ! -f $W/synth-cache.jsonl ]; then
  if [ -f docs/benchmarks/code/adapt-cache-$P.jsonl ]; then cp docs/benchmarks/code/adapt-cache-$P.jsonl $W/synth-cache.jsonl
  else cp docs/benchmarks/code/synth-cache.jsonl $W/synth-cache.jsonl; fi
fi
flock /tmp/heavy.lock .venv/bin/local-rag train adapt --index code --passages $P --kinds question --work $W \
  --name code-adapted-$P 2>&1 | tr '\r' '\n' | grep -a "kept\|MRR\|cross-validated\|^|" || true
cp $W/report.json docs/benchmarks/code/adapt-$P.json

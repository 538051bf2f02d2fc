#!/usr/bin/env bash
# Issue 23, session 36: how chunk hits become passage hits (passages.py): the best chunk (shipped), the best plus a
# share of the second, and BM25 over whole passages, chosen on the train split (last turn and the organizers'
# rewrite, no LLM), then the test split with the own rewrite (Qwen2.5-Coder-1.5B, profile cpu-qwen, cached).
# Needs the pool indexes (bash scripts/build_pool_indexes.sh). ~2 min, plus 8.6 min for the rewrites if not cached.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/i23/passages.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
I=docs/benchmarks/i23
PY=.venv/bin/python
LR=.venv/bin/local-rag
$PY $I/passages.py train --out $I/s36-passages-train > $I/s36-passages-train.md
$LR train rewrites --profile cpu-qwen --split test --llm-cache runs/i23/rewrites.jsonl
$PY $I/passages.py test --modes rewrite --rewrites runs/i23/rewrites.jsonl --variants max,bm25p \
  --out $I/s36-passages-test > $I/s36-passages-test.md
{
  for mode in rewrite lastturn; do
    echo; echo "## train, $mode: best chunk (A) against BM25 over whole passages (B)"; echo
    $LR eval compare $I/s36-passages-train/$mode-max $I/s36-passages-train/$mode-bm25p
  done
  echo; echo "## test, own rewrite: best chunk (A) against BM25 over whole passages (B)"; echo
  $LR eval compare $I/s36-passages-test/rewrite-max $I/s36-passages-test/rewrite-bm25p
  echo; echo "## test, own rewrite: session 32's committed row s32-own-k20 (A) against this machine's rerun (B)"; echo
  $LR eval compare $I/s32-own-k20 $I/s36-passages-test/rewrite-max --domains clapnq,cloud,fiqa
} > $I/s36-passages-compare.md

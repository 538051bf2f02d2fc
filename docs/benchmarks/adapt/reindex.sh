#!/usr/bin/env bash
# Session 35: the adapted embedders of run.sh in the first stage instead of as re-scorers. Each pool corpus is embedded
# again with models/mtrag-<domain>-adapted into indexes/adapt-<domain> (same chunks, BM25 and settings), queried with
# that embedder (LOCAL_RAG_EMBEDDER__MODEL) on the domain's MTRAG test turns; then every row of run.sh and this one
# against the first stage, per domain and pooled, with `local-rag eval compare` (paired bootstrap over the queries).
# Needs run.sh's models (DOMAIN=<d> bash docs/benchmarks/adapt/run.sh first). Resumable: built indexes and finished
# rows are kept.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
B=docs/benchmarks/adapt
export LOCAL_RAG_FUSION__K=20
C="--profile cpu-qwen --mode rewrite --rewrite rewrite --llm-cache runs/i23/rewrites.jsonl"
DOMAINS=${DOMAINS:-govt cloud fiqa}
for d in $DOMAINS; do
  if [ ! -f indexes/adapt-$d/manifest.json ]; then
    step build $d
    LOCAL_RAG_EMBEDDER__MODEL=models/mtrag-$d-adapted t $LR index build ../shared/mtrag/corpora/pool/$d.jsonl \
      --profile cpu-test --index adapt-$d --skip-bad 2>&1 | tr '\r' '\n' | grep -a "built\|wall\|rror"
  fi
  LOCAL_RAG_EMBEDDER__MODEL=models/mtrag-$d-adapted ev $d-own-k20-reindexed $C --domains $d --index-prefix adapt-
done
step compare
pool=runs/adapt/pooled; rm -rf $pool
for row in own-k20 own-k20-minilm own-k20-adapted own-k20-reindexed; do
  mkdir -p $pool/$row
  for d in $DOMAINS; do ln -sf "$PWD/$B/$d-$row/run-$d.jsonl" $pool/$row/; done
done
{
  for row in own-k20-minilm own-k20-adapted own-k20-reindexed; do
    for d in $DOMAINS; do
      echo "## $d: first stage (A) against $row (B)"; echo
      $LR eval compare $B/$d-own-k20 $B/$d-$row --out $B/compare/$d-$row.json
    done
    echo "## pooled ($DOMAINS): first stage (A) against $row (B)"; echo
    $LR eval compare $pool/own-k20 $pool/$row --out $B/compare/pooled-$row.json
  done
} > $B/compare.md
rm -rf $pool  # links only
step done

#!/usr/bin/env bash
# issue 23 evaluation chain on the MTRAG test split (resumable: a finished step is skipped)
set -uo pipefail
cd /work/wt/i23
export PYTHONPATH=$PWD LOCAL_RAG_MODELS_DIR=/work/main/models LOCAL_RAG_INDEXES_DIR=/work/main/indexes LOCAL_RAG_RERANKER__MAX_LENGTH=256
LR="/work/main/.venv/bin/local-rag"
B=docs/benchmarks/i23
CE=${CE:-i23-ce-bce}
step() { echo "=== $(date -u +%T) $*"; }
ev() { out=$1; shift; [ -f $B/$out/scores.json ] && return; step eval $out; /usr/bin/time -f "wall %e s, peak RSS %M KB" $LR eval retrieval --split test --out $B/$out "$@" 2>&1 | tr '\r' '\n' | grep -a "^|\|wall\|rror"; }
OWN="--profile cpu-qwen --mode rewrite --rewrite rewrite --llm-cache runs/i23/rewrites.jsonl"
ev hybrid-lastturn --profile cpu-test --mode lastturn
ev hybrid-own-rewrite $OWN
for m in lastturn own; do [ -s $B/ceiling-hybrid-$m.json ] || { step ceiling $m; $LR train ceiling --profile cpu-qwen --mode $m --llm-cache runs/i23/rewrites.jsonl > $B/ceiling-hybrid-$m.json 2>/dev/null; }; done
until [ -f /work/main/models/$CE/training.json ]; do sleep 20; done
if [ ! -d /work/main/models/$CE-onnx-int8 ]; then step export; $LR models export-onnx $CE --cross-encoder --int8 2>&1 | grep -a "exported\|quantised\|rror"; fi
ev $CE-int8-own-rewrite $OWN --cross-encoder --reranker $CE-onnx-int8 --reranker-backend onnx --candidates 20
ev $CE-int8-own-rewrite-prior1 $OWN --cross-encoder --reranker $CE-onnx-int8 --reranker-backend onnx --candidates 20 --prior-weight 1
ev $CE-own-rewrite $OWN --cross-encoder --reranker $CE --candidates 20
ev $CE-int8-lastturn --profile cpu-test --mode lastturn --cross-encoder --reranker $CE-onnx-int8 --reranker-backend onnx --candidates 20
for be in "onnx $CE-onnx-int8" "onnx $CE-onnx" "sentence-transformers $CE"; do set -- $be
  [ -f $B/latency-$2.json ] || { step latency $2; $LR train latency --reranker $2 --backend $1 --queries 20 --out $B/latency-$2.json > /dev/null 2>&1; }
done
step done

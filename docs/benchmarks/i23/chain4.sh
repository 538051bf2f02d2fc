#!/usr/bin/env bash
# issue 23, session 14: the cross-encoder trained one full epoch (i23-ce-e1), evaluated on the MTRAG test split with the
# system's own rewrite (Qwen2.5-Coder-1.5B, cached). Resumable: a finished step is skipped.
#   local-rag train reranker --data runs/i23/train-data.jsonl --name i23-ce-e1 --loss bce --negatives 3 \
#       --max-length 192 --batch-size 16 --lr 7e-5 --epochs 1 --save-steps 100      (run before this script)
set -uo pipefail
cd /work/wt/i23
export PYTHONPATH=$PWD LOCAL_RAG_MODELS_DIR=/work/main/models LOCAL_RAG_INDEXES_DIR=/work/main/indexes LOCAL_RAG_RERANKER__MAX_LENGTH=256
LR="/work/main/.venv/bin/local-rag"
B=docs/benchmarks/i23
CE=${CE:-i23-ce-e1}
CACHE=runs/i23/rewrites.jsonl
OWN="--profile cpu-qwen --mode rewrite --rewrite rewrite --llm-cache $CACHE"
step() { echo "=== $(date -u +%T) $*"; }
ev() { out=$1; shift; [ -f $B/$out/scores.json ] && return; step eval $out; /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock $LR eval retrieval --split test --out $B/$out "$@" 2>&1 | tr '\r' '\n' | grep -a "^|\|wall\|rror"; }
until [ -f /work/main/models/$CE/training.json ]; do sleep 15; done
step rewrites; /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock $LR train rewrites --profile cpu-qwen --split test --llm-cache $CACHE 2>&1 | tr '\r' '\n' | grep -a "wall\|rror\|cached\|rewrites" | tail -5
if [ ! -d /work/main/models/$CE-onnx-int8 ]; then step export; flock /tmp/heavy.lock $LR models export-onnx $CE --cross-encoder --int8 2>&1 | grep -a "exported\|quantised\|rror"; fi
ev hybrid-own $OWN
ev $CE-int8-own $OWN --cross-encoder --reranker $CE-onnx-int8 --reranker-backend onnx --candidates 20
ev $CE-int8-own-prior1 $OWN --cross-encoder --reranker $CE-onnx-int8 --reranker-backend onnx --candidates 20 --prior-weight 1
[ -f $B/latency-$CE-onnx-int8.json ] || { step latency int8; flock /tmp/heavy.lock $LR train latency --reranker $CE-onnx-int8 --backend onnx --queries 20 --out $B/latency-$CE-onnx-int8.json > /dev/null 2>&1; }
step done

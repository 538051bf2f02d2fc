#!/usr/bin/env bash
# issue 23, session 14: the cross-encoder again, with the mined negatives' top skipped (likely unlabelled positives) and
# one other example's positive as an easy negative, against the shortcut i23-ce-e1 learned; test split, own rewrite.
set -uo pipefail
cd /work/wt/i23
export PYTHONPATH=$PWD LOCAL_RAG_MODELS_DIR=/work/main/models LOCAL_RAG_INDEXES_DIR=/work/main/indexes LOCAL_RAG_RERANKER__MAX_LENGTH=256
LR="/work/main/.venv/bin/local-rag"
B=docs/benchmarks/i23
CE=i23-ce-v2
OWN="--profile cpu-qwen --mode rewrite --rewrite rewrite --llm-cache runs/i23/rewrites.jsonl"
step() { echo "=== $(date -u +%T) $*"; }
ev() { out=$1; shift; [ -f $B/$out/scores.json ] && return; step eval $out; /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock $LR eval retrieval --split test --out $B/$out "$@" 2>&1 | tr '\r' '\n' | grep -a "^|\|wall\|rror"; }
until grep -q "=== .* done" /tmp/logs/timed.log 2>/dev/null; do sleep 15; done
if [ ! -f /work/main/models/$CE/training.json ]; then step train $CE
  /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock $LR train reranker --data runs/i23/train-data.jsonl --name $CE --loss bce --negatives 2 --skip-hard 3 --random-negatives 1 --max-length 192 --batch-size 16 --lr 7e-5 --max-steps 400 --save-steps 100 2>&1 | tr '\r' '\n' | grep -a "trained\|rror\|wall"; fi
if [ ! -d /work/main/models/$CE-onnx-int8 ]; then step export; flock /tmp/heavy.lock $LR models export-onnx $CE --cross-encoder --int8 2>&1 | grep -a "exported\|quantised\|rror"; fi
ev $CE-int8-own $OWN --cross-encoder --reranker $CE-onnx-int8 --reranker-backend onnx --candidates 20
ev $CE-int8-own-prior1 $OWN --cross-encoder --reranker $CE-onnx-int8 --reranker-backend onnx --candidates 20 --prior-weight 1
step done

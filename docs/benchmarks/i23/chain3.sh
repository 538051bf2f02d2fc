#!/usr/bin/env bash
# issue 23 evaluation on the MTRAG test split, last-turn queries (our own rewrites of the test tasks could not be
# computed this session: ~100 s a rewrite on the shared CPU). Resumable: a finished step is skipped.
set -uo pipefail
cd /work/wt/i23
export PYTHONPATH=$PWD LOCAL_RAG_MODELS_DIR=/work/main/models LOCAL_RAG_INDEXES_DIR=/work/main/indexes LOCAL_RAG_RERANKER__MAX_LENGTH=256
LR="/work/main/.venv/bin/local-rag"
B=docs/benchmarks/i23
CE=${CE:-i23-ce-bce}
step() { echo "=== $(date -u +%T) $*"; }
ev() { out=$1; shift; [ -f $B/$out/scores.json ] && return; step eval $out; /usr/bin/time -f "wall %e s, peak RSS %M KB" $LR eval retrieval --split test --out $B/$out "$@" 2>&1 | tr '\r' '\n' | grep -a "^|\|wall\|rror"; }
ev hybrid-lastturn --profile cpu-test --mode lastturn
[ -s $B/ceiling-hybrid-lastturn.json ] || { step ceiling; $LR train ceiling --profile cpu-qwen --mode lastturn > $B/ceiling-hybrid-lastturn.json 2>/dev/null; }
until [ -f /work/main/models/$CE/training.json ]; do sleep 15; done
if [ ! -d /work/main/models/$CE-onnx-int8 ]; then step export; $LR models export-onnx $CE --cross-encoder --int8 2>&1 | grep -a "exported\|quantised\|rror"; fi
ev $CE-int8-lastturn --profile cpu-test --mode lastturn --cross-encoder --reranker $CE-onnx-int8 --reranker-backend onnx --candidates 20
ev $CE-int8-lastturn-prior1 --profile cpu-test --mode lastturn --cross-encoder --reranker $CE-onnx-int8 --reranker-backend onnx --candidates 20 --prior-weight 1
[ -f $B/latency-$CE-onnx-int8.json ] || { step latency int8; $LR train latency --reranker $CE-onnx-int8 --backend onnx --queries 20 --out $B/latency-$CE-onnx-int8.json > /dev/null 2>&1; }
ev $CE-lastturn --profile cpu-test --mode lastturn --cross-encoder --reranker $CE --candidates 20
for be in "onnx $CE-onnx" "sentence-transformers $CE"; do set -- $be
  [ -f $B/latency-$2.json ] || { step latency $2; $LR train latency --reranker $2 --backend $1 --queries 20 --out $B/latency-$2.json > /dev/null 2>&1; }
done
step done

#!/usr/bin/env bash
# issue 23, session 32: the same queries for the train split (own rewrites and HyDE passages, cached), so the lists'
# weights are chosen on train turns only (fusion_weights.py), then reported on the test split.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
C="--llm-cache runs/i23/rewrites.jsonl"
step rewrites train; t $LR train rewrites --profile cpu-qwen --split train $C 2>&1 | tr '\r' '\n' | grep -a "wall\|rror\|rewr" | tail -3
for row in own:rewrite own-hyde:rewrite,hyde; do
  name=${row%%:*}; rw=${row#*:}
  [ -f runs/i23/s32-train-$name/scores.json ] && continue
  step eval train $name; t $LR eval retrieval --split train --out runs/i23/s32-train-$name --profile cpu-qwen --mode rewrite --rewrite $rw $C 2>&1 | tr '\r' '\n' | grep -a "^| pool\|^| all\|wall\|rror"
done
step done

#!/usr/bin/env bash
# Issue 24, session 24: the "safe" decider (lr-features+embedding, thresholds at 0.04 of answerable training turns
# declined and 0.04 clarified), then Task C on the 20 judged test tasks of sessions 18-19 without the generator:
# eval recheck applies its decisions to the committed answers of cpu-qwen and of the default profile cpu
# (qwen-levers), and eval generation --reuse judges only the answers it changed (judge Qwen2.5-Coder-1.5B).
# Needs the hybrid pool indexes and the demo model (make demo-model).
set -euo pipefail
cd "$(dirname "$0")/../../.."
LR=${LOCAL_RAG:-.venv/bin/local-rag}
D=docs/benchmarks/decider-budget
W=runs/i24-safe
$LR train decider --name i24-decider-safe --report $D/safe --work runs/i24-decider --variants lr-features+embedding \
  --decline-budget 0.04 --clarify-budget 0.04
git checkout models/manifest.json 2>/dev/null || true
.venv/bin/python scripts/gen_eval_checkpoint.py restore --runs runs/gen-rag-test20-cpu-qwen runs/i26/gen-rag-test20-qwen-levers \
  runs/i26/judged-cpu-qwen runs/i26/judged-qwen-levers --dest docs/benchmarks/levers/taskc
for run in gen-rag-test20-cpu-qwen:runs/i26/judged-cpu-qwen i26/gen-rag-test20-qwen-levers:runs/i26/judged-qwen-levers; do
  pred=runs/${run%%:*}/predictions.jsonl judged=${run#*:} name=$(basename ${run%%:*})
  $LR eval recheck --predictions $pred --out $W/recheck-$name/predictions.jsonl --support off --decisions $D/safe/predictions.jsonl
  $LR eval generation --setting rag --predictions $W/recheck-$name/predictions.jsonl --reuse $judged \
    --out $W/judged-$name-safe --no-charts
  .venv/bin/python scripts/gen_eval_checkpoint.py save --runs $W/judged-$name-safe --dest $D
done

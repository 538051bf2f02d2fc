#!/usr/bin/env bash
# Issue 23, session 33: Task C with RRF k 20 (the train split's choice for the own rewrite alone, sessions 32-33:
# train pool-3 nDCG@5 0.302 -> 0.310, test 0.332 -> 0.338) in the default `cpu`, on the 20 judged test tasks of
# sessions 15-32, against session 31's run of the default on the same 2-core Zen 5 VM (levers/s31/taskc/judged-s31).
#   s33-k20   the default `cpu` with fusion.k 20
# Judge: Qwen2.5-Coder-1.5B.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s33/taskc.sh   (~10 min on the Zen 5 VM)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s33/taskc; R=runs/i26/s33; c=${CONFIG:-s33-k20}
export LOCAL_RAG_FUSION__K=20
if [ ! -f $R/gen-$c/scores.json ]; then
  /usr/bin/time -f "$c generated: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
    --profile cpu --split test --limit 20 --no-llm-judges --no-charts --out $R/gen-$c
fi
unset LOCAL_RAG_FUSION__K
if [ ! -f $R/judged-$c/scores.json ]; then
  /usr/bin/time -f "$c judged: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
    --predictions $R/gen-$c/predictions.jsonl --out $R/judged-$c --no-charts
fi
.venv/bin/python scripts/gen_eval_checkpoint.py save --runs $R/gen-$c $R/judged-$c --dest $D
cp $R/gen-$c/scores.{json,md} $D/gen-$c/
cp $R/judged-$c/scores.{json,md} $D/judged-$c/
.venv/bin/local-rag eval compare docs/benchmarks/levers/s31/taskc/judged-s31 $D/judged-$c

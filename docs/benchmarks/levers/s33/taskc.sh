#!/usr/bin/env bash
# Issue 23, session 33: Task C with RRF k 20 (the train split's choice for the own rewrite alone, sessions 32-33:
# train pool-3 nDCG@5 0.302 -> 0.310, test 0.332 -> 0.338) in the default `cpu`, on the 20 judged test tasks of
# sessions 15-32, against session 31's run of the default on the same 2-core Zen 5 VM (levers/s31/taskc/judged-s31).
#   s33-k20   the default `cpu` with fusion.k 20
# Judge: Qwen2.5-Coder-1.5B.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s33/taskc.sh   (~10 min on the Zen 5 VM)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
LOCAL_RAG_FUSION__K=20 bash scripts/taskc20.sh ${CONFIG:-s33-k20} cpu runs/i26/s33 docs/benchmarks/levers/s33/taskc \
  docs/benchmarks/levers/s31/taskc/judged-s31

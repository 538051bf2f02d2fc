#!/usr/bin/env bash
# Issue 23, session 32: Task C with the HyDE passage as one more query list, on the 20 judged test tasks of sessions
# 15-31, against session 31's run of the default on the same 2-core Zen 5 VM (levers/s31/taskc/judged-s31):
#   s32-hyde       the default `cpu` with rewrite.modes [rewrite, hyde] (RRF k 60, before the train-split choice);
#   s32-cpu-hyde   (CONFIG=s32-cpu-hyde) the profile `cpu-hyde`: the same and RRF k 20, as chosen on the train split.
# Judge: Qwen2.5-Coder-1.5B.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s32/taskc.sh   (~10 min a run on the Zen 5 VM)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
c=${CONFIG:-s32-hyde}
if [ "$c" = s32-hyde ]; then P=cpu; export LOCAL_RAG_REWRITE__MODES='["rewrite","hyde"]' LOCAL_RAG_FUSION__K=60; else P=cpu-hyde; fi
bash scripts/taskc20.sh $c $P runs/i26/s32 docs/benchmarks/levers/s32/taskc docs/benchmarks/levers/s31/taskc/judged-s31

#!/usr/bin/env bash
# Session 33: the hybrid retriever's search was split in two rounds (the feedback round, off by default); the 12 test
# turns of sessions 14-32 with the lever config of the default (cpu-qwen + the levers, RRF k 60 as in session 32's
# run), to check that answers and retrieval times are session 32's (docs/benchmarks/levers/s32/round1).
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s33/run.sh   (~7 min)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s33
.venv/bin/local-rag bench-levers ablation --mode c --conversations 2 --max-turns 12 --configs all-nolookup-warm-prefix --out "$D/round1"
.venv/bin/local-rag bench-levers table --out $D/round1

#!/usr/bin/env bash
# Issue 26, session 33: LlamaIndex beside the default `cpu` with RRF k 20 (since session 33) on the 24 govt turns of
# sessions 30-32, on the 2-core Zen 5 VM of sessions 31-32 (session 31's run, RRF k 60: docs/benchmarks/peer-s31).
# Then judge ours: ROWS=ours-rewrite bash scripts/judge_peer.sh docs/benchmarks/peer-s33
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/peer-s33/run.sh   (~10 min)
set -euo pipefail
cd "$(dirname "$0")/../../.."
.venv-peer/bin/python scripts/bench_peer.py --profile cpu --domain govt --tasks 24 --seed 0 --rows peer,ours-rewrite \
  --out docs/benchmarks/peer-s33

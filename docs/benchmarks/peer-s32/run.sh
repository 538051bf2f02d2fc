#!/usr/bin/env bash
# Issue 26, session 32: LlamaIndex beside the profile `cpu-hyde` (the default `cpu` + a HyDE passage + RRF k 20) on the
# 24 govt turns of sessions 30-31, on the 2-core Zen 5 VM of session 31 (its run: docs/benchmarks/peer-s31, with the
# default `cpu` as ours-rewrite). Then judge both rows: ROWS="peer ours-hyde" bash scripts/judge_peer.sh docs/benchmarks/peer-s32
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/peer-s32/run.sh   (~12 min)
set -euo pipefail
cd "$(dirname "$0")/../../.."
.venv-peer/bin/python scripts/bench_peer.py --profile cpu --domain govt --tasks 24 --seed 0 --rows peer \
  --variant 'ours-hyde:rewrite.modes=[rewrite, hyde]' --variant ours-hyde:fusion.k=20 --out docs/benchmarks/peer-s32

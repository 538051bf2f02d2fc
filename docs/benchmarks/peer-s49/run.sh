#!/usr/bin/env bash
# Issue 26, session 49: session 41's side by side (docs/benchmarks/peer-s41) on the fourth domain: LlamaIndex beside
# the default `cpu` (300-token evidence budget) on every answerable cloud turn of the MTRAG *test* conversations (+1
# warm-up), on the 2-core AMD EPYC VM of sessions 46-49; then both rows judged, then pooled with the govt (session
# 41), clapnq (session 47) and fiqa (session 48) runs.
# Run it alone: bash docs/benchmarks/peer-s49/run.sh   (each step takes the heavy lock; ~2 h 30 min)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash scripts/peer_run.sh docs/benchmarks/peer-s49 cloud compare-pooled-s41-s47-s48-s49.md docs/benchmarks/peer-s41 \
  docs/benchmarks/peer-s47 docs/benchmarks/peer-s48

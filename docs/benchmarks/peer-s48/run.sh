#!/usr/bin/env bash
# Issue 26, session 48: session 41's side by side (docs/benchmarks/peer-s41) on a third domain: LlamaIndex beside the
# default `cpu` (300-token evidence budget) on every answerable fiqa turn of the MTRAG *test* conversations (+1
# warm-up), on the 2-core AMD EPYC VM of sessions 46-48; then both rows judged, then pooled with the govt (session
# 41) and clapnq (session 47) runs.
# Run it alone: bash docs/benchmarks/peer-s48/run.sh   (each step takes the heavy lock; ~2 h 30 min)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash scripts/peer_run.sh docs/benchmarks/peer-s48 fiqa compare-pooled-s41-s47-s48.md docs/benchmarks/peer-s41 \
  docs/benchmarks/peer-s47

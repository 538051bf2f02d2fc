#!/usr/bin/env bash
# Issue 26, session 47: session 41's side by side (docs/benchmarks/peer-s41) on a second domain: LlamaIndex beside the
# default `cpu` (300-token evidence budget) on every answerable clapnq turn of the MTRAG *test* conversations (+1
# warm-up), on the 2-core AMD EPYC VM of sessions 46-47; then both rows judged, then pooled with session 41's govt run.
# Run it alone: bash docs/benchmarks/peer-s47/run.sh   (each step takes the heavy lock; ~2 h 15 min)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bash scripts/peer_run.sh docs/benchmarks/peer-s47 clapnq compare-pooled-s41-s47.md docs/benchmarks/peer-s41

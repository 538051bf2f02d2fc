#!/usr/bin/env bash
# Issue 26, session 40, after run.sh, on the same Zen 4 VM: (1) `cpu` with a 300-token evidence budget on the same 12
# turns (what the time to first token would need on this CPU; not a quality claim); (2) `local-rag bench` with the
# warm-up between turns it now does (as a chat), and the same command cold (LOCAL_RAG_PIPELINE__WARM=false, as every
# bench before session 40), back to back. Each step takes the heavy lock itself. ~12 min.
#   bash docs/benchmarks/levers/s40/more.sh
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s40
t() { /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock "$@"; }
t .venv/bin/local-rag bench-levers ablation --profile cpu --mode c --conversations 2 --max-turns 12 \
  --configs shipped-evidence300 --out "$D/round1"
.venv/bin/local-rag bench-levers table --out "$D/round1"
t .venv/bin/local-rag bench --profile cpu --index mtrag-clapnq -n 6 --repeats 2 --build-passages 0 --out "$D/bench"
LOCAL_RAG_PIPELINE__WARM=false t .venv/bin/local-rag bench --profile cpu --index mtrag-clapnq -n 6 --repeats 2 \
  --build-passages 0 --out "$D/bench-cold"

#!/usr/bin/env bash
# Issue 23/26, session 32, on the 2-core Zen 5 AMD EPYC VM of session 31: what the HyDE passage costs a turn.
# The 12 test turns of sessions 14-31 with
#   all-nolookup-warm-prefix        the shipped default `cpu` on this CPU (session 31's row, run again beside it);
#   all-nolookup-warm-prefix-hyde   the same with rewrite.modes [rewrite, hyde] (one more LLM call a turn).
# Qwen2.5-Coder-1.5B Q4_K_M, all-MiniLM-L6-v2. Resumable per turn.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s32/run.sh   (~15 min)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s32
for c in ${CONFIGS:-all-nolookup-warm-prefix all-nolookup-warm-prefix-hyde}; do
  .venv/bin/local-rag bench-levers ablation --mode c --conversations 2 --max-turns 12 --configs "$c" --out "$D/round1"
done
.venv/bin/local-rag bench-levers table --out $D/round1

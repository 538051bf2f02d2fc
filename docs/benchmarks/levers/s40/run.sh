#!/usr/bin/env bash
# Issue 26, session 40, on the 2-core Zen 4 AMD EPYC VM of sessions 36-40 (AVX-512, no AMX): the time to first token a
# chat user feels. Session 36's `local-rag bench` on this CPU (TTFT p50 7.5 s) runs its turns back to back with no
# warm-up between them; a chat prefills the next turn's prompt prefixes while the user reads and types
# (`pipeline.warm`, on in every profile). These are the 12 test turns of sessions 14-31 (two conversations, in order)
# answered by each profile exactly as it ships (`--configs shipped`: the profile with its warm-up between turns, timed
# from the user's message on; the warm-up's own time is in the rows):
#   cpu (the default), cpu-hyde, cpu-fast.
# Qwen2.5-Coder-1.5B / 0.5B Q4_K_M, all-MiniLM-L6-v2, the pool indexes indexes/mtrag-<domain>, the native CPU build of
# scripts/install_llama_cpp.sh. Resumable per turn. Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s40/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s40
for p in ${PROFILES:-cpu cpu-hyde cpu-fast}; do
  /usr/bin/time -f "$p: wall %e s, peak RSS %M KB" .venv/bin/local-rag bench-levers ablation --profile "$p" --mode c \
    --conversations 2 --max-turns 12 --configs shipped --out "$D/round${ROUND:-1}"
done
.venv/bin/local-rag bench-levers table --out "$D/round${ROUND:-1}"

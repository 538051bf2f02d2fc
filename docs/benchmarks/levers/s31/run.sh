#!/usr/bin/env bash
# Issue 26, session 31, on a 2-core AMD EPYC VM with AVX-512 and VNNI but no AMX (not the AVX2-only AMD VM of session
# 20, not the Intel VM with AMX of sessions 26-30): the 12 test turns of sessions 14-30 with
#   all-nolookup-warm-prefix       the shipped default `cpu` on this CPU (prompt lookup off: llm.prompt_lookup -1);
#   all-warm-prefix-ngram2         the same with prompt lookup on (10 tokens, 2-token matches), as `cpu` is on AMX;
#   all-nolookup-warm-prefix-full  the default with the fuller-answer prompt (answer_history_first_full).
# Qwen2.5-Coder-1.5B Q4_K_M, all-MiniLM-L6-v2, the native CPU build of scripts/install_llama_cpp.sh. Resumable per turn.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s31/run.sh   (~20 min)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s31
for c in ${CONFIGS:-all-nolookup-warm-prefix all-warm-prefix-ngram2 all-nolookup-warm-prefix-full}; do
  .venv/bin/local-rag bench-levers ablation --mode c --conversations 2 --max-turns 12 --configs "$c" --out "$D/round1"
done
.venv/bin/local-rag bench-levers table --out $D/round1

#!/usr/bin/env bash
# Issue 26, session 30: prompt lookup drafting only from 2-token matches (llm.prompt_lookup_min_ngram: 2) in whole
# turns, beside the shipped default (`cpu` = all-warm-prefix), twice in alternation against the VM's drift; and
# cpu-fast's 0.5B with the default's new levers (all-0.5b-warm-prefix) beside cpu-fast as shipped
# (all-0.5b-nolookup-warm). The 12 test turns of sessions 14-29, Qwen2.5-Coder 1.5B / 0.5B Q4_K_M,
# all-MiniLM-L6-v2, the AMX build of scripts/install_llama_cpp.sh. Resumable per turn.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s30/run.sh   (~20 min)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s30
run() { .venv/bin/local-rag bench-levers ablation --mode c --conversations 2 --max-turns 12 --configs "$2" --out "$D/$1"; }
for r in round1 round2; do
  for c in all-warm-prefix all-warm-prefix-ngram2; do run $r $c; done
done
for c in all-0.5b-nolookup-warm all-0.5b-warm-prefix; do run fast $c; done
for r in round1 round2 fast; do .venv/bin/local-rag bench-levers table --out $D/$r; done

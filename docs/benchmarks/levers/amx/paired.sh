#!/usr/bin/env bash
# Paired A/B of the AMX build against the build without it (issue 26, session 28): this VM's speed drifts by up to 1.5x
# within minutes (run.sh's rounds), so the two llama-bench builds alternate in eight pairs of single runs, and each
# pair is read as a ratio: prefill of 659 tokens and 32 tokens decoded, Qwen2.5-Coder-1.5B Q4_K_M, 2 threads, flash
# attention. flock /tmp/heavy.lock bash docs/benchmarks/levers/amx/paired.sh   -> paired.jsonl (one line a run)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/amx
Q15=models/qwen2.5-coder-1.5b-instruct-q4_k_m/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
NOAMX=$(bash scripts/build_llama_bench.sh)
AMX=$(LLAMA_CPP_AMX=1 bash scripts/build_llama_bench.sh)
: > $D/paired.jsonl
for pair in 1 2 3 4 5 6 7 8; do
  for build in noamx amx; do
    bin=$NOAMX; [ $build = amx ] && bin=$AMX
    $bin -m $Q15 -t 2 -fa 1 -p 659 -n 32 -r 1 -o jsonl | sed "s/^{/{\"pair\": $pair, \"build\": \"$build\", /" >> $D/paired.jsonl
  done
done

#!/usr/bin/env bash
# Random weights against the real model on this CPU, interleaved (real, random, real, random), each a fresh process:
# local-rag bench-levers llm-speed on Qwen2.5-Coder-1.5B Q4_K_M and on its shape with random weights, prompts of 659
# and 1,343 tokens, 64 new tokens, 2 timed repeats after a warm-up, CPU only. Files: cpu-{real,random}-{1,2}.json here.
set -euo pipefail
cd "$(dirname "$0")/../../.."
Q=models/qwen2.5-coder-1.5b-instruct-q4_k_m/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
LR=${LR:-.venv/bin/local-rag}
common="--gpu-layers 0 --new-tokens 64 --repeats 2"
for i in 1 2; do
  $LR bench-levers llm-speed --gguf $Q $common --out docs/benchmarks/gpu-llm/cpu-real-$i.json
  $LR bench-levers llm-speed --shape qwen2.5-1.5b --vocab-from $Q $common --out docs/benchmarks/gpu-llm/cpu-random-$i.json
done

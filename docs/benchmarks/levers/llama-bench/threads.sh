#!/usr/bin/env bash
# Threads and micro-batch on a quiet machine, by llama.cpp's own llama-bench on Qwen2.5-Coder-1.5B Q4_K_M: prefill of
# 659 tokens at 1 and 2 threads and micro-batches 256 / 512, and 64 decoded tokens after a 659-token prompt at 1 and 2
# threads. Run: flock /tmp/heavy.lock bash docs/benchmarks/levers/llama-bench/threads.sh  (files: threads-{pp,tg}.json)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/llama-bench
Q=models/qwen2.5-coder-1.5b-instruct-q4_k_m/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
BENCH=$(bash scripts/build_llama_bench.sh)
$BENCH -m $Q -fa 1 -t 1,2 -ub 256,512 -p 659 -n 0 -r 2 -o json > $D/threads-pp.json
$BENCH -m $Q -fa 1 -t 1,2 -p 0 -n 64 -d 659 -r 2 -o json > $D/threads-tg.json

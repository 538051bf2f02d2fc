#!/usr/bin/env bash
# llama.cpp's own llama-bench against local-rag's binding (`local-rag bench-levers llm-speed`: LlamaCppLLM, its
# sampling loop) on the same GGUF, the same llama.cpp version and CPU flags, 2 threads, flash attention on,
# interleaved in two rounds, each tool a fresh process: prefill of a 659-token prompt (the default `cpu` turn's new
# prompt tokens) and 128 decoded tokens after it. The real Qwen2.5-Coder-1.5B stops at its end-of-turn token after a
# dozen tokens, so decode is timed on its shape with random weights (the same tensors and types; it decodes all 128),
# which llama-bench also runs. Run it on a quiet machine: flock /tmp/heavy.lock bash docs/benchmarks/levers/llama-bench/run.sh
# Files here: llama-bench-{real,random}-<round>.json, binding-{real,random}-<round>.json, machine.txt.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/llama-bench
Q=models/qwen2.5-coder-1.5b-instruct-q4_k_m/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
R=/tmp/local-rag-shapes/qwen2.5-1.5b-random-q4_k_m.gguf
LR=${LR:-.venv/bin/local-rag}
BENCH=$(bash scripts/build_llama_bench.sh)
[ -f $R ] || .venv/bin/python -c "from local_rag.bench.shape_gguf import SHAPES, write_shape_gguf
write_shape_gguf('$R', SHAPES['qwen2.5-1.5b'], '$Q')"
{ date -u; uptime; lscpu | grep -E "Model name|^CPU\(s\)"; echo "SIMD flags: $(grep -m1 flags /proc/cpuinfo | tr ' ' '\n' |
  grep -E '^(avx|amx|fma|f16c)' | tr '\n' ' ')"; $BENCH --version 2>&1 | tail -n 2; } > $D/machine.txt
for round in 1 2; do
  for kind in real random; do
    f=$Q; [ $kind = real ] || f=$R
    # prefill of 659 tokens from an empty cache; decode of 128 tokens after a 659-token prompt (-d: cache depth)
    $BENCH -m $f -t 2 -fa 1 -p 659 -n 0 -r 3 -o json > $D/llama-bench-$kind-$round.pp.json
    $BENCH -m $f -t 2 -fa 1 -p 0 -n 128 -d 659 -r 3 -o json > $D/llama-bench-$kind-$round.tg.json
    $LR bench-levers llm-speed --gguf $f --gpu-layers 0 --threads 2 --prompt-tokens 659 --new-tokens 128 --repeats 3 \
      --out $D/binding-$kind-$round.json
  done
done

#!/usr/bin/env bash
# AMX in llama.cpp on a CPU that has it (issue 26, session 28): the same llama.cpp (llama-cpp-python 0.3.36's), native,
# built with AMX off (as every build before session 28) and on (with scripts/patches/llama-cpp-amx-tile-config.patch,
# without which it crashes), on the same GGUFs and 2 threads, flash attention on.
# 1. llama-bench, interleaved in two rounds: prefill of 659 tokens (the default `cpu` turn's new prompt tokens) and 64
#    tokens decoded after a 659-token cache, for Qwen2.5-Coder-1.5B and -0.5B Q4_K_M.
# 2. local-rag's binding on the same prompt (`bench-levers llm-speed`), and whole turns through local-rag (`bench-levers ablation`, the 12 test turns of sessions 14, 20 and 26) for the
#    default `cpu` profile (all-nolookup) and `cpu-fast` (all-0.5b-nolookup), with each wheel installed in turn by
#    scripts/install_llama_cpp.sh (LLAMA_CPP_AMX=0, then the default, which is AMX where the kernel grants it).
# Run it on a quiet machine: flock /tmp/heavy.lock bash docs/benchmarks/levers/amx/run.sh
# (SKIP_LLAMA_BENCH=1 skips part 1; BUILDS="amx noamx" sets the order of part 2; the ablation resumes per turn)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/amx
Q15=models/qwen2.5-coder-1.5b-instruct-q4_k_m/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
Q05=models/qwen2.5-coder-0.5b-instruct-q4_k_m/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
NOAMX=$(bash scripts/build_llama_bench.sh)
AMX=$(LLAMA_CPP_AMX=1 bash scripts/build_llama_bench.sh)
{ date -u; uptime; lscpu | grep -E "Model name|^CPU\(s\)"; echo "SIMD flags: $(grep -m1 flags /proc/cpuinfo | tr ' ' '\n' |
  grep -E '^(avx|amx|fma|f16c)' | tr '\n' ' ')"; .venv/bin/python -c "from local_rag.device import amx_tiles_granted
print('AMX tiles granted by the kernel:', amx_tiles_granted())"; } > $D/machine.txt
if [ "${SKIP_LLAMA_BENCH:-0}" != 1 ]; then
  for round in 1 2; do
    for build in noamx amx; do
      bin=$NOAMX; [ $build = amx ] && bin=$AMX
      for m in 1.5b 0.5b; do
        f=$Q15; [ $m = 0.5b ] && f=$Q05
        $bin -m $f -t 2 -fa 1 -p 659 -n 0 -r 3 -o json > $D/llama-bench-$build-$m-$round.pp.json
        $bin -m $f -t 2 -fa 1 -p 0 -n 64 -d 659 -r 3 -o json > $D/llama-bench-$build-$m-$round.tg.json
      done
    done
  done
fi
for build in ${BUILDS:-noamx amx}; do
  amx=0; [ $build = amx ] && amx=auto
  LLAMA_CPP_AMX=$amx bash scripts/install_llama_cpp.sh
  for m in 1.5b 0.5b; do   # the binding (LlamaCppLLM) on the same prompt length
    f=$Q15; [ $m = 0.5b ] && f=$Q05
    .venv/bin/local-rag bench-levers llm-speed --gguf $f --gpu-layers 0 --threads 2 --prompt-tokens 659 \
      --new-tokens 64 --repeats 3 --out $D/binding-$build-$m.json
  done
  for c in all-nolookup all-0.5b-nolookup; do
    .venv/bin/local-rag bench-levers ablation --mode c --conversations 2 --max-turns 12 --configs $c --out $D/$build
  done
  .venv/bin/local-rag bench-levers table --out $D/$build
done

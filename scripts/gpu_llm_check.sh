#!/usr/bin/env bash
# The LLM on a lent GPU machine that cannot download (the device tool), from the repository root, carrying .llm
# (bash scripts/gpu_llm_prepare.sh): builds llama-cpp-python there with CUDA through scripts/install_llama_cpp.sh
# (its auto-detection, offline: pip finds the trimmed source in .llm), then times prefill and decode through
# local-rag's own backend (`local-rag bench-levers llm-speed`) for the profiles' model shapes with random weights
# (no GGUF fits in what travels), on the GPU and, for the 1.5B, on the machine's CPU. Writes $OUT (or ./gpu-llm-out).
# The build runs detached: if the call ends first, run the script again on the warm machine and it waits for it.
# Env: BUILD_WAIT (s to wait for the build, 420), REPEATS (3), QUICK=1 (only the GPU rows of 1.5B and 7B).
# Results: docs/benchmarks/gpu-llm/.
set -uo pipefail
OUT=${OUT:-gpu-llm-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=/tmp/site:$PWD PATH=$PATH:/usr/local/cuda/bin
command -v nvcc >/dev/null || { n=$(find /usr /opt -name nvcc -type f 2>/dev/null | head -n 1); [ -z "$n" ] || export PATH=$PATH:${n%/nvcc}; }
step() { echo "=== $(date -u +%T) $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .llm/whl/*.whl || exit 1
step machine; { nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader; nproc
  command -v nvcc && nvcc --version | tail -n 2; python3 -c 'import sys; print(sys.version)'; } 2>&1 | tee "$OUT/machine.txt"
VENV=$(python3 -c 'import sys; print(sys.prefix)')
if [ ! -f /tmp/llm-build.started ]; then
  step "build (started; log /tmp/llm-build.log)"; touch /tmp/llm-build.started
  setsid bash -c "PIP_NO_INDEX=1 PIP_FIND_LINKS='$PWD/.llm $PWD/.llm/whl' PIP_NO_BUILD_ISOLATION=0 \
    bash scripts/install_llama_cpp.sh '$VENV' > /tmp/llm-build.log 2>&1; echo \$? > /tmp/llm-build.rc" < /dev/null &
fi
while [ ! -f /tmp/llm-build.rc ] && [ "$SECONDS" -lt "${BUILD_WAIT:-420}" ]; do sleep 5; done
cp /tmp/llm-build.log "$OUT/build.log"; grep -a "install_llama_cpp\|rror" /tmp/llm-build.log | tail -n 5
[ -f /tmp/llm-build.rc ] || { step "build still running after ${SECONDS}s: run this script again"; exit 3; }
[ "$(cat /tmp/llm-build.rc)" = 0 ] || { step "build failed"; tail -n 40 /tmp/llm-build.log; exit 4; }
step "doctor"; python3 -m local_rag doctor --json > "$OUT/doctor.json" 2>&1; grep -a -A2 '"llama_cpp"' "$OUT/doctor.json"
speed() {  # speed OUTFILE ARGS...: one llm-speed run, llama.cpp's own log lines dropped
  local out=$1; shift
  python3 -m local_rag bench-levers llm-speed "$@" --out "$OUT/$out" 2>&1 | grep -av "^llama\|^load\|^print_info\|^ggml\|^graph"
}
V="--vocab-from .llm/qwen2-vocab.gguf"
# session 25 (H100): local-rag's backend segfaulted inside llama_cpp.Llama() where a plain Llama() of the same file,
# n_ctx, flash_attn and offload loaded; the arguments that differed are tried one at a time, each in its own process
step "which Llama() arguments load (rc 0) or crash (rc 139)"
F=/tmp/local-rag-shapes/qwen2.5-1.5b-random-q4_k_m.gguf
[ -f $F ] || python3 -c "from local_rag.bench.shape_gguf import SHAPES, write_shape_gguf
write_shape_gguf('$F', SHAPES['qwen2.5-1.5b'], '.llm/qwen2-vocab.gguf')"
P=$(python3 -c "from local_rag.llm.llamacpp import physical_cores; print(physical_cores())")  # what local-rag passes
echo "nproc $(nproc), local-rag's physical_cores() $P" | tee "$OUT/load-args.txt"
for kw in "" "n_threads=$(nproc)" "n_threads_batch=$(nproc)" "n_threads=$P, n_threads_batch=$P" "seed=0" "n_batch=512" \
          "n_threads=$P, n_threads_batch=$P, seed=0, n_batch=512"; do
  python3 -c "import llama_cpp; llama_cpp.Llama('$F', n_ctx=4096, n_gpu_layers=-1, flash_attn=True, verbose=False${kw:+, $kw})" > /dev/null 2>&1
  echo "Llama(... ${kw:-nothing more}): rc $?" | tee -a "$OUT/load-args.txt"
done
python3 -c "import llama_cpp; llama_cpp.Llama('$F', n_ctx=4096, n_gpu_layers=-1, flash_attn=True, verbose=True)" > /dev/null 2>&1
echo "Llama(... verbose=True instead of False): rc $?" | tee -a "$OUT/load-args.txt"
for first in numpy local_rag.llm.llamacpp; do  # the crash came with local-rag imported before llama_cpp: the order?
  python3 -c "import $first; import llama_cpp; llama_cpp.Llama('$F', n_ctx=4096, n_gpu_layers=-1, flash_attn=True, verbose=False)" > /dev/null 2>&1
  echo "import $first first, then Llama(... nothing more): rc $?" | tee -a "$OUT/load-args.txt"
done
# what LlamaCppLLM does before its Llama() call, each alone before a plain load: NVML (init, query, shutdown), the
# GGUF header read and the size check, the KV-size read of the tensor shapes
for before in "from local_rag.device import nvml_gpus; print(nvml_gpus())" \
              "from local_rag.modelstore.gguf_check import check_gguf; check_gguf('$F')" \
              "from local_rag.modelstore.shapes import gguf_shape; gguf_shape('$F').kv_bytes(4096)"; do
  python3 -c "$before
import llama_cpp; llama_cpp.Llama('$F', n_ctx=4096, n_gpu_layers=-1, flash_attn=True, verbose=False)" > /dev/null 2>&1
  echo "${before#*; } first, then Llama(... nothing more): rc $?" | tee -a "$OUT/load-args.txt"
done
# and the backend itself, with Python's stack at the crash (faulthandler) and, where gdb is there, the C stack
cat > /tmp/load-backend.py <<PY
from local_rag.llm.llamacpp import LlamaCppLLM
from local_rag.settings import LLMConfig
LlamaCppLLM(LLMConfig(model='$F', n_ctx=4096))
print("LlamaCppLLM loaded")
PY
python3 -X faulthandler /tmp/load-backend.py > "$OUT/load-backend.txt" 2>&1
echo "LlamaCppLLM(...): rc $? (stack: load-backend.txt)" | tee -a "$OUT/load-args.txt"
grep -a -A12 "Fatal Python error" "$OUT/load-backend.txt" | head -n 14
! command -v gdb > /dev/null || timeout 120 gdb -q -batch -ex run -ex bt --args python3 /tmp/load-backend.py \
  > "$OUT/load-backend-gdb.txt" 2>&1
# when local-rag's thread count crashes the load, the timing runs below use half the cores (llama-cpp-python's default)
T=""; grep -q "^Llama(... n_threads=$P, n_threads_batch=$P): rc 0" "$OUT/load-args.txt" || T="--threads $(( $(nproc) / 2 ))"
step "gpu: qwen2.5-1.5b, qwen2.5-7b"; speed llm-speed-gpu.json --shape qwen2.5-1.5b --shape qwen2.5-7b $V --repeats ${REPEATS:-3} $T
[ -z "${QUICK:-}" ] || { step "done (QUICK: no CPU row, no 14B)"; exit 0; }
step "cpu (the machine's cores): qwen2.5-1.5b"
speed llm-speed-cpu.json --gguf /tmp/local-rag-shapes/qwen2.5-1.5b-random-q4_k_m.gguf --gpu-layers 0 --repeats 1 $T
step "gpu: qwen2.5-14b"; speed llm-speed-gpu-14b.json --shape qwen2.5-14b $V --repeats 3 $T
step done

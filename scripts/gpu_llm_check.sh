#!/usr/bin/env bash
# The LLM and the whole pipeline on a lent GPU machine that cannot download (the device tool), from the repository
# root, carrying .llm (bash scripts/gpu_llm_prepare.sh). Builds llama-cpp-python there with CUDA through
# scripts/install_llama_cpp.sh (its auto-detection, offline: pip finds the trimmed source in .llm), then, in order:
# 1. local-rag's backend loads a model (with local_rag.llm.native's C++-runtime fix off, then on: session 37);
# 2. `local-rag bench` runs the demo's scripted session through the whole pipeline on the GPU (MiniLM-shaped embedder
#    and cross-encoder, a Qwen2.5-7B-shaped GGUF, all random weights: no real model fits in what travels);
# 3. prefill and decode through the backend (`local-rag bench-levers llm-speed`) for the 1.5B and 7B shapes;
# 4. import orders against the C++ runtime, and what libggml-cuda.so exports.
# Where the backend crashes, a plain Llama() times the shapes instead of 2-3. Writes $OUT (or ./gpu-llm-out): 7 files
# (the device tool returns 8 at most: a log tee'd there is the 8th). The build runs detached: if the call ends first,
# run the script again on the warm machine (30 s) and it waits for it.
# Env: BUILD_WAIT (s to wait for the build, 420), REPEATS (3), LLAMA_CPP_CMAKE_ARGS (-DCMAKE_CUDA_ARCHITECTURES=90 on
# an H100/H200: the build took 4.5-5.6 min on 16 cores).
# Results: docs/benchmarks/gpu-llm/ (session 37: s37/).
set -uo pipefail
OUT=${OUT:-gpu-llm-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=/tmp/site:$PWD PATH=$PATH:/usr/local/cuda/bin
command -v nvcc >/dev/null || { n=$(find /usr /opt -name nvcc -type f 2>/dev/null | head -n 1); [ -z "$n" ] || export PATH=$PATH:${n%/nvcc}; }
step() { echo "=== $(date -u +%T) $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .llm/whl/*.whl || exit 1
step machine; { nvidia-smi -L; nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader; nproc
  command -v nvcc && nvcc --version | tail -n 2; python3 -c 'import sys; print(sys.version)'; } 2>&1 | tee /tmp/machine.txt
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
step "doctor"; python3 -m local_rag doctor --json > /tmp/doctor.json 2>&1; grep -a -A2 '"llama_cpp"' /tmp/doctor.json
speed() {  # speed OUTFILE ARGS...: one llm-speed run, llama.cpp's own log lines dropped
  local out=$1; shift
  python3 -m local_rag bench-levers llm-speed "$@" --out "$OUT/$out" 2>&1 | grep -av "^llama\|^load\|^print_info\|^ggml\|^graph"
}
V="--vocab-from .llm/qwen2-vocab.gguf"
step "the backend's load"
F=/tmp/local-rag-shapes/qwen2.5-1.5b-random-q4_k_m.gguf
[ -f $F ] || python3 -c "from local_rag.bench.shape_gguf import SHAPES, write_shape_gguf
write_shape_gguf('$F', SHAPES['qwen2.5-1.5b'], '.llm/qwen2-vocab.gguf')"
nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader -lms 500 > "$OUT/vram.csv" 2>&1 & VRAM_PID=$!
# session 37 (H200): the backend crashed in llama_model::print_info -> std::ostream::_M_insert<long> (resolved in
# libggml-cuda.so) whenever numpy was imported before llama_cpp; local_rag.llm.native makes libstdc++ global first.
# The backend with that off (expect 139) and on, with Python's stack at a crash and, where a gdb is there, the C stack
cat > /tmp/load-backend.py <<PY
from local_rag.llm.llamacpp import LlamaCppLLM
from local_rag.settings import LLMConfig
LlamaCppLLM(LLMConfig(model='$F', n_ctx=4096))
print("LlamaCppLLM loaded")
PY
LOCAL_RAG_CXX_GLOBAL=0 python3 -X faulthandler /tmp/load-backend.py > /dev/null 2>&1
echo "LlamaCppLLM(...), LOCAL_RAG_CXX_GLOBAL=0: rc $?" | tee "$OUT/load-args.txt"
python3 -X faulthandler /tmp/load-backend.py > "$OUT/load-backend.txt" 2>&1
echo "LlamaCppLLM(...): rc $? (stack: load-backend.txt)" | tee /tmp/backend-load.txt | tee -a "$OUT/load-args.txt"
grep -a -A12 "Fatal Python error" "$OUT/load-backend.txt" | head -n 14
G=$(command -v gdb || command -v cuda-gdb || ls /usr/local/cuda/bin/cuda-gdb 2>/dev/null)  # cuda-gdb on the H200
[ -z "$G" ] || grep -q "rc 0" /tmp/backend-load.txt || { timeout 120 "$G" -q -batch -ex run -ex bt \
  --args python3 /tmp/load-backend.py 2>&1 | grep -v "^\[New Thread\|^\[Thread" >> "$OUT/load-backend.txt"; }
grep -a -m1 -A16 "SIGSEGV" "$OUT/load-backend.txt" 2>/dev/null | cut -c1-200
# where the backend crashes, a plain Llama() (which loaded in sessions 25 and 37) times the shapes instead
cat > /tmp/plain-speed.py <<'PY'
import json, os, sys, time, llama_cpp
from local_rag.bench.shape_gguf import SHAPES, write_shape_gguf
from local_rag.bench.llm_speed import WORDS
rows = []
for shape in sys.argv[2:]:
    f = shape if shape.endswith(".gguf") else f"/tmp/local-rag-shapes/{shape}-random-q4_k_m.gguf"
    if not os.path.exists(f):
        write_shape_gguf(f, SHAPES[shape], ".llm/qwen2-vocab.gguf")
    t = time.perf_counter(); llm = llama_cpp.Llama(f, n_ctx=4096, n_gpu_layers=-1, flash_attn=True, verbose=False)
    load = time.perf_counter() - t
    for n in [int(x) for x in os.environ.get("SIZES", "659 1343").split()]:
        text = " ".join(WORDS[i % len(WORDS)] for i in range(n))
        toks = llm.tokenize(text.encode())[:n]
        for rep in range(int(os.environ.get("REPS", "3"))):
            llm.reset(); llama_cpp.llama_perf_context_reset(llm._ctx.ctx)
            t = time.perf_counter(); llm.eval(toks); pre = time.perf_counter() - t
            t = time.perf_counter(); k = 0
            for k in range(128):
                llm.eval([int(llm.sample(temp=0.0))])
            dec = time.perf_counter() - t
            rows.append({"shape": shape, "load_s": round(load, 2), "prompt_tokens": len(toks), "rep": rep,
                         "prefill_s": round(pre, 4), "prefill_tok_s": round(len(toks) / pre, 1),
                         "decode_tokens": 128, "decode_tok_s": round(128 / dec, 1)})
            print(rows[-1], flush=True)
json.dump(rows, open(sys.argv[1], "w"), indent=1)
PY
if grep -q "rc 0" /tmp/backend-load.txt; then
  # session 37: the whole pipeline in one process on the GPU (torch's encoders and llama.cpp's CUDA side by side,
  # FAISS on the CPU: faiss-gpu does not travel), with random weights in the shapes of MiniLM (embedder and
  # cross-encoder, local_rag.bench.shape_encoder) and of Qwen2.5-7B Q4_K_M: times, memory and where each stage ran
  step "the pipeline on the GPU, random weights of MiniLM's and Qwen2.5-7B's shapes (bench-gpu-shapes.{json,md})"
  S=/tmp/shapes; F7=/tmp/local-rag-shapes/qwen2.5-7b-random-q4_k_m.gguf; mkdir -p $S
  python3 -c "from local_rag.bench.shape_encoder import write_random_encoder as w
w('.llm/minilm', '$S/minilm'); w('.llm/minilm', '$S/ce', cross_encoder=True)
import os; from local_rag.bench.shape_gguf import SHAPES, write_shape_gguf
os.path.exists('$F7') or write_shape_gguf('$F7', SHAPES['qwen2.5-7b'], '.llm/qwen2-vocab.gguf')" 2>&1 | grep -a "rror"
  cat > $S/gpu-shapes.yaml <<Y
embedder: {backend: sentence-transformers, model: $S/minilm, batch_size: 64, max_length: 256}
llm: {model: $F7, n_ctx: 8192, n_gpu_layers: -1}
reranker: {backend: sentence-transformers, model: $S/ce, candidates: 30, batch_size: 32, max_length: 512}
pipeline: {cross_encoder: true}
Y
  C="--profile gpu-8gb --config $S/gpu-shapes.yaml"
  python3 -m local_rag index build local_rag/data/docs $C --index gpu-shapes 2>&1 | grep -a "built\|rror"
  python3 -m local_rag plan $C --index gpu-shapes 2>&1 | tail -n 18
  python3 -m local_rag bench $C --index gpu-shapes -n 1 --repeats 2 --build-passages 0 --no-plot --out "$OUT" \
    --name bench-gpu-shapes 2>&1 | grep -av "^rewrite: \|^llama\|^load\|^print_info\|^ggml\|^graph" | tail -n 12
  step "gpu: qwen2.5-1.5b, qwen2.5-7b"; speed llm-speed-gpu.json --shape qwen2.5-1.5b --shape qwen2.5-7b $V --repeats ${REPEATS:-3}
else
  step "the backend crashed: a plain Llama() times the shapes instead (plain-speed.json)"
  python3 /tmp/plain-speed.py "$OUT/plain-speed.json" qwen2.5-1.5b qwen2.5-7b 2>&1 | grep -av "^llama\|^load\|^print_info\|^ggml\|^graph"
fi
step "import orders and the C++ runtime (load-args.txt): rc 0 loads, 139 crashes"
L0="import llama_cpp; llama_cpp.Llama('$F', n_ctx=4096, n_gpu_layers=-1, flash_attn=True, verbose=False)"
GL="import ctypes; ctypes.CDLL('libstdc++.so.6', mode=ctypes.RTLD_GLOBAL)"
t() { local label=$1; shift; timeout 90 env "$@" > /dev/null 2>&1; echo "$label: rc $?" | tee -a "$OUT/load-args.txt"; }
t "numpy, llama_cpp" python3 -c "import numpy; $L0"
t "numpy, libstdc++ global, llama_cpp" python3 -c "import numpy; $GL; $L0"
t "torch, libstdc++ global, llama_cpp" python3 -c "import torch; $GL; $L0"
t "sentence_transformers, a CUDA tensor, libstdc++ global, llama_cpp" python3 -c "import sentence_transformers, torch; torch.zeros(1, device='cuda'); $GL; $L0"
t "torch, llama_cpp" python3 -c "import torch; $L0"
t "llama_cpp's libraries, numpy, torch, llama_cpp" python3 -c "import llama_cpp.llama_cpp; import numpy, torch; $L0"
t "LD_PRELOAD=libstdc++.so.6, numpy, llama_cpp" LD_PRELOAD=libstdc++.so.6 python3 -c "import numpy; $L0"
LIB=$(python3 -c "import llama_cpp, os; print(os.path.dirname(llama_cpp.llama_cpp.__file__))")/lib
{ echo "--- $LIB"; ls "$LIB"; ldd "$LIB"/libllama.so | grep -v vdso
  echo "--- C++ runtime symbols libggml-cuda.so exports: $(nm -D --defined-only "$LIB"/libggml-cuda.so | grep -c ' _ZNS\| _ZSt')"
  nm -D --defined-only "$LIB"/libggml-cuda.so | grep "_M_insertIl"
  for first in "import llama_cpp; import numpy" "import numpy; import llama_cpp"; do
    echo "--- bindings of _M_insert<long>, $first"
    LD_DEBUG=bindings python3 -c "$first" 2>&1 | grep "_M_insertIl" | sed 's/^ *[0-9]*: *//' | head -n 4
  done; } >> "$OUT/load-args.txt" 2>&1
kill $VRAM_PID 2>/dev/null  # the VRAM sampler
step done

#!/usr/bin/env bash
# Build llama-cpp-python for this machine once, cache the wheel keyed by its build flags, install it into a venv.
#
#   bash scripts/install_llama_cpp.sh [VENV]      (default .venv)
#
#   bash scripts/install_llama_cpp.sh --print-key (the wheel cache folder this machine uses, for other scripts)
#
# Flavour: CUDA (-DGGML_CUDA=on) only when nvcc is present AND a GPU is visible (nvidia-smi -L succeeds); otherwise
# a CPU build; AMX disabled in both (the default native build crashes on CPUs with AMX). The build is native: it uses
# every vector extension of this CPU and stops with an illegal instruction on a CPU without one of them, so the key
# names them: wheels are cached under ~/.cache/local-rag/wheels/<flavour>-noamx-<hash of the CPU's avx/fma/f16c/bmi/amx
# flags>/, and a second venv or a CI run on the same kind of CPU installs in seconds, while another CPU (a shared home,
# a persisted venv on a new machine) gets its own build. LLAMA_CPP_PORTABLE=1 builds without -march=native instead
# (-DGGML_NATIVE=OFF: AVX2/FMA/F16C, for any x86-64-v3 CPU; key <flavour>-noamx-portable), for a wheelhouse carried
# to other machines. After installing, the build is checked against this CPU (local_rag.llm.cpu_build).
# Building takes ~10-15 min (CPU) or about an hour (CUDA) on 2 cores; the CUDA build took 4-5.5 min on 16 cores of a
# lent H100 machine (docs/benchmarks.md, session 25). Overrides: LLAMA_CPP_VERSION,
# LOCAL_RAG_WHEEL_CACHE, LLAMA_CPP_FLAVOUR=cpu|cuda, LLAMA_CPP_CMAKE_ARGS (appended, e.g. -DLLAVA_BUILD=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
print_key=0
[ "${1:-}" = --print-key ] && { print_key=1; shift; }
VENV=${1:-${VENV:-.venv}}
VERSION=${LLAMA_CPP_VERSION:-0.3.36}
CACHE=${LOCAL_RAG_WHEEL_CACHE:-$HOME/.cache/local-rag/wheels}
PY="$VENV/bin/python"
[ "$print_key" = 1 ] || [ -x "$PY" ] || { echo "install_llama_cpp: no python at $PY (create the venv first)" >&2; exit 1; }

flavour=${LLAMA_CPP_FLAVOUR:-}
if [ -z "$flavour" ]; then
  if command -v nvcc >/dev/null 2>&1 && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    flavour=cuda
  else
    flavour=cpu
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
      echo "install_llama_cpp: WARNING: a GPU is visible but nvcc is not on PATH: building for the CPU (the LLM will" \
           "not use the GPU; install the CUDA toolkit and rerun; \`local-rag doctor\` warns about it)" >&2
    fi
  fi
fi
# AMX off in both flavours: a CUDA build has the same CPU backend, which holds what llama.cpp keeps on the CPU (the
# token embeddings, all of the model with n_gpu_layers 0)
noamx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
if [ "$flavour" = cuda ]; then
  key=cuda-noamx
  cmake_args="-DGGML_CUDA=on -DCMAKE_C_FLAGS='$noamx' -DCMAKE_CXX_FLAGS='$noamx'"
else
  key=cpu-noamx
  cmake_args="-DCMAKE_C_FLAGS='$noamx' -DCMAKE_CXX_FLAGS='$noamx'"
fi
if [ "${LLAMA_CPP_PORTABLE:-0}" = 1 ]; then
  key=$key-portable
  cmake_args="$cmake_args -DGGML_NATIVE=OFF"
else
  simd=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | tr ' ' '\n' | grep -E '^(avx|fma|f16c|bmi|amx)' | sort | tr '\n' ' ' || true)
  key=$key-$(printf '%s' "$simd" | sha256sum | cut -c1-8)
fi
cmake_args="$cmake_args ${LLAMA_CPP_CMAKE_ARGS:-}"
[ "$print_key" = 1 ] && { echo "$key"; exit 0; }

stamp="$VENV/.llama-cpp-$key-$VERSION"
if [ -f "$stamp" ] && "$PY" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$VERSION')" 2>/dev/null; then
  echo "install_llama_cpp: llama-cpp-python $VERSION ($key) already installed"
  exit 0
fi

wheel=$(ls "$CACHE/$key"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -n1 || true)
if [ -z "$wheel" ]; then
  echo "install_llama_cpp: building llama-cpp-python $VERSION ($key: $cmake_args); this takes a while"
  mkdir -p "$CACHE/$key"
  build=$(mktemp -d)
  trap 'rm -rf "$build"' EXIT
  CMAKE_ARGS="$cmake_args" FORCE_CMAKE=1 CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$PY" -m pip wheel --no-deps --no-cache-dir --no-binary llama-cpp-python -w "$build" "llama-cpp-python==$VERSION"
  built=$(ls "$build"/llama_cpp_python-*.whl | head -n1)
  echo "${simd:-portable (GGML_NATIVE=OFF)}" > "$CACHE/$key/cpu-flags.txt"   # what the build may use
  mv "$built" "$CACHE/$key/.partial.whl"          # rename last: an interrupted build leaves no half wheel
  wheel="$CACHE/$key/$(basename "$built")"
  mv "$CACHE/$key/.partial.whl" "$wheel"
fi

echo "install_llama_cpp: installing $wheel"
"$PY" -m pip install --disable-pip-version-check -q --no-cache-dir "$wheel"
"$PY" -c "import llama_cpp; print('install_llama_cpp: llama-cpp-python', llama_cpp.__version__, \
'GPU offload' if llama_cpp.llama_supports_gpu_offload() else 'CPU')"
# the build against this CPU, in a child process (a wheel built for another CPU is named, not run)
if "$PY" -c "import local_rag" 2>/dev/null; then
  "$PY" - <<'PYEOF' || exit 1
import sys
from local_rag.llm.cpu_build import advice, installed_build
result = installed_build() or {"error": "llama_cpp is not installed"}  # cached: the first model load asks no more
line = advice(result) or result.get("error")
print("install_llama_cpp: " + (line or "the build runs on this CPU (" + " ".join(result["features"]) + ")"))
sys.exit(1 if line else 0)
PYEOF
fi
rm -f "$VENV"/.llama-cpp-*
touch "$stamp"

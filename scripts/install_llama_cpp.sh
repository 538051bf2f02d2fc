#!/usr/bin/env bash
# Build llama-cpp-python for this machine once, cache the wheel keyed by its build flags, install it into a venv.
#
#   bash scripts/install_llama_cpp.sh [VENV]      (default .venv)
#
# Flavour: CUDA (-DGGML_CUDA=on) only when nvcc is present AND a GPU is visible (nvidia-smi -L succeeds); otherwise
# a CPU build; AMX disabled in both (the default native build crashes on CPUs with AMX). Wheels are cached under
# ~/.cache/local-rag/wheels/<key>/ (key: cuda-noamx | cpu-noamx), so a second venv or a CI run installs in seconds.
# Building takes ~10-15 min (CPU) or about an hour (CUDA) on 2 cores; the CUDA build took 4-5.5 min on 16 cores of a
# lent H100 machine (docs/benchmarks.md, session 25). Overrides: LLAMA_CPP_VERSION,
# LOCAL_RAG_WHEEL_CACHE, LLAMA_CPP_FLAVOUR=cpu|cuda, LLAMA_CPP_CMAKE_ARGS (appended, e.g. -DLLAVA_BUILD=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-${VENV:-.venv}}
VERSION=${LLAMA_CPP_VERSION:-0.3.36}
CACHE=${LOCAL_RAG_WHEEL_CACHE:-$HOME/.cache/local-rag/wheels}
PY="$VENV/bin/python"
[ -x "$PY" ] || { echo "install_llama_cpp: no python at $PY (create the venv first)" >&2; exit 1; }

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
cmake_args="$cmake_args ${LLAMA_CPP_CMAKE_ARGS:-}"

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
  mv "$built" "$CACHE/$key/.partial.whl"          # rename last: an interrupted build leaves no half wheel
  wheel="$CACHE/$key/$(basename "$built")"
  mv "$CACHE/$key/.partial.whl" "$wheel"
fi

echo "install_llama_cpp: installing $wheel"
"$PY" -m pip install --disable-pip-version-check -q --no-cache-dir "$wheel"
"$PY" -c "import llama_cpp; print('install_llama_cpp: llama-cpp-python', llama_cpp.__version__, \
'GPU offload' if llama_cpp.llama_supports_gpu_offload() else 'CPU')"
rm -f "$VENV"/.llama-cpp-*
touch "$stamp"

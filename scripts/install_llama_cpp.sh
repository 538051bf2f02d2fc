#!/usr/bin/env bash
# Build llama-cpp-python for this machine once, cache the wheel keyed by its build flags, install it into a venv.
#
#   bash scripts/install_llama_cpp.sh [VENV]      (default .venv)
#
#   bash scripts/install_llama_cpp.sh --print-key (the wheel cache folder this machine uses, for other scripts)
#
# Flavour: CUDA (-DGGML_CUDA=on) only when nvcc is present AND a GPU is visible (nvidia-smi -L succeeds); otherwise
# a CPU build. AMX (Intel's matrix tiles, Sapphire Rapids and later) is used by a native CPU build only where the CPU
# lists amx_int8/amx_tile/avx512_vnni AND the kernel grants the tile state (arch_prctl ARCH_REQ_XCOMP_PERM, probed
# here); such a build is patched first (scripts/patches/llama-cpp-amx-tile-config.patch: unpatched, the AMX kernels
# crash with SIGILL at the first prompt, or at the second turn beside torch) and prefills ~1.5x faster
# (docs/benchmarks.md, session 28). Everywhere else, and in CUDA and portable builds, AMX is off. LLAMA_CPP_AMX=0 turns it off, =1 insists (fails if not granted).
# The build is native: it uses
# every vector extension of this CPU and stops with an illegal instruction on a CPU without one of them, so the key
# names them: wheels are cached under ~/.cache/local-rag/wheels/<flavour>-<amx|noamx>-<hash of the CPU's
# avx/fma/f16c/bmi/amx flags>/, and a second venv or a CI run on the same kind of CPU installs in seconds, while another
# CPU (a shared home, a persisted venv on a new machine) gets its own build. LLAMA_CPP_PORTABLE=1 builds without
# -march=native instead (-DGGML_NATIVE=OFF: AVX2/FMA/F16C, for any x86-64-v3 CPU; key <flavour>-noamx-portable), for a
# wheelhouse carried
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
# AMX: only a native CPU build on a CPU whose kernel grants the tile state (a CUDA build keeps its CPU backend for what
# llama.cpp leaves on the CPU, the token embeddings: AMX stays off there)
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | tr ' ' '\n' || true)   # one flag a line
amx_granted() {
  local flag
  for flag in amx_int8 amx_tile avx512_vnni; do
    printf '%s\n' "$cpu_flags" | grep -qx "$flag" || return 1
  done
  # arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): 0 where the kernel lets a process use the tiles
  python3 -c "import ctypes, sys; sys.exit(ctypes.CDLL(None, use_errno=True).syscall(158, 0x1023, 18) != 0)" 2>/dev/null
}
amx=0
if [ "$flavour" = cpu ] && [ "${LLAMA_CPP_PORTABLE:-0}" != 1 ] && [ "${LLAMA_CPP_AMX:-auto}" != 0 ]; then
  if amx_granted && command -v patch >/dev/null 2>&1; then
    amx=1
  elif [ "${LLAMA_CPP_AMX:-auto}" = 1 ]; then
    echo "install_llama_cpp: LLAMA_CPP_AMX=1 but this CPU or its kernel does not offer AMX tiles (or \`patch\` is missing)" >&2
    exit 1
  fi
fi
noamx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
if [ "$flavour" = cuda ]; then
  key=cuda-noamx
  cmake_args="-DGGML_CUDA=on -DCMAKE_C_FLAGS='$noamx' -DCMAKE_CXX_FLAGS='$noamx'"
elif [ "$amx" = 1 ]; then
  key=cpu-amx
  cmake_args=""
else
  key=cpu-noamx
  cmake_args="-DCMAKE_C_FLAGS='$noamx' -DCMAKE_CXX_FLAGS='$noamx'"
fi
if [ "${LLAMA_CPP_PORTABLE:-0}" = 1 ]; then
  key=$key-portable
  cmake_args="$cmake_args -DGGML_NATIVE=OFF"
else
  simd=$(printf '%s\n' "$cpu_flags" | grep -E '^(avx|fma|f16c|bmi|amx)' | sort | tr '\n' ' ' || true)
  key=$key-$(printf '%s' "$simd" | sha256sum | cut -c1-8)
fi
[ -n "${LLAMA_CPP_CMAKE_ARGS:-}" ] && cmake_args="$cmake_args $LLAMA_CPP_CMAKE_ARGS"
[ "$print_key" = 1 ] && { echo "$key"; exit 0; }

stamp="$VENV/.llama-cpp-$key-$VERSION"
if [ -f "$stamp" ] && "$PY" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$VERSION')" 2>/dev/null; then
  echo "install_llama_cpp: llama-cpp-python $VERSION ($key) already installed"
  exit 0
fi

wheel=$(ls "$CACHE/$key"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -n1 || true)
if [ -z "$wheel" ]; then
  echo "install_llama_cpp: building llama-cpp-python $VERSION ($key: ${cmake_args:-native, AMX on, patched}); this takes a while"
  mkdir -p "$CACHE/$key"
  build=$(mktemp -d)
  trap 'rm -rf "$build"' EXIT
  source="llama-cpp-python==$VERSION"
  if [ "$amx" = 1 ]; then   # the AMX build is made from the sdist with the tile-config patch applied
    "$PY" -m pip download -q --no-deps --no-binary :all: --dest "$build" "llama-cpp-python==$VERSION"
    tar xzf "$build"/llama_cpp_python-"$VERSION".tar.gz -C "$build"
    source="$build/llama_cpp_python-$VERSION"
    patch -d "$source" -p1 --forward < scripts/patches/llama-cpp-amx-tile-config.patch
  fi
  CMAKE_ARGS="$cmake_args" FORCE_CMAKE=1 CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$PY" -m pip wheel --no-deps --no-cache-dir --no-binary llama-cpp-python -w "$build/wheel" "$source"
  built=$(ls "$build"/wheel/llama_cpp_python-*.whl | head -n1)
  echo "${simd:-portable (GGML_NATIVE=OFF)}" > "$CACHE/$key/cpu-flags.txt"   # what the build may use
  mv "$built" "$CACHE/$key/.partial.whl"          # rename last: an interrupted build leaves no half wheel
  wheel="$CACHE/$key/$(basename "$built")"
  mv "$CACHE/$key/.partial.whl" "$wheel"
fi

echo "install_llama_cpp: installing $wheel"
"$PY" -m pip install --disable-pip-version-check -q --no-cache-dir "$wheel"   # with its dependencies
# and again by force: with the same version installed (another build: AMX on/off, another CPU) pip does nothing above
"$PY" -m pip install --disable-pip-version-check -q --no-cache-dir --force-reinstall --no-deps "$wheel"
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

#!/usr/bin/env bash
# Build llama.cpp's own `llama-bench` from the llama.cpp that llama-cpp-python vendors (the same version and the same
# CPU flags as scripts/install_llama_cpp.sh: native, AMX off), so the binding's speed can be set against llama.cpp's
# on the same GGUF (`local-rag bench-levers llm-speed` vs llama-bench; docs/benchmarks.md, issue 26).
#
#   bash scripts/build_llama_bench.sh            -> prints the path of the binary
#
# The source is llama-cpp-python's sdist: $LLAMA_CPP_SDIST if set, else downloaded once from PyPI into the cache
# (pip download --no-binary). Built once under ~/.cache/local-rag/llama-bench-<version>/ (CPU only: ggml, llama and
# common, ~10-15 min on 2 cores); a second call prints the path at once. Env: LLAMA_CPP_VERSION, LOCAL_RAG_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${LLAMA_CPP_VERSION:-0.3.36}
CACHE=${LOCAL_RAG_CACHE:-$HOME/.cache/local-rag}
DIR="$CACHE/llama-bench-$VERSION"
BIN="$DIR/build/bin/llama-bench"
[ -x "$BIN" ] && { echo "$BIN"; exit 0; }
mkdir -p "$DIR"
SDIST=${LLAMA_CPP_SDIST:-$DIR/llama_cpp_python-$VERSION.tar.gz}
if [ ! -f "$SDIST" ]; then
  echo "build_llama_bench: downloading llama-cpp-python $VERSION's source from PyPI" >&2
  .venv/bin/python -m pip download -q --no-deps --no-binary :all: --dest "$DIR" "llama-cpp-python==$VERSION" >&2 \
    || { echo "build_llama_bench: could not download the sdist; set LLAMA_CPP_SDIST to a local copy" >&2; exit 1; }
fi
if [ ! -f "$DIR/src/CMakeLists.txt" ]; then
  rm -rf "$DIR/src.tmp" && mkdir -p "$DIR/src.tmp"
  tar xzf "$SDIST" -C "$DIR/src.tmp" --strip-components=3 "llama_cpp_python-$VERSION/vendor/llama.cpp"
  mv "$DIR/src.tmp" "$DIR/src"
fi
noamx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
echo "build_llama_bench: cmake (CPU, native, AMX off), target llama-bench, $(nproc) jobs" >&2
cmake -S "$DIR/src" -B "$DIR/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DCMAKE_C_FLAGS="$noamx" -DCMAKE_CXX_FLAGS="$noamx" > "$DIR/cmake.log" 2>&1 \
  || { tail -n 30 "$DIR/cmake.log" >&2; exit 1; }
cmake --build "$DIR/build" --target llama-bench -j "$(nproc)" > "$DIR/build.log" 2>&1 \
  || { tail -n 30 "$DIR/build.log" >&2; exit 1; }
echo "$BIN"

#!/usr/bin/env bash
# Build llama.cpp's own `llama-bench` from the llama.cpp that llama-cpp-python vendors (the same version and the same
# CPU flags as scripts/install_llama_cpp.sh: native, AMX off), so the binding's speed can be set against llama.cpp's
# on the same GGUF (`local-rag bench-levers llm-speed` vs llama-bench; docs/benchmarks.md, issue 26).
#
#   bash scripts/build_llama_bench.sh            -> prints the path of the binary
#   LLAMA_CPP_AMX=1 bash scripts/build_llama_bench.sh   -> the AMX build (patched as install_llama_cpp.sh patches it)
#
# The source is llama-cpp-python's sdist: $LLAMA_CPP_SDIST if set, else downloaded once from PyPI into the cache
# (pip download --no-binary). Built once under ~/.cache/local-rag/llama-bench-<version>/ (CPU only: ggml, llama and
# common, ~10-15 min on 2 cores); a second call prints the path at once. Env: LLAMA_CPP_VERSION, LOCAL_RAG_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${LLAMA_CPP_VERSION:-0.3.36}
CACHE=${LOCAL_RAG_CACHE:-$HOME/.cache/local-rag}
DIR="$CACHE/llama-bench-$VERSION"
amx=${LLAMA_CPP_AMX:-0}
SRC="$DIR/src" BUILD="$DIR/build"
[ "$amx" = 1 ] && SRC="$DIR/src-amx" BUILD="$DIR/build-amx"
BIN="$BUILD/bin/llama-bench"
[ -x "$BIN" ] && { echo "$BIN"; exit 0; }
mkdir -p "$DIR"
SDIST=${LLAMA_CPP_SDIST:-$DIR/llama_cpp_python-$VERSION.tar.gz}
if [ ! -f "$SRC/CMakeLists.txt" ] && [ ! -f "$SDIST" ]; then
  echo "build_llama_bench: downloading llama-cpp-python $VERSION's source from PyPI" >&2
  .venv/bin/python -m pip download -q --no-deps --no-binary :all: --dest "$DIR" "llama-cpp-python==$VERSION" >&2 \
    || { echo "build_llama_bench: could not download the sdist; set LLAMA_CPP_SDIST to a local copy" >&2; exit 1; }
fi
if [ ! -f "$SRC/CMakeLists.txt" ]; then
  rm -rf "$SRC.tmp" && mkdir -p "$SRC.tmp"
  tar xzf "$SDIST" -C "$SRC.tmp" --strip-components=1 "llama_cpp_python-$VERSION/vendor/llama.cpp"
  [ "$amx" = 1 ] && patch -d "$SRC.tmp" -p1 --forward < scripts/patches/llama-cpp-amx-tile-config.patch >&2
  mv "$SRC.tmp/vendor/llama.cpp" "$SRC" && rm -rf "$SRC.tmp"
fi
flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
[ "$amx" = 1 ] && flags=""
echo "build_llama_bench: cmake (CPU, native, AMX $([ "$amx" = 1 ] && echo on || echo off)), target llama-bench, $(nproc) jobs" >&2
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" > "$BUILD.cmake.log" 2>&1 \
  || { tail -n 30 "$BUILD.cmake.log" >&2; exit 1; }
cmake --build "$BUILD" --target llama-bench -j "$(nproc)" > "$BUILD.build.log" 2>&1 \
  || { tail -n 30 "$BUILD.build.log" >&2; exit 1; }
echo "$BIN"

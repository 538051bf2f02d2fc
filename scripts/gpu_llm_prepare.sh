#!/usr/bin/env bash
# Prepare what scripts/gpu_llm_check.sh carries to a GPU machine that cannot download (the device tool: 64 MiB at
# most), in .llm/ (ignored through .git/info/exclude): llama-cpp-python's source without its docs, tests, test
# vocabularies, git history and the ggml backends other than CPU/CUDA (the 77 MB sdist trimmed to ~6 MB; built there
# with CUDA by scripts/install_llama_cpp.sh), the small wheels local-rag and llama-cpp-python need that the machine's
# image lacks (cp312; faiss-cpu is 18 MB of them), the tokenizer and chat template of Qwen2.5-Coder-1.5B as a
# vocab-only GGUF (6 MB) and MiniLM's config and tokenizer (0.7 MB): the random-weight models are written there. Then:
#   bash scripts/gpu_llm_check.sh          (carrying .llm)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
VERSION=${LLAMA_CPP_VERSION:-0.3.36}
grep -qx '/.llm/' .git/info/exclude 2>/dev/null || echo /.llm/ >> .git/info/exclude
mkdir -p .llm/whl
if [ ! -f ".llm/llama_cpp_python-$VERSION.tar.gz" ]; then
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  $PY -m pip download -q --no-deps --no-binary :all: -d "$tmp" "llama-cpp-python==$VERSION"
  tar xzf "$tmp/llama_cpp_python-$VERSION.tar.gz" -C "$tmp"
  src="$tmp/llama_cpp_python-$VERSION"; v="$src/vendor/llama.cpp"
  rm -rf "$src/.git" "$v/docs" "$v/benches" "$v/tools/ui" "$v/media" "$v/.github" "$v/tests"
  for b in cann et hexagon metal opencl openvino sycl virtgpu vulkan webgpu zdnn zendnn; do rm -rf "$v/ggml/src/ggml-$b"; done
  find "$v/models" -type f -delete
  tar czf ".llm/llama_cpp_python-$VERSION.tar.gz" -C "$tmp" "llama_cpp_python-$VERSION"
fi
plat=""; for p in manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014 manylinux1 manylinux_2_24 manylinux_2_31 manylinux_2_34; do plat="$plat --platform ${p}_x86_64"; done
names="annotated-types bm25s diskcache faiss-cpu gguf platformdirs prompt_toolkit pydantic pydantic_core pydantic-settings PyStemmer python-dotenv typing-inspection wcwidth"
pins=$($PY -m pip list --format=freeze 2>/dev/null | grep -i -E "^($(echo $names | tr ' ' '|' | sed 's/[-_]/[-_]/g'))==" )
$PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $plat --platform any -d .llm/whl $pins
[ -f .llm/qwen2-vocab.gguf ] || $PY -c "
import glob; from local_rag.bench.shape_gguf import write_vocab_gguf
write_vocab_gguf('.llm/qwen2-vocab.gguf', glob.glob('models/qwen2.5-coder-1.5b-instruct-q4_k_m/*.gguf')[0])"
# the small files of all-MiniLM-L6-v2 (no weights): gpu_llm_check.sh draws random weights of its shape there, for
# the embedder and a cross-encoder (local_rag.bench.shape_encoder), to run the whole pipeline on the GPU
$PY -c "from local_rag.bench.shape_encoder import copy_small_files; copy_small_files('models/all-MiniLM-L6-v2', '.llm/minilm')"
total=$(( $(du -sb .llm | cut -f1) + $(git ls-files -z | xargs -0 du -cb | tail -n 1 | cut -f1) ))
echo "travels: .llm $(du -sh .llm | cut -f1) + the tracked files = $(( total / 1048576 )) MiB of the device tool's 64"
[ "$total" -lt 67108864 ] || echo "gpu_llm_prepare: WARNING: over 64 MiB, the call will be refused" >&2

#!/usr/bin/env bash
# Prepare what scripts/gpu_llm_check.sh carries to a GPU machine that cannot download (the device tool: 64 MiB at
# most), in .llm/ (ignored through .git/info/exclude): llama-cpp-python's source without its docs, test vocabularies
# and git history (11 MB of the 77 MB sdist; built there with CUDA by scripts/install_llama_cpp.sh), the small wheels
# local-rag and llama-cpp-python need that the machine's image lacks (cp312), and the tokenizer and chat template of
# Qwen2.5-Coder-1.5B as a vocab-only GGUF (6 MB): the random-weight models are written there. Then, there:
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
  rm -rf "$src/.git" "$v/docs" "$v/benches" "$v/tools/ui" "$v/media" "$v/.github"
  find "$v/models" -type f -delete
  tar czf ".llm/llama_cpp_python-$VERSION.tar.gz" -C "$tmp" "llama_cpp_python-$VERSION"
fi
plat=""; for p in manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014 manylinux1 manylinux_2_24 manylinux_2_31 manylinux_2_34; do plat="$plat --platform ${p}_x86_64"; done
names="annotated-types bm25s diskcache gguf platformdirs prompt_toolkit pydantic pydantic_core pydantic-settings PyStemmer python-dotenv typing-inspection wcwidth"
pins=$($PY -m pip list --format=freeze 2>/dev/null | grep -i -E "^($(echo $names | tr ' ' '|' | sed 's/[-_]/[-_]/g'))==" )
$PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $plat --platform any -d .llm/whl $pins
[ -f .llm/qwen2-vocab.gguf ] || $PY -c "
import glob; from local_rag.bench.shape_gguf import write_vocab_gguf
write_vocab_gguf('.llm/qwen2-vocab.gguf', glob.glob('models/qwen2.5-coder-1.5b-instruct-q4_k_m/*.gguf')[0])"
du -sh .llm .llm/*

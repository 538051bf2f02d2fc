#!/usr/bin/env bash
# Create .venv-peer: the benchmark-only environment for scripts/bench_peer.py (local-rag side by side with a
# LlamaIndex pipeline on the same models). LlamaIndex is NOT a dependency of local-rag; it lives only here.
#
#   bash scripts/peer_env.sh            # then: .venv-peer/bin/python scripts/bench_peer.py --help
#
# Holds: torch==2.13.0 (the CPU wheel; an unpinned torch pulls a multi-GB CUDA build), local-rag itself
# (pip install -e ".[cpu]"), rouge-score and pytrec-eval-terrier (the report's metrics), the llama-cpp-python wheel that scripts/install_llama_cpp.sh built and
# cached for this machine (installed from the cache, never rebuilt here: run `make bootstrap` first), and the
# LlamaIndex packages pinned below. Idempotent: a stamp keyed by this file and pyproject.toml skips work done.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${PEER_VENV:-.venv-peer}
PYTHON=${PYTHON:-python3}
LLAMA_CPP_VERSION=${LLAMA_CPP_VERSION:-0.3.36}
CACHE=${LOCAL_RAG_WHEEL_CACHE:-$HOME/.cache/local-rag/wheels}
# The peer framework, pinned so the figures can be reproduced (the versions the committed figures were taken with).
PEER_PACKAGES=(
  "llama-index-core==0.14.25"
  "llama-index-retrievers-bm25==0.8.0"
  "llama-index-embeddings-huggingface==0.8.0"
)
# llama-index-llms-llama-cpp declares llama-cpp-python: installed with --no-deps so pip never builds llama.cpp.
PEER_NO_DEPS=("llama-index-llms-llama-cpp==0.7.0")

key=$(cat pyproject.toml scripts/peer_env.sh | sha256sum | cut -c1-16)
stamp="$VENV/.peer-$key"
[ -f "$stamp" ] && { echo "peer_env: $VENV is up to date"; exit 0; }

# the wheel scripts/install_llama_cpp.sh built for this machine: its flavour (CUDA only where nvcc is there and a GPU
# is visible) and this CPU's vector extensions
key_dir=$(bash scripts/install_llama_cpp.sh --print-key)
wheel=$(ls "$CACHE/$key_dir"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl 2>/dev/null | head -n1 || true)
if [ -z "$wheel" ]; then
  echo "peer_env: no cached llama-cpp-python $LLAMA_CPP_VERSION wheel under $CACHE/$key_dir;" \
       "run 'make bootstrap' (scripts/install_llama_cpp.sh builds and caches it) first" >&2
  exit 1
fi

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check "$@"; }
pip install -q --upgrade pip
if [ "${key_dir#cuda-}" != "$key_dir" ]; then
  pip install -q torch
  extra=gpu
else
  pip install -q torch==2.13.0          # the CPU wheel
  extra=cpu
fi
pip install -q --no-cache-dir "$wheel"
pip install -q -e ".[$extra]" "rouge-score>=0.1.2" "pytrec-eval-terrier>=0.5.6" gguf   # the report's nDCG (Task A metrics)
pip install -q "${PEER_PACKAGES[@]}"
pip install -q --no-deps "${PEER_NO_DEPS[@]}"
# the peer must not have replaced the pinned torch or the cached llama.cpp build
"$VENV/bin/python" - <<EOF
import llama_cpp, pytrec_eval, torch
import llama_index.core, llama_index.llms.llama_cpp, llama_index.retrievers.bm25, llama_index.embeddings.huggingface
assert torch.__version__.startswith("2.13.0"), torch.__version__
assert llama_cpp.__version__ == "$LLAMA_CPP_VERSION", llama_cpp.__version__
print("peer_env: torch", torch.__version__, "| llama-cpp-python", llama_cpp.__version__,
      "| llama-index-core", llama_index.core.__version__)
EOF
rm -f "$VENV"/.peer-*
touch "$stamp"
echo "peer_env: done ($VENV)"

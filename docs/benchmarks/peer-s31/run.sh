#!/usr/bin/env bash
# Issue 26, session 31: the lever left by session 30 for "equal quality" against LlamaIndex: fuller answers
# (generate.prompt answer_history_first_full: every relevant detail, usually 3 to 6 sentences, a three-sentence
# example) beside the shipped default `cpu` and the peer, on the 24 govt turns of sessions 17-30 (same GGUF
# Qwen2.5-Coder-1.5B Q4_K_M, all-MiniLM-L6-v2, 2 threads both sides). Machine: whatever runs it (session 31: the
# 2-core AMD EPYC VM, no AMX: prompt lookup off in `cpu`, as `llm.prompt_lookup: -1` decides).
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/peer-s31/run.sh      (then judge.sh)
set -euo pipefail
cd "$(dirname "$0")/../../.."
.venv-peer/bin/python scripts/bench_peer.py --profile cpu --domain govt --tasks 24 --seed 0 --rows peer,ours-rewrite \
  --variant ours-full:generate.prompt=answer_history_first_full --out docs/benchmarks/peer-s31

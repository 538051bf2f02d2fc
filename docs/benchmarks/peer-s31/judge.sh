#!/usr/bin/env bash
# Issue 26, session 31: the answers of the peer benchmark in this folder (peer.json) or of the second run
# (RUN=docs/benchmarks/peer-s31-e600, from e600.sh), judged as in session 30 with scripts/judge_peer.sh: both LLM
# judges (Qwen2.5-Coder-1.5B Q4_K_M, MiniLM BERTScore: not comparable to official figures); one row alone with two
# judge threads, several side by side with one each. The 24 govt turns come from both splits; nothing was learned
# from them. Session 31 judged ours-full first (13 min on the Zen 5 VM), then ROWS="peer ours-rewrite" (22 min):
#   local-rag eval compare docs/benchmarks/peer-s31/judged-peer docs/benchmarks/peer-s31/judged-ours-rewrite
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/peer-s31/judge.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROWS=${ROWS:-ours-full} exec bash scripts/judge_peer.sh "${RUN:-docs/benchmarks/peer-s31}"

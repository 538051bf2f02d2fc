#!/usr/bin/env bash
# Issue 26, session 30: the answers of the peer benchmark in this folder (peer.json), judged like session 18's
# (docs/benchmarks/peer-levers) with scripts/judge_peer.sh: both LLM judges (Qwen2.5-Coder-1.5B Q4_K_M, MiniLM
# BERTScore: not comparable to official figures), the two rows side by side with one judge thread each, as in session
# 18. The 24 govt turns come from both splits; nothing was learned from them.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/peer-s30/judge.sh   (~1 h for two rows on the Intel VM)
set -euo pipefail
cd "$(dirname "$0")/../../.."
# ours-e800 and ours-cold too: ROWS="ours-e800 ours-cold"
ROWS=${ROWS:-peer ours-rewrite} JUDGE_THREADS=1 exec bash scripts/judge_peer.sh docs/benchmarks/peer-s30

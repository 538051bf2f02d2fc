#!/usr/bin/env bash
# issue 23, session 32: a pseudo-answer (HyDE) as one more query list. The own rewrites of the test split
# (Qwen2.5-Coder-1.5B, profile cpu-qwen, cached), the own-rewrite hybrid again (the untrained baseline), then the
# same with the HyDE passage's lists fused in by RRF. Resumable: LLM replies cached, finished rows skipped.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
C="--llm-cache runs/i23/rewrites.jsonl"
step rewrites test; t $LR train rewrites --profile cpu-qwen --split test $C 2>&1 | tr '\r' '\n' | grep -a "wall\|rror\|rewr" | tail -3
ev s32-hybrid-own --profile cpu-qwen --mode rewrite --rewrite rewrite $C
ev s32-own-hyde --profile cpu-qwen --mode rewrite --rewrite rewrite,hyde $C
ev s32-lastturn-hyde --profile cpu-qwen --mode lastturn --rewrite hyde $C
step done
# after the train-split choice (chain15.sh, hyde_grid.sh: RRF k 20, the HyDE passage's lists at the rewrite's weights;
# 48 tokens for the turn's time to first token, 96 the most accurate), on the test split:
[ -f runs/i23/hyde48.jsonl ] || .venv/bin/python docs/benchmarks/i23/hyde_cut.py runs/i23/rewrites.jsonl 48 runs/i23/hyde48.jsonl 2>/dev/null
export LOCAL_RAG_FUSION__K=20
ev s32-own-k20 --profile cpu-qwen --mode rewrite --rewrite rewrite $C
ev s32-own-hyde-k20 --profile cpu-qwen --mode rewrite --rewrite rewrite,hyde $C
ev s32-own-hyde48-k20 --profile cpu-qwen --mode rewrite --rewrite rewrite,hyde --llm-cache runs/i23/hyde48.jsonl
step done

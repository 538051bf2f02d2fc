#!/usr/bin/env bash
# Session 34: `local-rag train adapt` on a pool index (DOMAIN, default govt; PASSAGES, default 200; no labels:
# Qwen2.5-Coder-1.5B writes the queries), then the adapted re-scorer on that domain's MTRAG turns of the test split,
# which the adaptation never saw, beside the stock
# MiniLM as the same re-scorer (what fusing any second opinion does) and the first stage alone. Own rewrite (cached),
# RRF k 20: the default profile's retrieval. Resumable: the LLM cache, the trained model and finished rows are kept.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
B=docs/benchmarks/adapt
D=${DOMAIN:-govt}
step adapt $D; t $LR train adapt --index mtrag-$D --folds 0 --passages ${PASSAGES:-200} 2>&1 | tr '\r' '\n' | grep -a "^|\|kept\|wall\|rror\|trained\|MRR@10 of"
cp runs/adapt/mtrag-$D/report.json $B/report-$D.json
C="--profile cpu-qwen --mode rewrite --rewrite rewrite --llm-cache runs/i23/rewrites.jsonl --domains $D"
R="--cross-encoder --reranker-backend bi-encoder --prior-weight 1 --candidates 20"
export LOCAL_RAG_FUSION__K=20
ev $D-own-k20 $C
ev $D-own-k20-minilm $C $R --reranker all-MiniLM-L6-v2
ev $D-own-k20-adapted $C $R --reranker mtrag-$D-adapted
step done

#!/usr/bin/env bash
# issue 26, session 16: the LLM judges (RL_F, RB_llm; judge Qwen2.5-Coder-1.5B) on the 20 test tasks whose answers
# session 15 generated with cpu-qwen and cpu-fast (answers.jsonl here). The two configs are judged side by side (one
# thread each, niced below the other jobs of the machine), so that an interrupted run leaves the same tasks judged for
# both; resumable (runs/i26/judged-<profile>/scored.jsonl). Needs the mtrag-* pool indexes (to restore the contexts).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
T=docs/benchmarks/levers/taskc
.venv/bin/python scripts/gen_eval_checkpoint.py restore --runs runs/gen-rag-test20-cpu-fast runs/gen-rag-test20-cpu-qwen --dest $T
export LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS=1 LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS_BATCH=1
for p in cpu-qwen cpu-fast; do
  nice -n 5 /usr/bin/time -f "$p judged: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
    --predictions runs/gen-rag-test20-$p/predictions.jsonl --out runs/i26/judged-$p --no-charts 2>&1 | tr '\r' '\n' | grep -a "^|\|wall\|rror" &
done
wait

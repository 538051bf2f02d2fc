#!/usr/bin/env bash
# Task C judged on the 20 test tasks of sessions 15-19, with the AMX build of llama.cpp (issue 26, session 29):
#   s19: the default of sessions 19-28 (profile `cpu`, prompt lookup off, the rewrite under a JSON grammar; judged
#        without AMX in session 19: HM 0.481);
#   s29: the default of session 29 (prompt lookup 10, the rewrite's reply prefilled: rewrite.reply prefix);
#   s29m2 (CONFIGS=s29m2): s29 with drafts from 2-token matches only (llm.prompt_lookup_min_ngram 2).
# The warm-up between turns is not used by `eval generation` (one turn a task, no time between turns).
# s19's rewrites come from runs/llm-cache.jsonl (the 16 of session 18, docs/benchmarks/levers/taskc/llm-cache.jsonl),
# s29's are written by this run (another cache key). Judge: Qwen2.5-Coder-1.5B, as in sessions 16-19.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s29/taskc.sh   (~45 min on the 2-core Intel VM)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s29/taskc
[ -f runs/llm-cache.jsonl ] || { mkdir -p runs; cp docs/benchmarks/levers/taskc/llm-cache.jsonl runs/llm-cache.jsonl; }
for c in ${CONFIGS:-s19 s29}; do
  if [ "$c" = s19 ]; then export LOCAL_RAG_LLM__PROMPT_LOOKUP=0 LOCAL_RAG_REWRITE__REPLY=grammar
  else export LOCAL_RAG_LLM__PROMPT_LOOKUP=10 LOCAL_RAG_REWRITE__REPLY=prefix; fi
  if [ "$c" = s29m2 ]; then export LOCAL_RAG_LLM__PROMPT_LOOKUP_MIN_NGRAM=2; fi   # drafts from 2-token matches only
  if [ ! -f runs/i26/s29/gen-$c/scores.json ]; then
    /usr/bin/time -f "$c generated: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
      --profile cpu --split test --limit 20 --no-llm-judges --no-charts --out runs/i26/s29/gen-$c
  fi
  unset LOCAL_RAG_LLM__PROMPT_LOOKUP LOCAL_RAG_REWRITE__REPLY LOCAL_RAG_LLM__PROMPT_LOOKUP_MIN_NGRAM  # the judge as in session 19
  if [ ! -f runs/i26/s29/judged-$c/scores.json ]; then
    /usr/bin/time -f "$c judged: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
      --predictions runs/i26/s29/gen-$c/predictions.jsonl --out runs/i26/s29/judged-$c --no-charts
  fi
  # answers, context ids and metrics without MTRAG texts (scripts/gen_eval_checkpoint.py), and the score reports
  .venv/bin/python scripts/gen_eval_checkpoint.py save --runs runs/i26/s29/gen-$c runs/i26/s29/judged-$c --dest $D
  cp runs/i26/s29/gen-$c/scores.{json,md} $D/gen-$c/
  cp runs/i26/s29/judged-$c/scores.{json,md} $D/judged-$c/
done

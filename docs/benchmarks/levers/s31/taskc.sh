#!/usr/bin/env bash
# Task C judged on the 20 test tasks of sessions 15-30, on the 2-core AMD EPYC VM of session 31 (AVX-512, VNNI, no
# AMX; issue 26):
#   s31:     the shipped default `cpu` as it runs on this CPU (prompt lookup off: llm.prompt_lookup -1);
#   s31full: the same with the fuller-answer prompt (generate.prompt answer_history_first_full).
# Both generated here, one after the other, the rewrites shared through runs/llm-cache.jsonl (the same rewrite
# settings), then judged with Qwen2.5-Coder-1.5B as in sessions 16-30; compare them with
#   .venv/bin/local-rag eval compare docs/benchmarks/levers/s31/taskc/judged-s31 docs/benchmarks/levers/s31/taskc/judged-s31full
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s31/taskc.sh
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s31/taskc
for c in ${CONFIGS:-s31 s31full}; do
  if [ "$c" = s31full ]; then export LOCAL_RAG_GENERATE__PROMPT=answer_history_first_full; fi
  if [ ! -f runs/i26/s31/gen-$c/scores.json ]; then
    /usr/bin/time -f "$c generated: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
      --profile cpu --split test --limit 20 --no-llm-judges --no-charts --out runs/i26/s31/gen-$c
  fi
  unset LOCAL_RAG_GENERATE__PROMPT   # the judge's settings as in sessions 16-30
  if [ ! -f runs/i26/s31/judged-$c/scores.json ]; then
    /usr/bin/time -f "$c judged: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
      --predictions runs/i26/s31/gen-$c/predictions.jsonl --out runs/i26/s31/judged-$c --no-charts
  fi
  # answers, context ids and metrics without MTRAG texts (scripts/gen_eval_checkpoint.py), and the score reports
  .venv/bin/python scripts/gen_eval_checkpoint.py save --runs runs/i26/s31/gen-$c runs/i26/s31/judged-$c --dest $D
  cp runs/i26/s31/gen-$c/scores.{json,md} $D/gen-$c/
  cp runs/i26/s31/judged-$c/scores.{json,md} $D/judged-$c/
done

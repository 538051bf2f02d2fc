#!/usr/bin/env bash
# Task C on the 20 judged MTRAG test tasks of sessions 15-33 (`eval generation --split test --limit 20`), one config:
# generate with the caller's LOCAL_RAG_* settings, judge with none of them (the judge as in every earlier row: the
# gen_eval settings, Qwen2.5-Coder-1.5B), save answers, context ids and metrics without MTRAG texts
# (scripts/gen_eval_checkpoint.py) and the score reports into DEST, then compare against BASELINE (a judged folder).
# Resumable: a step whose scores.json exists is skipped. SPLIT=train takes the same kind of subset from the train
# split's conversations (a choice made there before the test split is run; session 40).
#
#   LOCAL_RAG_FUSION__K=20 bash scripts/taskc20.sh s33-k20 cpu runs/i26/s33 docs/benchmarks/levers/s33/taskc \
#     docs/benchmarks/levers/s31/taskc/judged-s31
set -euo pipefail
cd "$(dirname "$0")/.."
c=${1:?usage: taskc20.sh NAME PROFILE RUNS DEST [BASELINE]}; P=${2:?profile}; R=${3:?runs folder}; D=${4:?dest folder}; B=${5:-}
if [ ! -f "$R/gen-$c/scores.json" ]; then
  /usr/bin/time -f "$c generated: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
    --profile "$P" --split "${SPLIT:-test}" --limit 20 --no-llm-judges --no-charts --out "$R/gen-$c"
fi
unset $(env | sed -n 's/^\(LOCAL_RAG_[A-Z0-9_]*\)=.*/\1/p' | grep -v '^LOCAL_RAG_USER_CONFIG$')
if [ ! -f "$R/judged-$c/scores.json" ]; then
  /usr/bin/time -f "$c judged: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
    --predictions "$R/gen-$c/predictions.jsonl" --out "$R/judged-$c" --no-charts
fi
.venv/bin/python scripts/gen_eval_checkpoint.py save --runs "$R/gen-$c" "$R/judged-$c" --dest "$D"
cp "$R/gen-$c"/scores.{json,md} "$D/gen-$c/"
cp "$R/judged-$c"/scores.{json,md} "$D/judged-$c/"
[ -z "$B" ] || .venv/bin/local-rag eval compare "$B" "$D/judged-$c"

#!/usr/bin/env bash
# Issue 24, session 27: the IDK gate (generate.idk_gate), its threshold learned on the MTRAG train split.
#  1. The pipeline's own P(IDK) scores: eval generation with the default profile (cpu, Qwen2.5-Coder-1.5B) with
#     generate.idk_gate 0 (score and record, never decline) and max_tokens 16 (the answers are not wanted), on a train
#     sample (its 45 UNANSWERABLE, 8 CONVERSATIONAL and 60 answerable tasks, sha1 order; ~32 min), the test subset of
#     session 23 (52 tasks; ~14 min) and the 20 judged Task C test tasks (~6 min). Resumable; the committed
#     score-*/answers.jsonl are restored first, so a rerun generates nothing.
#  2. threshold.py: the threshold (at most 10 % of the train sample's answerable turns above it), train by 5-fold CV
#     by conversation, the test tasks with the threshold unchanged.
#  3. Task C on the 20 judged test tasks without the generator: eval recheck applies the gate's declines (alone, and
#     after the decider i24-decider-amb) to the committed answers of the default profile; only changed answers are judged.
# Needs the mtrag-<domain> pool indexes (scripts/build_pool_indexes.sh).
set -euo pipefail
cd "$(dirname "$0")/../../.."
LR=${LOCAL_RAG:-.venv/bin/local-rag}
PY=${PYTHON:-.venv/bin/python}
MTRAG=${LOCAL_RAG_MTRAG_DIR:-../shared/mtrag}
D=docs/benchmarks/decider-pidk
W=runs/i24-idk
RUN=runs/i26/gen-rag-test20-qwen-levers
mkdir -p $W
$PY docs/benchmarks/decider-draft/test_subset.py --mtrag "$MTRAG" --split train --answerable 60 --out $W/train-tasks.jsonl
$PY docs/benchmarks/decider-draft/test_subset.py --mtrag "$MTRAG" --answerable 40 --out $W/test-tasks.jsonl
$PY scripts/gen_eval_checkpoint.py restore --runs $RUN runs/i26/judged-qwen-levers --dest docs/benchmarks/levers/taskc
$PY -c "import json,sys; ids={json.loads(l)['task_id'] for l in open('$RUN/predictions.jsonl')}; \
  [sys.stdout.write(l) for l in open('$MTRAG/generation_tasks/mtrag_tasks.jsonl') if json.loads(l)['task_id'] in ids]" \
  > $W/test20-tasks.jsonl
[ -f $W/llm-cache.jsonl ] || cp docs/benchmarks/decider-draft/llm-cache.jsonl $W/llm-cache.jsonl   # the test subset's rewrites
[ -f $W/llm-cache-test20.jsonl ] || cp docs/benchmarks/levers/taskc/llm-cache.jsonl $W/llm-cache-test20.jsonl
for s in test train test20; do
  $PY scripts/gen_eval_checkpoint.py restore --runs $W/score-$s-cpu --dest $D --tasks $W/$s-tasks.jsonl || true
  cache=$W/llm-cache.jsonl; [ $s = test20 ] && cache=$W/llm-cache-test20.jsonl
  LOCAL_RAG_GENERATE__IDK_GATE=0 LOCAL_RAG_GENERATE__MAX_TOKENS=16 flock /tmp/heavy.lock \
    $LR eval generation --setting rag --profile cpu --no-llm-judges --no-charts --tasks $W/$s-tasks.jsonl \
    --llm-cache $cache --out $W/score-$s-cpu
  $PY scripts/gen_eval_checkpoint.py save --runs $W/score-$s-cpu --dest $D
done
$PY $D/threshold.py
for g in gate decider-gate; do
  $LR eval recheck --predictions $RUN/predictions.jsonl --out $W/recheck-$g/predictions.jsonl --support off \
    --decisions $D/gate/decisions-$g.jsonl
  flock /tmp/heavy.lock $LR eval generation --setting rag --predictions $W/recheck-$g/predictions.jsonl \
    --reuse runs/i26/judged-qwen-levers --out $W/judged-$g --no-charts
  $PY scripts/gen_eval_checkpoint.py save --runs $W/judged-$g --dest $D
done

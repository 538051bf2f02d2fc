#!/usr/bin/env bash
# Issue 24, session 23, after run.sh: train the draft gate on the MTRAG-UN drafts (with and without the decider's
# P(decline)), measure it on the test subset's drafts, then apply it to the 20 judged Task C test tasks without the
# generator (eval recheck) and judge only the answers it changed (--reuse).
set -euo pipefail
cd "$(dirname "$0")/../../.."
LR=${LOCAL_RAG:-.venv/bin/local-rag}
D=docs/benchmarks/decider-draft
W=runs/i24-draft
DEC=docs/benchmarks/decider-ambiguity/predictions.jsonl
export LOCAL_RAG_SUPPORT__MODEL=${SUPPORT:-models/support}  # the folder `local-rag train support` writes
$LR train draft-gate --answers $W/gen-un-cpu/predictions.jsonl --decisions $DEC \
  --test-answers $W/gen-test-cpu/predictions.jsonl --name i24-draft-gate --report $D/gate
$LR train draft-gate --answers $W/gen-un-cpu/predictions.jsonl --features weak_share,weak_mean,weak_max,weak_min --decisions $DEC \
  --test-answers $W/gen-test-cpu/predictions.jsonl --name i24-draft-gate-alone --report $D/gate-alone
for b in 0.05 0.15; do
  $LR train draft-gate --answers $W/gen-un-cpu/predictions.jsonl --decisions $DEC --budget $b \
    --test-answers $W/gen-test-cpu/predictions.jsonl --name i24-draft-gate-b$b --report $D/gate-budget-$b
done
# Task C on the 20 judged test tasks: cpu-qwen (session 18) and the default cpu (session 19), decider without and with the gate
.venv/bin/python scripts/gen_eval_checkpoint.py restore --runs runs/gen-rag-test20-cpu-qwen runs/i26/gen-rag-test20-qwen-levers \
  runs/i26/judged-cpu-qwen runs/i26/judged-qwen-levers --dest docs/benchmarks/levers/taskc
for run in gen-rag-test20-cpu-qwen:runs/i26/judged-cpu-qwen i26/gen-rag-test20-qwen-levers:runs/i26/judged-qwen-levers; do
  pred=runs/${run%%:*}/predictions.jsonl judged=${run#*:} name=$(basename ${run%%:*})
  for gate in none i24-draft-gate; do
    out=$W/recheck-$name-$gate
    extra=(); [ $gate = none ] || extra=(--draft-gate $gate)
    $LR eval recheck --predictions $pred --out $out/predictions.jsonl --support off --decisions $DEC "${extra[@]}"
    flock /tmp/heavy.lock $LR eval generation --setting rag --predictions $out/predictions.jsonl --reuse $judged \
      --out $W/judged-$name-$gate --no-charts
  done
done

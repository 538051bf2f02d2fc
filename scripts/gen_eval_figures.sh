#!/usr/bin/env bash
# The issue-5 figures: MTRAG Task B (reference) and Task C (rag) on the fixed 120-task subset, with the answer
# prompt and the baseline prompt (answer_plain), scored with RB_alg, the IDK judge and the local LLM judges.
#
#   bash scripts/gen_eval_figures.sh            # runs/gen-{reference,rag}-cpu-qwen-{answer,answer_plain}/
#   .venv/bin/python scripts/gen_eval_table.py  # the side-by-side table (docs/evaluation.md) + docs/benchmarks/gen-eval/
#
# Every run is resumable: rerun this script after an interruption and no task is generated or scored twice (a run
# folder takes one writer at a time, so a second copy of this script fails instead of interleaving). Runs saved with
# `.venv/bin/python scripts/gen_eval_checkpoint.py save` are restored first, so they also go on in a fresh checkout.
# On a small CPU the four runs go through a queue, two at a time with one llama.cpp thread each: on the 2-core dev
# machine that does 1.1-1.3x the work of one run with two threads (decoding uses one core; the other would idle),
# and when a run ends the next one starts, so both cores stay busy until the last run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PROFILE=${PROFILE:-cpu-qwen} LIMIT=${LIMIT:-120}
PAIRS=${PAIRS:-1}   # 1 = two runs at a time with 1 thread each; 0 = one run at a time with llama.cpp's default threads

run() {  # setting prompt
  echo "$(date +%T) start $1 $2"
  .venv/bin/local-rag eval generation --setting "$1" --prompt "$2" --profile "$PROFILE" --limit "$LIMIT" \
    --out "runs/gen-$1-$PROFILE-$2" >> "runs/gen-$1-$PROFILE-$2.log" 2>&1 \
    || { echo "$(date +%T) FAILED $1 $2: see runs/gen-$1-$PROFILE-$2.log" >&2; return 1; }
  echo "$(date +%T) done  $1 $2"
}
export -f run

mkdir -p runs
queue=()
for setting in ${SETTINGS:-reference rag}; do
  for prompt in ${PROMPTS:-answer answer_plain}; do queue+=("$setting $prompt"); done
done
# a fresh checkout has no runs/: take back what an earlier machine saved (scripts/gen_eval_checkpoint.py save)
runs=(); for item in "${queue[@]}"; do set -- $item; runs+=("runs/gen-$1-$PROFILE-$2"); done
.venv/bin/python scripts/gen_eval_checkpoint.py restore --runs "${runs[@]}"
if [ "$PAIRS" = 1 ]; then
  # the generator and the judge (gen_eval.judge, set apart) both get one thread
  export LOCAL_RAG_LLM__N_THREADS=1 LOCAL_RAG_LLM__N_THREADS_BATCH=1 OMP_NUM_THREADS=1
  export LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS=1 LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS_BATCH=1
  printf '%s\n' "${queue[@]}" | xargs -P 2 -L 1 bash -c 'run "$0" "$1"'
else
  for item in "${queue[@]}"; do run $item; done
fi

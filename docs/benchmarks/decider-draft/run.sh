#!/usr/bin/env bash
# Issue 24, session 23: does the generator's own draft, checked against its passages, tell UNANSWERABLE turns?
# Generates answers with the default profile (no decider, no support check: the raw draft) on
#  1. the MTRAG-UN development tasks (hybrid pool indexes plus their extra passages: scripts/decider_indexes.sh), and
#  2. a fixed test-split subset: every test task that is not ANSWERABLE or PARTIAL, and 40 that are (sha1 order),
# then scores each draft with the support classifier (draft_auc.py). Resumable: rerun to go on.
set -euo pipefail
cd "$(dirname "$0")/../../.."
LR=${LOCAL_RAG:-.venv/bin/local-rag}
PY=${PYTHON:-.venv/bin/python}
MTRAG=${LOCAL_RAG_MTRAG_DIR:-../shared/mtrag}
PROFILE=${PROFILE:-cpu}
W=runs/i24-draft
mkdir -p $W
$PY docs/benchmarks/decider-draft/test_subset.py --mtrag "$MTRAG" --answerable 40 --out $W/test-tasks.jsonl
# the committed answers (docs/benchmarks/decider-draft/<run>/answers.jsonl: ids, not texts) first: only missing tasks are generated
$PY scripts/gen_eval_checkpoint.py restore --runs $W/gen-un-$PROFILE --dest docs/benchmarks/decider-draft \
  --tasks "$MTRAG/mtragun-dev/generation_tasks/mtragun_dev_tasks.jsonl" --index-prefix i24-mtrag- || true
$PY scripts/gen_eval_checkpoint.py restore --runs $W/gen-test-$PROFILE --dest docs/benchmarks/decider-draft || true
flock /tmp/heavy.lock $LR eval generation --setting rag --profile "$PROFILE" --no-llm-judges --no-charts \
  --tasks "$MTRAG/mtragun-dev/generation_tasks/mtragun_dev_tasks.jsonl" --index-prefix i24-mtrag- \
  --out $W/gen-un-$PROFILE
flock /tmp/heavy.lock $LR eval generation --setting rag --profile "$PROFILE" --no-llm-judges --no-charts \
  --tasks $W/test-tasks.jsonl --out $W/gen-test-$PROFILE

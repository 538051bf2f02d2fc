#!/usr/bin/env bash
# issue 23, session 38: the question's likelihood under Qwen2.5-Coder-0.5B as a reranker of the top 10 (upr.py).
# The choice (top K, RRF weight of the run's order, mean or summed log-probability) on 120 train pool-3 queries whose
# first stage is the hybrid over the organizers' rewrite (no LLM); then once on the test split's cpu-hyde run
# (s32-own-hyde-k20, the best test row), with the system's own rewrites. Resumable (scores cached).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
. docs/benchmarks/i23/lib.sh
S=docs/benchmarks/i23/s38; P=".venv/bin/python $S/upr.py"
mkdir -p runs/i23/s38
[ -f runs/i23/s38/train-org-k20/scores.json ] || LOCAL_RAG_FUSION__K=20 t $LR eval retrieval --split train \
  --domains clapnq,cloud,fiqa --mode rewrite --out runs/i23/s38/train-org-k20 --profile cpu-qwen 2>&1 | grep -a "^| pool\|wall"
TRAIN="--run runs/i23/s38/train-org-k20 --split train --queries organizers --limit 120 --cache $S/upr-train.jsonl"
TEST="--run $B/s32-own-hyde-k20 --split test --queries own --cache $S/upr-test.jsonl"
step score train; t $P score $TRAIN
$P grid $TRAIN --out $S/upr-grid-train.md
step score test; t $P score $TEST
$P grid $TEST --out $S/upr-grid-test.md
step done
# the same reranking over the default `cpu` profile's first stage (own rewrite, RRF k 20, no HyDE): is the likelihood
# worth more where HyDE has not already brought the answer's words? (test pairs shared with the run above are cached)
TESTD="--run $B/s32-own-k20 --split test --queries own --cache $S/upr-test.jsonl"
step score test default; t $P score $TESTD
$P grid $TESTD --out $S/upr-grid-test-default.md
step done
# a bigger scorer on part of the train choice set: Qwen2.5-Coder-1.5B (the pipeline's own LLM) on 40 of the 120
# queries, beside the 0.5B on the same 40
T40="--run runs/i23/s38/train-org-k20 --split train --queries organizers --limit 120 --subset 40 --cache $S/upr-train.jsonl"
step score train 1.5B; t $P score $T40 --model qwen2.5-coder-1.5b-instruct-q4_k_m
$P grid $T40 --model qwen2.5-coder-1.5b-instruct-q4_k_m --out $S/upr-grid-train40-1.5b.md
$P grid $T40 --out $S/upr-grid-train40-0.5b.md
step done
# the 1.5B over cpu-hyde's first stage on the test split (its train rows above chose the likelihood alone, top 10)
TEST15="--run $B/s32-own-hyde-k20 --split test --queries own --cache $S/upr-test.jsonl --model qwen2.5-coder-1.5b-instruct-q4_k_m"
step score test 1.5B; t $P score $TEST15
$P grid $TEST15 --out $S/upr-grid-test-1.5b.md
step done
$P grid $TEST15 --write $B/s38-own-hyde-k20-upr10-1.5b > /dev/null   # top 10, RRF weight 1: the 0.5B's train choice
$LR eval compare $B/s32-own-hyde-k20 $B/s38-own-hyde-k20-upr10-1.5b --domains clapnq,cloud,fiqa

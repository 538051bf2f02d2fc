#!/usr/bin/env bash
# issue 23, session 39: the 1.5B's likelihood (UPR) choice made again on the train split, on all 120 turns of session
# 38's choice set (40 were scored in session 38; the other 80 here). The grid picks top K, RRF weight and score with
# the 1.5B itself; the test row of that choice is then read from session 38's committed test scores (no new test scoring).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
. docs/benchmarks/i23/lib.sh
S=docs/benchmarks/i23/s38; P=".venv/bin/python $S/upr.py"; M=qwen2.5-coder-1.5b-instruct-q4_k_m
T120="--run runs/i23/s38/train-org-k20 --split train --queries organizers --limit 120 --cache $S/upr-train.jsonl --model $M"
step score train 1.5B 120; t $P score $T120
$P grid $T120 --out docs/benchmarks/i23/s39/upr-grid-train120-1.5b.md
step done
# The choice over the first stage it would rerank: cpu-hyde's lists (the 1.5B's own rewrite + its HyDE passage, RRF k 20,
# as s32-own-hyde-k20 on the test split) for 40 train queries a domain (the first in sha1 order), the rewrites and HyDE
# passages written here (cached in runs/i23/rewrites-train.jsonl), then the 1.5B's likelihood of the own rewrite.
C="--llm-cache runs/i23/rewrites-train.jsonl"
TR="--split train --limit 40 --domains clapnq,cloud,fiqa --profile cpu-qwen --mode rewrite"
export LOCAL_RAG_FUSION__K=20
for row in "train-own-hyde-k20 rewrite,hyde" "train-own-k20 rewrite"; do set -- $row
  # (run again where the rewrites cache is missing, e.g. a fresh clone: the grids key the scores by the rewrite's text)
  [ -f docs/benchmarks/i23/s39/$1/scores.json ] && [ -s runs/i23/rewrites-train.jsonl ] || { step eval $1; t $LR eval retrieval $TR --rewrite $2 $C --out docs/benchmarks/i23/s39/$1 \
    2>&1 | tr '\r' '\n' | grep -a "^| pool\|wall\|rror"; }
done
TH="--run docs/benchmarks/i23/s39/train-own-hyde-k20 --split train --queries own $C --cache docs/benchmarks/i23/s39/upr-train-hyde.jsonl --model $M"
step score train-own-hyde 1.5B; t $P score $TH
$P grid $TH --out docs/benchmarks/i23/s39/upr-grid-train-hyde-1.5b.md
step done
# The two train choices, once on the test split, from session 38's committed 1.5B test scores (no LLM call): top 10 at
# RRF weight 0.5 (chosen over the organizers'-rewrite lists above) and at weight 3 (chosen over the cpu-hyde lists),
# with their paired intervals against cpu-hyde's first stage; the train interval of weight 3 (and of session 38's 1).
TEST15="--run $B/s32-own-hyde-k20 --split test --queries own --cache $S/upr-test.jsonl --model $M --out /dev/null"
for w in 05:0.5 3:3; do
  $P grid $TEST15 --choice 10 ${w#*:} --write $B/s39-own-hyde-k20-upr10w${w%:*}-1.5b > /dev/null
  $LR eval compare $B/s32-own-hyde-k20 $B/s39-own-hyde-k20-upr10w${w%:*}-1.5b --domains clapnq,cloud,fiqa \
    > $B/s39/compare-s39-own-hyde-k20-upr10w${w%:*}-1.5b.md
done
for w in 1 3; do
  $P grid $TH --choice 10 $w --write runs/i23/s39/train-own-hyde-k20-upr10w$w-1.5b --out /dev/null > /dev/null
  $LR eval compare $B/s39/train-own-hyde-k20 runs/i23/s39/train-own-hyde-k20-upr10w$w-1.5b --domains clapnq,cloud,fiqa \
    > $B/s39/compare-train-upr10w$w-1.5b.md
done
# The 0.5B (session 38's scorer) chosen the same way, over the train split's cpu-hyde lists, then once on the test
# split from session 38's committed 0.5B test scores over cpu-hyde's lists.
M5=qwen2.5-coder-0.5b-instruct-q4_k_m
TH5="--run $B/s39/train-own-hyde-k20 --split train --queries own $C --cache $B/s39/upr-train-hyde.jsonl --model $M5"
step score train-own-hyde 0.5B; t $P score $TH5
$P grid $TH5 --out $B/s39/upr-grid-train-hyde-0.5b.md
step done
$P grid --run $B/s32-own-hyde-k20 --split test --queries own --cache $S/upr-test.jsonl --model $M5 --out /dev/null \
  --choice 10 3 --write $B/s39-own-hyde-k20-upr10w3 > /dev/null
$LR eval compare $B/s32-own-hyde-k20 $B/s39-own-hyde-k20-upr10w3 --domains clapnq,cloud,fiqa > $B/s39/compare-s39-own-hyde-k20-upr10w3.md

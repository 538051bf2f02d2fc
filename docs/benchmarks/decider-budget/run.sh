#!/usr/bin/env bash
# Issue 24, session 24: the decision stage's thresholds and variant pick, measured (about 40 s a run on 2 cores once
# the evidence is cached in runs/i24-decider; the first run retrieves 1,137 turns, ~1 min).
# Needs the hybrid pool indexes: bash scripts/build_pool_indexes.sh && bash scripts/decider_indexes.sh
# 1. session 17's command again, on indexes rebuilt on a fresh machine (how far the figures move with the rebuild);
# 2. the clarify budget 0.04 (as before) to 0.08, three variants, the pick as before;
# 3. the decline budget 0.04 and 0.06 (0.08 before), the same three variants;
# 4. the pick counting the real turns only (the synthetic ones are easy to recall), at the target's clarify budget.
set -euo pipefail
cd "$(dirname "$0")/../../.."
LR=${LOCAL_RAG:-.venv/bin/local-rag}
D=docs/benchmarks/decider-budget
W=runs/i24-decider
$LR train decider --name i24-decider-amb --report $D/rebuilt-amb --work $W
for b in 0.04 0.05 0.06 0.08; do
  $LR train decider --name i24-decider-b$b --report $D/clarify-budget-$b --work $W \
    --variants gbm-features,lr-features,lr-features+embedding --clarify-budget $b
done
for b in 0.04 0.06; do
  $LR train decider --name i24-decider-d$b --report $D/decline-budget-$b --work $W \
    --variants gbm-features,lr-features,lr-features+embedding --decline-budget $b
done
# the turn-embedding variant alone, so that its per-task probabilities are committed (predictions.jsonl)
$LR train decider --name i24-decider-lr-emb --report $D/lr-features+embedding --work $W --variants lr-features+embedding
$LR train decider --name i24-decider-real --report docs/benchmarks/decider-real --work $W --pick real --clarify-budget 0.05
${PYTHON:-.venv/bin/python} $D/proxies.py > $D/proxies.txt
git checkout models/manifest.json 2>/dev/null || true  # the local models' entries stay out of the committed manifest

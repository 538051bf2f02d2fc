#!/usr/bin/env bash
# Session 35: the standing Task A claims of sessions 20-33 with their uncertainty. Each pair of committed run folders
# (test split, own rewrite) is compared per query with `local-rag eval compare` (paired bootstrap, 2,000 resamples,
# seed 0), on pool-3 (181 queries) and on all four domains (237), in the system's order (run_scores). No model runs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
I=docs/benchmarks/i23
LR=.venv/bin/local-rag
pairs=(
  "s32-hybrid-own s32-own-k20"                 # RRF k 20 (the default since session 33)
  "s32-hybrid-own s32-own-hyde"                # + HyDE at k 60
  "s32-own-k20 s32-own-hyde-k20"               # + HyDE at k 20: cpu-hyde, the best row shipped
  "s32-own-k20 s33-own-fb3-b"                  # + pseudo-relevance feedback
  "s32-own-k20 s33-own-hyde-fb3-b"             # + HyDE + feedback
  "s32-hybrid-own i23-emb-s2-bi-own-prior1"    # the fine-tuned embedder fused (session 20's best trained row)
)
{
  echo "# Task A claims with paired-bootstrap intervals (test split, own rewrite; \`bash $I/intervals.sh\`)"
  for pair in "${pairs[@]}"; do
    set -- $pair
    for domains in clapnq,cloud,fiqa all; do
      echo; echo "## $1 (A) against $2 (B): $([ $domains = all ] && echo 'all four domains' || echo pool-3)"; echo
      if [ $domains = all ]; then $LR eval compare $I/$1 $I/$2; else $LR eval compare $I/$1 $I/$2 --domains $domains; fi
    done
  done
} > $I/s35-intervals.md
grep -c "^## " $I/s35-intervals.md

#!/usr/bin/env bash
# Session 45: `train adapt` with its cross-validated check (the default, `--folds 5`) on this repository's docs, the
# index `projdocs` of session 44 (647 passages, default profile `cpu`), from session 44's committed queries
# (projdocs-s44-synth-cache.jsonl: the LLM is asked nothing over the same index). One work folder per run, so that
# each keeps its folds' ranks (<work>/cv/fold-<i>.json) and its ranks.json.
# Figures: docs/benchmarks.md "Session 45"; reports and ranks: report-projdocs-s45{,-e4}.json, ranks-projdocs-s45{,-e4}.json.
set -euo pipefail
cd "$(dirname "$0")/../../.."
B=docs/benchmarks/adapt
R=${R:-runs/adapt}
t() { /usr/bin/time -f "wall %e s, peak RSS %M KB" "$@"; }
for run in e1 e4; do
  W=$R/projdocs-s45-$run
  mkdir -p "$W"
  [ -f "$W/synth-cache.jsonl" ] || cp $B/projdocs-s44-synth-cache.jsonl "$W/synth-cache.jsonl"
done
t local-rag train adapt --index projdocs --passages 150 --work $R/projdocs-s45-e1 --name projdocs-cv        # 1 epoch: kept
t local-rag train adapt --index projdocs --passages 150 --work $R/projdocs-s45-e4 --name projdocs-cv-e4 --epochs 4  # kept
cp $R/projdocs-s45-e1/report.json $B/report-projdocs-s45.json; cp $R/projdocs-s45-e1/ranks.json $B/ranks-projdocs-s45.json
cp $R/projdocs-s45-e4/report.json $B/report-projdocs-s45-e4.json; cp $R/projdocs-s45-e4/ranks.json $B/ranks-projdocs-s45-e4.json
local-rag index info --index projdocs | tail -1                              # the adaptation (the last run's model)
local-rag models remove projdocs-cv projdocs-cv-e4 --yes                   # ends it

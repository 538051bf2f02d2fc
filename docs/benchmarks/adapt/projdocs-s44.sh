#!/usr/bin/env bash
# Session 44: `train adapt` as a user runs it, on this repository's docs: the index `projdocs` (647 passages, built in
# session 36 by `local-rag index build docs --index projdocs`, default profile `cpu`). The 1.5B's queries are
# committed (projdocs-s44-synth-cache.jsonl), so a rerun over the same index asks the LLM nothing; an index built from
# today's docs/ has other chunks, whose queries are written again (~5 s a chunk on 2 cores).
# Session 44's figures: docs/benchmarks.md "Session 44"; report of the last run: report-projdocs-s44-e4.json.
set -euo pipefail
W=${W:-runs/adapt/projdocs-s44}
mkdir -p "$W"
[ -f "$W/synth-cache.jsonl" ] || cp docs/benchmarks/adapt/projdocs-s44-synth-cache.jsonl "$W/synth-cache.jsonl"
t() { /usr/bin/time -f "wall %e s, peak RSS %M KB" "$@"; }
t local-rag train adapt --index projdocs --passages 150 --folds 0 --work "$W"                      # 1 epoch: not kept
t local-rag train adapt --index projdocs --passages 150 --folds 0 --work "$W" --epochs 4 --name projdocs-adapted-e4  # not kept
t local-rag train adapt --index projdocs --passages 150 --folds 0 --work "$W" --epochs 4 --name projdocs-adapted-e4 --no-interval  # kept
local-rag index info --index projdocs | tail -1                  # the adaptation
printf '/quit\n' | local-rag chat --index projdocs --history '' | head -1   # named in chat's first line
local-rag models remove projdocs-adapted projdocs-adapted-e4 --yes        # ends it

#!/usr/bin/env bash
# Issue 26, session 41: LlamaIndex beside the default `cpu` (300-token evidence budget) on every answerable govt turn of
# the MTRAG *test* conversations (55 measured + 1 warm-up, 7 conversations; the 24 turns of sessions 30-40 were drawn
# from all conversations, 18 of them train), on the 2-core Zen 4 VM of sessions 36-40; then both rows judged.
# Run it alone: bash docs/benchmarks/peer-s41/run.sh   (each step takes the heavy lock; ~2 h)
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=docs/benchmarks/peer-s41
t() { /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock "$@"; }
[ -f $D/peer.json ] || t .venv-peer/bin/python scripts/bench_peer.py --profile cpu --domain govt --tasks 100 --seed 0 \
  --split test --rows peer,ours-rewrite --out $D
[ -f $D/judged-peer/scores.json ] && [ -f $D/judged-ours-rewrite/scores.json ] || \
  ROWS="peer ours-rewrite" t bash scripts/judge_peer.sh $D
.venv/bin/local-rag eval compare $D/judged-peer $D/judged-ours-rewrite > $D/compare-peer.md

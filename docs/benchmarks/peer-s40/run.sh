#!/usr/bin/env bash
# Issue 26, session 40: LlamaIndex beside the default `cpu` with its new 300-token evidence budget (chosen on the train
# split, docs/benchmarks.md "Session 40: a 300-token evidence budget") on the 24 govt turns of sessions 30-36, on the
# 2-core Zen 4 VM of session 36 (docs/benchmarks/peer-s36: the same run with 400 tokens). Then our row judged; the
# peer's answers are compared word for word with session 36's (its judged row, peer-s31/judged-peer, then stands).
# Run it alone: bash docs/benchmarks/peer-s40/run.sh   (each step takes the heavy lock; ~35 min)
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=docs/benchmarks/peer-s40
t() { /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock "$@"; }
[ -f $D/peer.json ] || t .venv-peer/bin/python scripts/bench_peer.py --profile cpu --domain govt --tasks 24 --seed 0 \
  --rows peer,ours-rewrite --out $D
.venv/bin/python docs/benchmarks/levers/s36/same_peer.py docs/benchmarks/peer-s36 $D > $D/same-as-s36.md
[ -f $D/judged-ours-rewrite/scores.json ] || ROWS=ours-rewrite t bash scripts/judge_peer.sh $D
.venv/bin/local-rag eval compare docs/benchmarks/peer-s31/judged-peer $D/judged-ours-rewrite > $D/compare-peer.md
.venv/bin/local-rag eval compare docs/benchmarks/peer-s33/judged-ours-rewrite $D/judged-ours-rewrite > $D/compare-s33.md

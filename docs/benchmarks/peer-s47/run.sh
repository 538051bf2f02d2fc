#!/usr/bin/env bash
# Issue 26, session 47: session 41's side by side (docs/benchmarks/peer-s41) on a second domain: LlamaIndex beside the
# default `cpu` (300-token evidence budget) on every answerable clapnq turn of the MTRAG *test* conversations (+1
# warm-up), on the 2-core AMD EPYC VM of sessions 46-47; then both rows judged.
# Run it alone: bash docs/benchmarks/peer-s47/run.sh   (each step takes the heavy lock; ~2 h 15 min)
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=docs/benchmarks/peer-s47
t() { /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock "$@"; }
bash scripts/peer_env.sh
[ -f $D/peer.json ] || t .venv-peer/bin/python scripts/bench_peer.py --profile cpu --domain clapnq --tasks 100 --seed 0 \
  --split test --rows peer,ours-rewrite --out $D
[ -f $D/judged-peer/scores.json ] && [ -f $D/judged-ours-rewrite/scores.json ] || \
  ROWS="peer ours-rewrite" t bash scripts/judge_peer.sh $D
.venv/bin/local-rag eval compare $D/judged-peer $D/judged-ours-rewrite > $D/compare-peer.md
# both domains pooled (session 41's 55 govt turns and these 61): one paired bootstrap over the 116 judged tasks
P=$(mktemp -d)
for r in peer ours-rewrite; do
  mkdir -p "$P/judged-$r"
  cat docs/benchmarks/peer-s41/judged-$r/answers.jsonl $D/judged-$r/answers.jsonl > "$P/judged-$r/answers.jsonl"
done
.venv/bin/local-rag eval compare "$P/judged-peer" "$P/judged-ours-rewrite" > $D/compare-pooled-s41-s47.md
rm -r "$P"

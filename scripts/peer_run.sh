#!/usr/bin/env bash
# Issue 26's side by side on the test conversations (session 41's method): LlamaIndex beside the default `cpu`
# (300-token evidence budget) on every answerable turn of one domain's MTRAG *test* conversations (+1 warm-up), both
# rows judged, then the judged answers pooled with earlier runs' (one paired bootstrap over all their tasks).
#
#   bash scripts/peer_run.sh OUT DOMAIN POOLED_FILE [EARLIER_RUN ...]
#
# OUT: the run's folder (peer.{json,md}, judged-*/, compare-peer.md); POOLED_FILE: the pooled comparison's file name
# in OUT; EARLIER_RUN: folders of earlier runs whose judged-*/answers.jsonl join the pool. Each step takes the heavy
# lock and is skipped when its files are there (a rerun resumes). Run it alone on the machine: its times are figures.
set -euo pipefail
cd "$(dirname "$0")/.."
D=$1 DOMAIN=$2 POOLED=$3
shift 3
t() { /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock "$@"; }
bash scripts/peer_env.sh
[ -f "$D/peer.json" ] || t .venv-peer/bin/python scripts/bench_peer.py --profile cpu --domain "$DOMAIN" --tasks 100 \
  --seed 0 --split test --rows peer,ours-rewrite --out "$D"
[ -f "$D/judged-peer/scores.json" ] && [ -f "$D/judged-ours-rewrite/scores.json" ] || \
  ROWS="peer ours-rewrite" t bash scripts/judge_peer.sh "$D"
.venv/bin/local-rag eval compare "$D/judged-peer" "$D/judged-ours-rewrite" > "$D/compare-peer.md"
P=$(mktemp -d)
for r in peer ours-rewrite; do
  mkdir -p "$P/judged-$r"
  for run in "$@" "$D"; do cat "$run/judged-$r/answers.jsonl"; done > "$P/judged-$r/answers.jsonl"
done
.venv/bin/local-rag eval compare "$P/judged-peer" "$P/judged-ours-rewrite" > "$D/$POOLED"
rm -r "$P"

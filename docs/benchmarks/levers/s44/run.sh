#!/usr/bin/env bash
# Session 44: answering without torch (the query twin, docs/design.md "Answering without torch"), measured.
# 1. `local-rag bench` as in session 40 (levers/s40/bench), with the twin (the default now) and without it, back to back.
# 2. One-shot commands on this repository's docs (the index `projdocs`): `search`, `ask --json`, `chat` ready to read.
# Task A and Task C were checked by hand (docs/design.md): the run files and the 20 answers word for word.
#   flock /tmp/heavy.lock bash docs/benchmarks/levers/s44/run.sh     (~10 min on the Zen 4 VM)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s44
B=".venv/bin/local-rag"
$B bench --profile cpu --index mtrag-clapnq -n 6 --repeats 2 --build-passages 0 --out "$D/bench"
LOCAL_RAG_EMBEDDER__QUERY_ONNX=false $B bench --profile cpu --index mtrag-clapnq -n 6 --repeats 2 --build-passages 0 \
  --out "$D/bench-torch"
Q="how do I keep an index in sync after files change?"
for v in twin torch; do
  [ $v = torch ] && export LOCAL_RAG_EMBEDDER__QUERY_ONNX=false
  { /usr/bin/time -f "$v search: wall %e s, peak RSS %M KB" $B search "$Q" --index projdocs --json > /dev/null
    /usr/bin/time -f "$v ask: wall %e s, peak RSS %M KB" $B ask "$Q" --index projdocs --json > /dev/null
    printf '/quit\n' | /usr/bin/time -f "$v chat ready and quit: wall %e s, peak RSS %M KB" $B chat --index projdocs --history '' > /dev/null
  } 2>&1 | grep -a "wall" | tee -a "$D/one-shot.txt"
done

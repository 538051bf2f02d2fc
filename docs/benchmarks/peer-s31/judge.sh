#!/usr/bin/env bash
# Issue 26, session 31 (as session 30's judge.sh): the answers of the peer benchmark in this folder (peer.json), judged like
# sessions 18 and 30 (docs/benchmarks/peer-s30): the MTRAG scorer with both LLM judges against the pool passages each row
# retrieved (judge Qwen2.5-Coder-1.5B Q4_K_M, MiniLM BERTScore: not comparable to official figures); several rows side
# by side with one judge thread each, one row alone with two. The 24 govt turns come from both splits; nothing was
# learned from them. By default only ours-full: the peer and the default were judged in session 30 (peer-s30/judged-*),
# compare with `local-rag eval compare docs/benchmarks/peer-s30/judged-peer docs/benchmarks/peer-s31/judged-ours-full`.
# Resumable per task; `local-rag eval compare` reads a row's scored.jsonl while it is being written (common tasks).
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/peer-s31/judge.sh   (~1 h for two rows on the Intel VM)
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=${RUN:-docs/benchmarks/peer-s31}   # RUN=docs/benchmarks/peer-s31-e600 ROWS=ours-e600: the second run (e600.sh)
name=$(basename "$D")
.venv/bin/python scripts/bench_peer.py --predictions $D   # runs/$name/predictions-<row>.jsonl (with MTRAG texts)
ROWS=${ROWS:-ours-full}   # the others too: ROWS="peer ours-rewrite ours-full"
n=1; [ "$(echo $ROWS | wc -w)" = 1 ] && n=2
export LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS=$n LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS_BATCH=$n OMP_NUM_THREADS=$n
for row in $ROWS; do
  /usr/bin/time -f "$row judged: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
    --predictions runs/$name/predictions-$row.jsonl --out runs/$name/judged-$row --no-charts &
done
wait
for row in $ROWS; do
  # answers, context ids and metrics without MTRAG texts (scripts/gen_eval_checkpoint.py), and the score report
  .venv/bin/python scripts/gen_eval_checkpoint.py save --runs runs/$name/judged-$row --dest $D
done

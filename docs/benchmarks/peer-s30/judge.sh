#!/usr/bin/env bash
# Issue 26, session 30: the answers of the peer benchmark in this folder (peer.json), judged like session 18's
# (docs/benchmarks/peer-levers): the MTRAG scorer with both LLM judges against the pool passages each row retrieved
# (judge Qwen2.5-Coder-1.5B Q4_K_M, MiniLM BERTScore: not comparable to official figures), the rows side by side with
# one judge thread each, as in session 18. The 24 govt turns come from both splits; nothing was learned from them.
# Resumable per task; `local-rag eval compare` reads a row's scored.jsonl while it is being written (common tasks).
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/peer-s30/judge.sh   (~1 h for two rows on the Intel VM)
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=docs/benchmarks/peer-s30
.venv/bin/python scripts/bench_peer.py --predictions $D   # runs/peer-s30/predictions-<row>.jsonl (with MTRAG texts)
export LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS=1 LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS_BATCH=1 OMP_NUM_THREADS=1
ROWS=${ROWS:-peer ours-rewrite}   # ours-e800 and ours-cold too: ROWS="ours-e800 ours-cold"
for row in $ROWS; do
  /usr/bin/time -f "$row judged: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
    --predictions runs/peer-s30/predictions-$row.jsonl --out runs/peer-s30/judged-$row --no-charts &
done
wait
for row in $ROWS; do
  # answers, context ids and metrics without MTRAG texts (scripts/gen_eval_checkpoint.py), and the score report
  .venv/bin/python scripts/gen_eval_checkpoint.py save --runs runs/peer-s30/judged-$row --dest $D
done

#!/usr/bin/env bash
# Judge the answers of a peer benchmark run (scripts/bench_peer.py --out RUN): the MTRAG scorer with both LLM judges
# (`local-rag eval generation --setting rag`, judge Qwen2.5-Coder-1.5B Q4_K_M as the gen_eval settings name it; MiniLM
# BERTScore: not comparable to official figures) against the pool passages each row retrieved, then each row's
# answers, context ids and metrics saved into RUN/judged-<row>/ without MTRAG texts (scripts/gen_eval_checkpoint.py).
#
#   ROWS="peer ours-rewrite" bash scripts/judge_peer.sh docs/benchmarks/peer-s31
#
# Several rows run side by side with one judge thread each, one row alone with two (JUDGE_THREADS to choose).
# Resumable per task; `local-rag eval compare RUN/judged-A RUN/judged-B` reads a row while it is being written.
# Working files: runs/<RUN's name>/predictions-<row>.jsonl and judged-<row>/ (they carry MTRAG texts: not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
D=${1:?usage: ROWS="row ..." bash scripts/judge_peer.sh RUN}
: "${ROWS:?ROWS: the rows of RUN/peer.json to judge, e.g. ROWS=\"peer ours-rewrite\"}"
name=$(basename "$D")
.venv/bin/python scripts/bench_peer.py --predictions "$D"   # runs/$name/predictions-<row>.jsonl (with MTRAG texts)
n=${JUDGE_THREADS:-1}; [ -z "${JUDGE_THREADS:-}" ] && [ "$(echo $ROWS | wc -w)" = 1 ] && n=2
export LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS=$n LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS_BATCH=$n OMP_NUM_THREADS=$n
for row in $ROWS; do
  /usr/bin/time -f "$row judged: wall %e s, peak RSS %M KB" .venv/bin/local-rag eval generation --setting rag \
    --predictions "runs/$name/predictions-$row.jsonl" --out "runs/$name/judged-$row" --no-charts &
done
wait
for row in $ROWS; do
  .venv/bin/python scripts/gen_eval_checkpoint.py save --runs "runs/$name/judged-$row" --dest "$D"
done

#!/usr/bin/env bash
# Session 45: `local-rag train adapt` with its cross-validated check (the default since session 45, `--folds 5`) on a
# pool index (DOMAIN, default cloud; PASSAGES, default 400: session 34's run, same chunks), then the kept model as
# the re-scorer on that domain's MTRAG test turns, beside the rows of run.sh (first stage, stock MiniLM, session 34's
# adapted model). Qwen2.5-Coder-1.5B writes the queries; its replies are committed (synth-cache-<domain>-s45.jsonl),
# so a rerun asks the LLM nothing. Resumable: the LLM cache, every fold's ranks, the model and finished rows are kept.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
B=docs/benchmarks/adapt
D=${DOMAIN:-cloud}
W=runs/adapt/mtrag-$D-cv
mkdir -p $W
[ -f $W/synth-cache.jsonl ] || [ ! -f $B/synth-cache-$D-s45.jsonl ] || cp $B/synth-cache-$D-s45.jsonl $W/synth-cache.jsonl
step adapt-cv $D; t $LR train adapt --index mtrag-$D --passages ${PASSAGES:-400} --work $W --name mtrag-$D-adapted-cv 2>&1 \
  | tr '\r' '\n' | grep -a "^|\|kept\|wall\|rror\|trained\|MRR@10 of\|cross-validated"
cp $W/report.json $B/report-$D-cv.json; cp $W/ranks.json $B/ranks-$D-cv.json; cp $W/synth-cache.jsonl $B/synth-cache-$D-s45.jsonl
C="--profile cpu-qwen --mode rewrite --rewrite rewrite --llm-cache runs/i23/rewrites.jsonl --domains $D"
R="--cross-encoder --reranker-backend bi-encoder --prior-weight 1 --candidates 20"
export LOCAL_RAG_FUSION__K=20
ev $D-own-k20 $C
ev $D-own-k20-minilm $C $R --reranker all-MiniLM-L6-v2
ev $D-own-k20-adapted-cv $C $R --reranker mtrag-$D-adapted-cv
step done

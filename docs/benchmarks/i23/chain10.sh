#!/usr/bin/env bash
# issue 23, session 19: synthetic queries (InPars / GPL style) for the bi-encoder fine-tune, measured with and
# without them. Queries written by Qwen2.5-Coder-0.5B (profile cpu-fast) for sampled pool passages, kept when their
# passage is in the hybrid's top 5 (consistency filter), hard negatives mined by the same hybrid. No test query or
# reference answer goes into a prompt (the prompt holds one passage). Real examples: train split only.
# Figures on the test split, beside session 15's rows (same indexes, same hyperparameters). Resumable.
# Before it (issue 26): the LLM judges on the 1.5B + levers answers of the 20 test tasks.
set -uo pipefail
cd "$(dirname "$0")/../../.."
LR=.venv/bin/local-rag
B=docs/benchmarks/i23
N=${N:-130}
step() { echo "=== $(date -u +%T) $*"; }
t() { /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock "$@"; }
ev() { out=$1; shift; [ -f $B/$out/scores.json ] && return; step eval $out; t $LR eval retrieval --split test --out $B/$out "$@" 2>&1 | tr '\r' '\n' | grep -a "^|\|wall\|rror"; }
[ -f runs/i26/judged-qwen-levers/scores.json ] || { step judge qwen-levers; LOCAL_RAG_GEN_EVAL__JUDGE__N_THREADS=2 t $LR eval generation --setting rag \
  --predictions runs/i26/gen-rag-test20-qwen-levers/predictions.jsonl --out runs/i26/judged-qwen-levers 2>&1 | tr '\r' '\n' | grep -a "^|\|wall\|rror\|HM"; }
[ -f runs/i23/train-data-hybrid.jsonl ] || { step train data; t $LR train data --profile cpu-test --split train --mode lastturn,rewrite \
  --negatives 8 --depth 30 --out runs/i23/train-data-hybrid.jsonl 2>&1 | tail -2; }
for d in govt clapnq fiqa cloud; do
  [ -f runs/i23/synth-$d.jsonl ] && continue
  step synth $d; t $LR synth queries ../shared/mtrag/corpora/pool/$d.jsonl --profile cpu-fast --index mtrag-$d --passages $N \
    --kinds question,follow_up --keep-example-copies --cache runs/i23/synth-cache.jsonl --out runs/i23/synth-$d.jsonl 2>&1 | tr '\r' '\n' | grep -a "kept\|wall\|rror"
done
cat runs/i23/synth-{govt,clapnq,fiqa,cloud}.jsonl > runs/i23/synth-all.jsonl
cat runs/i23/train-data-hybrid.jsonl runs/i23/synth-all.jsonl > runs/i23/train-data-mix.jsonl
wc -l runs/i23/synth-all.jsonl runs/i23/train-data-mix.jsonl
HP="--loss mnrl --negatives 1 --batch-size 32 --lr 2e-5 --max-length 256 --epochs 1"
[ -f models/i23-emb-s1/training.json ] || { step train i23-emb-s1; t $LR train embedder --data runs/i23/train-data-mix.jsonl --name i23-emb-s1 $HP 2>&1 | tr '\r' '\n' | grep -a "trained\|rror\|wall"; }
export LOCAL_RAG_RERANKER__MAX_LENGTH=256
BI="--profile cpu-test --mode lastturn --cross-encoder --reranker-backend bi-encoder"
ev i23-emb-s1-bi-lastturn $BI --reranker models/i23-emb-s1 --candidates 20
ev i23-emb-s1-bi-lastturn-prior1 $BI --reranker models/i23-emb-s1 --candidates 20 --prior-weight 1
[ -f models/i23-emb-s0/training.json ] || { step train i23-emb-s0; t $LR train embedder --data runs/i23/synth-all.jsonl --name i23-emb-s0 $HP 2>&1 | tr '\r' '\n' | grep -a "trained\|rror\|wall"; }
ev i23-emb-s0-bi-lastturn $BI --reranker models/i23-emb-s0 --candidates 20
ev i23-emb-s0-bi-lastturn-prior1 $BI --reranker models/i23-emb-s0 --candidates 20 --prior-weight 1
OWN="--profile cpu-qwen --mode rewrite --rewrite rewrite --llm-cache runs/i23/rewrites.jsonl --cross-encoder --reranker-backend bi-encoder"
ev i23-emb-s1-bi-own-prior1 $OWN --reranker models/i23-emb-s1 --candidates 20 --prior-weight 1
step done

#!/usr/bin/env bash
# issue 23, session 20: the consistency filter's ablation. The same 130 passages a corpus and the same cached 0.5B
# queries as chain10.sh (LLM-free: every query comes from runs/i23/synth-cache.jsonl), written with --no-filter, so
# every written query is kept. i23-emb-s2 = train split + the unfiltered synthetic set, session 15's recipe; test split.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
for d in govt clapnq fiqa cloud; do
  [ -f runs/i23/synth-nf-$d.jsonl ] && continue
  step synth $d; t $LR synth queries ../shared/mtrag/corpora/pool/$d.jsonl --profile cpu-fast --index mtrag-$d --passages 130 \
    --kinds question,follow_up --no-filter --keep-example-copies --cache runs/i23/synth-cache.jsonl --out runs/i23/synth-nf-$d.jsonl 2>&1 | tr '\r' '\n' | grep -a "kept\|wall\|rror"
done
cat runs/i23/synth-nf-{govt,clapnq,fiqa,cloud}.jsonl > runs/i23/synth-nf-all.jsonl
cat runs/i23/train-data-hybrid.jsonl runs/i23/synth-nf-all.jsonl > runs/i23/train-data-mix-nf.jsonl
wc -l runs/i23/synth-nf-all.jsonl runs/i23/train-data-mix-nf.jsonl
HP="--loss mnrl --negatives 1 --batch-size 32 --lr 2e-5 --max-length 256 --epochs 1"
[ -f models/i23-emb-s2/training.json ] || { step train i23-emb-s2; t $LR train embedder --data runs/i23/train-data-mix-nf.jsonl --name i23-emb-s2 $HP 2>&1 | tr '\r' '\n' | grep -a "trained\|rror\|wall"; }
export LOCAL_RAG_RERANKER__MAX_LENGTH=256
BI="--profile cpu-test --mode lastturn --cross-encoder --reranker-backend bi-encoder"
ev i23-emb-s2-bi-lastturn $BI --reranker models/i23-emb-s2 --candidates 20
ev i23-emb-s2-bi-lastturn-prior1 $BI --reranker models/i23-emb-s2 --candidates 20 --prior-weight 1
OWN="--profile cpu-qwen --mode rewrite --rewrite rewrite --llm-cache runs/i23/rewrites.jsonl --cross-encoder --reranker-backend bi-encoder"
ev i23-emb-s2-bi-own-prior1 $OWN --reranker models/i23-emb-s2 --candidates 20 --prior-weight 1
step done

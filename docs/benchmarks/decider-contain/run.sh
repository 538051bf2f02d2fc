#!/usr/bin/env bash
# issue 24, session 21: a containment cross-encoder as the decline signal. Qwen2.5-Coder-0.5B writes, for 30 passages
# of each pool corpus, a question the passage answers and one on the same subject it does not answer
# (`synth queries --unanswerable`); MiniLM is trained as a cross-encoder (bce) on (question, passage, 1),
# (unanswerable question, its passage, 0) and mined negatives; then the decider is retrained with its scores as the
# ce_* features, the first stage's order kept (prior weight 1000; the top 5 scored), same protocol as session 17.
#   bash docs/benchmarks/decider-contain/run.sh       (~35 min on 2 cores; resumable: LLM cache, finished steps kept)
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
mkdir -p runs/i24
for d in govt clapnq fiqa cloud; do
  [ -f runs/i24/contain-$d.jsonl ] && continue
  step synth $d; t $LR synth queries ../shared/mtrag/corpora/pool/$d.jsonl --profile cpu-fast --index mtrag-$d --passages 30 \
    --unanswerable --negatives 4 --keep-example-copies --cache runs/i24/contain-cache.jsonl --out runs/i24/contain-$d.jsonl 2>&1 | tr '\r' '\n' | grep -a "kept\|wall\|rror"
done
cat runs/i24/contain-{govt,clapnq,fiqa,cloud}.jsonl > runs/i24/contain-all.jsonl
[ -f models/i24-contain/training.json ] || { step train i24-contain; t $LR train reranker --data runs/i24/contain-all.jsonl \
  --name i24-contain --loss bce --negatives 2 --max-length 256 2>&1 | tr '\r' '\n' | grep -a "trained\|rror\|wall"; }
bash scripts/decider_indexes.sh
step decider
LOCAL_RAG_RERANKER__PRIOR_WEIGHT=1000 LOCAL_RAG_RERANKER__MAX_LENGTH=256 LOCAL_RAG_RERANKER__CANDIDATES=5 t $LR train decider --name i24-decider-contain \
  --report docs/benchmarks/decider-contain --work runs/i24-decider --cross-encoder --reranker models/i24-contain \
  --reranker-backend sentence-transformers 2>&1 | tr '\r' '\n' | grep -av "it/s\]$\|s/it\]$" | tail -40
step done
.venv/bin/python docs/benchmarks/decider-contain/auc.py

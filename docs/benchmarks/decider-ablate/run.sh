#!/usr/bin/env bash
# issue 24, session 22: containment learned from the train split's reference answers, no LLM. `train containment`
# takes, from each gold passage of the MTRAG train split's ANSWERABLE tasks, the sentence that carries most of the
# reference answer (label 1) and sentences of the same passage that hold at most one of its words (label 0); MiniLM is
# trained on them as a cross-encoder (bce) and scores a passage by its best sentence (`reranker.unit: sentence`).
# Measured: AUC on the test split's examples; the decider retrained with its scores as the ce_* features (order
# kept: prior weight 1000), same protocol as session 17; the single-signal AUC of a low score over the first stage's
# top 5 for UNANSWERABLE turns (on the decider's cached evidence). The passage-unit variant (each gold passage with and without its answer sentences)
# is the losing one, trained and measured last.
#   bash docs/benchmarks/decider-ablate/run.sh       (~60 min on 2 cores; finished steps are kept)
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
D=docs/benchmarks/decider-ablate
step data
for split in train test; do
  $LR train containment --split $split --out runs/i24/contain-sent-$split.jsonl
  $LR train containment --split $split --unit passage --out runs/i24/containment-$split.jsonl
done
[ -f models/i24-sent/training.json ] || { step train i24-sent; t $LR train reranker --data runs/i24/contain-sent-train.jsonl \
  --name i24-sent --loss bce --negatives 3 --max-length 128 2>&1 | tr '\r' '\n' | grep -a "trained\|rror\|wall"; }
[ -f $D/pair-auc-sentence.json ] || { step pair-auc; t .venv/bin/python $D/pair_auc.py models/i24-sent \
  runs/i24/contain-sent-test.jsonl $D/pair-auc-sentence.json 128 2>&1 | grep -av "it/s\]$\|s/it\]$" | tail -12; }
bash scripts/decider_indexes.sh
step decider
LOCAL_RAG_RERANKER__PRIOR_WEIGHT=1000 LOCAL_RAG_RERANKER__MAX_LENGTH=128 LOCAL_RAG_RERANKER__CANDIDATES=5 \
  LOCAL_RAG_RERANKER__UNIT=sentence t $LR train decider --name i24-decider-sent --report $D --work runs/i24-decider \
  --cross-encoder --reranker models/i24-sent --reranker-backend sentence-transformers 2>&1 | tr '\r' '\n' \
  | grep -av "it/s\]$\|s/it\]$\|turn/s\]$" | tail -40
[ -f $D/turn-auc-sentence.json ] || { step turn-auc; t .venv/bin/python $D/turn_auc.py models/i24-sent sentence \
  $D/turn-auc-sentence.json 2>&1 | grep -av "it/s\]$\|s/it\]$" | tail -20; }
# the own rewrite scored instead of the last turn (the cached rewrites: `local-rag train rewrites --profile cpu-qwen
# --split test --llm-cache runs/i23/rewrites.jsonl`, ~3-5 s a task with the 1.5B)
[ -f $D/turn-auc-sentence-rewrite.json ] || [ ! -f runs/i23/rewrites.jsonl ] || { step turn-auc own rewrite; t .venv/bin/python $D/turn_auc.py models/i24-sent sentence \
  $D/turn-auc-sentence-rewrite.json runs/i23/rewrites.jsonl 2>&1 | grep -av "it/s\]$\|s/it\]$" | tail -20; }
# with sentences of other documents as negatives too (the hard negatives `train data` mined for the same questions)
[ -f runs/i23/train-data-hybrid.jsonl ] || $LR train data --split train --mode lastturn,rewrite --out runs/i23/train-data-hybrid.jsonl
$LR train containment --mined runs/i23/train-data-hybrid.jsonl --out runs/i24/contain-mined-train.jsonl
[ -f models/i24-sent-mined/training.json ] || { step train i24-sent-mined; t $LR train reranker --data runs/i24/contain-mined-train.jsonl \
  --name i24-sent-mined --loss bce --negatives 6 --max-length 128 2>&1 | tr '\r' '\n' | grep -a "trained\|rror\|wall"; }
[ -f $D/pair-auc-sentence-mined.json ] || { step pair-auc mined; t .venv/bin/python $D/pair_auc.py models/i24-sent-mined \
  runs/i24/contain-sent-test.jsonl $D/pair-auc-sentence-mined.json 128 2>&1 | grep -av "it/s\]$\|s/it\]$" | tail -12; }
[ -f $D/turn-auc-sentence-mined.json ] || { step turn-auc mined; t .venv/bin/python $D/turn_auc.py models/i24-sent-mined sentence \
  $D/turn-auc-sentence-mined.json 2>&1 | grep -av "it/s\]$\|s/it\]$" | tail -20; }
# the losing variant: whole passages with and without their answer sentences
[ -f models/i24-ablate/training.json ] || { step train i24-ablate; t $LR train reranker --data runs/i24/containment-train.jsonl \
  --name i24-ablate --loss bce --negatives 1 --max-length 256 2>&1 | tr '\r' '\n' | grep -a "trained\|rror\|wall"; }
[ -f $D/pair-auc-passage.json ] || { step pair-auc passage; t .venv/bin/python $D/pair_auc.py models/i24-ablate \
  runs/i24/containment-test.jsonl $D/pair-auc-passage.json 256 2>&1 | grep -av "it/s\]$\|s/it\]$" | tail -12; }
step done

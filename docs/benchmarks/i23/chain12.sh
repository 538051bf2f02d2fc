#!/usr/bin/env bash
# issue 23, session 20: the fine-tuned embedder as the first stage (the issue's "rebuild the pool indexes with the
# winner under new index names"), on one domain first (clapnq: 625 s of embedding here): indexes/i23s2-clapnq with
# i23-emb-s2 as the dense model, then its first-stage recall (the ceiling of any reranker) and its hybrid rows beside
# the stock index's, on the test split.
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
S2="env LOCAL_RAG_EMBEDDER__MODEL=models/i23-emb-s2"
[ -f indexes/i23s2-clapnq/manifest.json ] || { step build; t $S2 $LR index build ../shared/mtrag/corpora/pool/clapnq.jsonl --profile cpu-test \
  --index i23s2-clapnq --skip-bad 2>&1 | tr '\r' '\n' | grep -a "chunks\|wall\|rror" | tail -3; }
[ -f $B/s20-ceiling-stock.json ] || { step ceiling stock; t $LR train ceiling --profile cpu-test --split test --domains clapnq --depths 5,10,20,50,100 > $B/s20-ceiling-stock.json; cat $B/s20-ceiling-stock.json; }
[ -f $B/s20-ceiling-s2.json ] || { step ceiling s2; t $S2 $LR train ceiling --profile cpu-test --split test --domains clapnq --index-prefix i23s2- --depths 5,10,20,50,100 > $B/s20-ceiling-s2.json; cat $B/s20-ceiling-s2.json; }
[ -f $B/s20-s2index-hybrid-lastturn/scores.json ] || { step eval hybrid s2 index; t $S2 $LR eval retrieval --split test --domains clapnq --index-prefix i23s2- \
  --profile cpu-test --mode lastturn --out $B/s20-s2index-hybrid-lastturn 2>&1 | tr '\r' '\n' | grep -a "^|\|wall\|rror"; }
step done

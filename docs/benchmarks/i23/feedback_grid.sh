#!/usr/bin/env bash
# issue 23, session 33: pseudo-relevance feedback (retrieval.feedback: a second search whose query is the text of the
# first fused list's top passages), chosen on the TRAIN split only, beside the own rewrite alone and with the HyDE
# passage (every LLM reply cached by chain14.sh/chain15.sh, so no LLM call here). One line a variant: train pool-3 and
# all nDCG@5. Results in runs/i23/s33-grid/<variant>/scores.json; summary printed. SPLIT=test runs the same on the test
# split into runs/i23/s33-test/ (only for the variants the train split chose: pass their names as arguments).
set -uo pipefail
cd "$(dirname "$0")/../../.."
LR=.venv/bin/local-rag
SPLIT=${SPLIT:-train}
G=runs/i23/s33-$([ "$SPLIT" = train ] && echo grid || echo test); mkdir -p $G
C=runs/i23/rewrites.jsonl
ONLY=" $* "
run() {  # name modes k passages [words] [feedback weight] [fusion weights] [feedback retrievers]
  local name=$1 rw=$2 k=$3 p=$4 w=${5:-128} fw=${6:-1} ws=${7:-'{"bm25":0.5}'} fr=${8:-'["bm25","dense"]'}
  [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $name "* ]] || return 0
  [ -f $G/$name/scores.json ] || flock /tmp/heavy.lock env LOCAL_RAG_FUSION__WEIGHTS="$ws" LOCAL_RAG_FUSION__K=$k \
    LOCAL_RAG_RETRIEVAL__FEEDBACK__PASSAGES=$p LOCAL_RAG_RETRIEVAL__FEEDBACK__WORDS=$w LOCAL_RAG_RETRIEVAL__FEEDBACK__WEIGHT=$fw LOCAL_RAG_RETRIEVAL__FEEDBACK__RETRIEVERS="$fr" \
    $LR eval retrieval --split $SPLIT --out $G/$name --profile cpu-qwen --mode rewrite --rewrite $rw --llm-cache $C > $G/$name.log 2>&1
  .venv/bin/python -c "import json,sys; s=json.load(open('$G/$name/scores.json')); print('$name', 'k=$k p=$p w=$w fw=$fw $ws $fr', *(f\"{k} {v['ndcg_cut_5']:.4f}\" for k,v in s.items() if k in ('pool-3','all')))" 2>/dev/null \
    || echo "$name: no scores ($(tail -1 $G/$name.log))"
}
run own-k20 rewrite 20 0
run own-hyde-k20 rewrite,hyde 20 0
run own-fb1 rewrite 20 1
run own-fb2 rewrite 20 2
run own-fb3 rewrite 20 3
run own-hyde-fb1 rewrite,hyde 20 1
run own-hyde-fb2 rewrite,hyde 20 2
run own-hyde-fb3 rewrite,hyde 20 3
# second round (a feedback weight below 1 multiplies the retriever's weight: bm25:feedback 0.25 in the -half rows)
run own-fb5 rewrite 20 5
run own-fb3-w64 rewrite 20 3 64
run own-fb5-w64 rewrite 20 5 64
run own-fb3-half rewrite 20 3 128 0.5
run own-fb3-dense rewrite 20 3 128 1 '{"bm25":0.5,"bm25:feedback":0}'
run own-fb3-bm25 rewrite 20 3 128 1 '{"bm25":0.5,"dense:feedback":0}'
# third round: the feedback's BM25 list alone, at the default profile's RRF k 60 and at 20
run own-k60 rewrite 60 0
run own-fb3-bm25-k60 rewrite 60 3 128 1 '{"bm25":0.5,"dense:feedback":0}'
run own-fb3-k60 rewrite 60 3
run own-fb2-bm25 rewrite 20 2 128 1 '{"bm25":0.5,"dense:feedback":0}'
run own-fb5-bm25 rewrite 20 5 128 1 '{"bm25":0.5,"dense:feedback":0}'
run own-fb3-bm25-half rewrite 20 3 128 0.5 '{"bm25":0.5,"dense:feedback":0}'
run own-fb3-bm25-full rewrite 20 3 128 1 '{"bm25":0.5,"dense:feedback":0,"bm25:feedback":1}'
run own-hyde-fb3-bm25 rewrite,hyde 20 3 128 1 '{"bm25":0.5,"dense:feedback":0}'
# fourth round: the feedback search run by BM25 alone (retrieval.feedback.retrievers [bm25], no dense feedback search)
run own-fb3-b rewrite 20 3 128 1 '{"bm25":0.5}' '["bm25"]'
run own-fb3-b-k60 rewrite 60 3 128 1 '{"bm25":0.5}' '["bm25"]'
run own-fb3-b-x2 rewrite 20 3 128 2 '{"bm25":0.5}' '["bm25"]'
run own-fb4-b rewrite 20 4 128 1 '{"bm25":0.5}' '["bm25"]'
run own-fb3-b-w96 rewrite 20 3 96 1 '{"bm25":0.5}' '["bm25"]'
run own-fb3-b-w192 rewrite 20 3 192 1 '{"bm25":0.5}' '["bm25"]'
run own-hyde-fb3-b rewrite,hyde 20 3 128 1 '{"bm25":0.5}' '["bm25"]'
run own-k10 rewrite 10 0

#!/usr/bin/env bash
# issue 23, session 32: choose how the HyDE passage joins the fusion on the TRAIN split only (every LLM reply cached
# by chain14.sh/chain15.sh, so no LLM call here): the query lists fused, the HyDE lists' RRF weights, and the HyDE
# passage's length (its first N tokens, hyde_cut.py: what max_tokens N writes under greedy decoding). One line a
# variant: train pool-3 and all nDCG@5. Results in runs/i23/s32-grid/<variant>/scores.json; summary printed.
set -uo pipefail
cd "$(dirname "$0")/../../.."
LR=.venv/bin/local-rag
G=runs/i23/s32-grid; mkdir -p $G
for n in 48 64; do [ -f runs/i23/hyde$n.jsonl ] || .venv/bin/python docs/benchmarks/i23/hyde_cut.py runs/i23/rewrites.jsonl $n runs/i23/hyde$n.jsonl 2>/dev/null; done
[ -f runs/i23/hyde-q2d.jsonl ] || .venv/bin/python docs/benchmarks/i23/hyde_cut.py runs/i23/rewrites.jsonl 96 runs/i23/hyde-q2d.jsonl q2d 2>/dev/null
run() {  # name cache modes rewrites weights [rrf k]
  local name=$1 cache=$2 mode=$3 rw=$4 w=$5 k=${6:-60}
  [ -f $G/$name/scores.json ] || LOCAL_RAG_FUSION__WEIGHTS="$w" LOCAL_RAG_FUSION__K=$k $LR eval retrieval --split train --out $G/$name --profile cpu-qwen \
    --mode $mode --rewrite $rw --llm-cache $cache > $G/$name.log 2>&1
  .venv/bin/python -c "import json,sys; s=json.load(open('$G/$name/scores.json')); print('$name', 'k=$k', *(f\"{k} {v['ndcg_cut_5']:.4f}\" for k,v in s.items() if k in ('pool-3','all')), '$w')" 2>/dev/null \
    || echo "$name: no scores ($(tail -1 $G/$name.log))"
}
C=runs/i23/rewrites.jsonl
run own $C rewrite rewrite '{"bm25":0.5}'
run lastturn-hyde $C lastturn hyde '{"bm25":0.5}'
run lastturn-own-hyde $C lastturn,rewrite rewrite,hyde '{"bm25":0.5}'
run own-hyde $C rewrite rewrite,hyde '{"bm25":0.5}'
run own-hyde-dense $C rewrite rewrite,hyde '{"bm25":0.5,"bm25:hyde":0}'
run own-hyde-bm25full $C rewrite rewrite,hyde '{"bm25":0.5,"bm25:hyde":1}'
run own-hyde-half $C rewrite rewrite,hyde '{"bm25":0.5,"dense:hyde":0.5,"bm25:hyde":0.25}'
run own-hyde-x1.5 $C rewrite rewrite,hyde '{"bm25":0.5,"dense:hyde":1.5,"bm25:hyde":0.75}'
run own-hyde-x2 $C rewrite rewrite,hyde '{"bm25":0.5,"dense:hyde":2,"bm25:hyde":1}'
run own-hyde48 runs/i23/hyde48.jsonl rewrite rewrite,hyde '{"bm25":0.5}'
run own-hyde64 runs/i23/hyde64.jsonl rewrite rewrite,hyde '{"bm25":0.5}'
run own-q2d runs/i23/hyde-q2d.jsonl rewrite rewrite,hyde '{"bm25":0.5}'
run own-hyde-k20 $C rewrite rewrite,hyde '{"bm25":0.5}' 20
run own-hyde-k120 $C rewrite rewrite,hyde '{"bm25":0.5}' 120
run own-k20 $C rewrite rewrite '{"bm25":0.5}' 20
# second round, from the first's best (RRF k=20)
run own-hyde-k10 $C rewrite rewrite,hyde '{"bm25":0.5}' 10
run own-hyde-k30 $C rewrite rewrite,hyde '{"bm25":0.5}' 30
run own-hyde-k40 $C rewrite rewrite,hyde '{"bm25":0.5}' 40
run own-hyde48-k20 runs/i23/hyde48.jsonl rewrite rewrite,hyde '{"bm25":0.5}' 20
run own-hyde64-k20 runs/i23/hyde64.jsonl rewrite rewrite,hyde '{"bm25":0.5}' 20
run own-hyde-dense-k20 $C rewrite rewrite,hyde '{"bm25":0.5,"bm25:hyde":0}' 20
run own-k10 $C rewrite rewrite '{"bm25":0.5}' 10
run own-k40 $C rewrite rewrite '{"bm25":0.5}' 40

#!/usr/bin/env bash
# issue 23, session 21: learned fusion + i23-emb-s2 stacked; then: does a label-free check on held-out synthetic
# queries (`local-rag synth eval`) tell which embedder is better on real questions? Queries for 40 more passages a pool corpus (the sha1 sample's 131st-170th,
# unfiltered, Qwen2.5-Coder-0.5B), held out by document from the 130 the models were trained on, then each model's
# MRR@10 / recall on them, against the MTRAG test-split figures of the same models (benchmarks.md, sessions 19-20).
#   bash docs/benchmarks/i23/chain13.sh      (~50 min on 2 cores; resumable: cached queries, finished rows kept)
set -uo pipefail
cd "$(dirname "$0")/../../.."
. docs/benchmarks/i23/lib.sh
H=$B/heldout
mkdir -p $H
# the two best stages stacked: own rewrite, learned fusion (i23-fusion-rw), then i23-emb-s2 fused with that order
LOCAL_RAG_RERANKER__MAX_LENGTH=256 ev i23-fusion-rw-s2-prior1 --profile cpu-qwen --mode lastturn,lasttwo,lastanswer --rewrite rewrite \
  --llm-cache runs/i23/rewrites.jsonl --fusion learned --fusion-model models/i23-fusion-rw --cross-encoder \
  --reranker-backend bi-encoder --reranker models/i23-emb-s2 --candidates 20 --prior-weight 1
for d in govt clapnq fiqa cloud; do
  [ -f runs/i23/synth-ho170-$d.jsonl ] && continue
  step synth $d; t $LR synth queries ../shared/mtrag/corpora/pool/$d.jsonl --profile cpu-fast --index mtrag-$d --passages 170 \
    --kinds question,follow_up --no-filter --keep-example-copies --cache runs/i23/synth-cache.jsonl --out runs/i23/synth-ho170-$d.jsonl 2>&1 | tr '\r' '\n' | grep -a "kept\|wall\|rror"
done
.venv/bin/python - <<'PY'
import json
from local_rag.train.data import document_of
from local_rag.train.synth import SynthQuery, write_heldout
for d in ("govt", "clapnq", "fiqa", "cloud"):
    rows = lambda f: [json.loads(line) for line in open(f"runs/i23/{f}", encoding="utf-8") if line.strip()]
    trained = {document_of(r["passage_id"]) for r in rows(f"synth-nf-{d}.jsonl.queries.jsonl")}
    held = [SynthQuery(r["passage_id"], r["kind"], r["text"]) for r in rows(f"synth-ho170-{d}.jsonl.queries.jsonl")
            if document_of(r["passage_id"]) not in trained]
    write_heldout(held, f"runs/i23/heldout-{d}.jsonl", "passage")
    print(d, len(held), "held-out queries from", len({q.passage_id for q in held}), "passages")
PY
export LOCAL_RAG_RERANKER__MAX_LENGTH=256
# the stock MiniLM fused with the hybrid's order on MTRAG's test split (the one row of the comparison not run before)
ev minilm-bi-lastturn-prior1 --profile cpu-test --mode lastturn --cross-encoder --reranker-backend bi-encoder \
  --reranker all-MiniLM-L6-v2 --candidates 20 --prior-weight 1
for m in all-MiniLM-L6-v2 models/i23-emb-s0 models/i23-emb-s1 models/i23-emb-s2; do
  for p in 0 1; do
    for d in govt clapnq fiqa cloud; do
      f=$H/$(basename $m)-prior$p-$d.json
      [ -s $f ] && continue
      flock /tmp/heavy.lock $LR synth eval runs/i23/heldout-$d.jsonl --profile cpu-test --index mtrag-$d --reranker $m \
        --reranker-backend bi-encoder --candidates 20 --prior-weight $p --json > $f.tmp 2>/dev/null && mv $f.tmp $f
    done
  done
done
.venv/bin/python docs/benchmarks/i23/heldout_table.py > $H/table.md && cat $H/table.md
step done

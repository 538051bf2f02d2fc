#!/usr/bin/env bash
# issue 23, session 33: a second wording of the HyDE prompt (docs/benchmarks/i23/hyde-v2.yaml: "a page that would
# answer ... a help or documentation page, an encyclopedia article, a government page or a forum answer, whichever
# fits", against the bundled "encyclopedia or documentation page"), chosen on the TRAIN split first. The package is
# run from a scratch copy whose prompts/hyde.yaml is the variant (nothing in the checkout changes); the own rewrites
# come from the session 32 cache (runs/i23/rewrites.jsonl, its rewrite lines only), the new passages go to
# runs/i23/hyde-v2.jsonl (each line records the variant prompt's fingerprint). RRF k 20 (cpu-hyde's).
#   bash docs/benchmarks/i23/hyde_variant.sh            # train (~25 min of the 1.5B on 2 cores)
#   SPLIT=test bash docs/benchmarks/i23/hyde_variant.sh # test (~15 min), only if train says so
# Another variant: VARIANT=docs/benchmarks/i23/hyde-160.yaml NAME=hyde160 DOMAINS=clapnq,cloud,fiqa (the bundled
# wording, max_tokens 160, pool-3 only: ~30 min).
set -euo pipefail
cd "$(dirname "$0")/../../.."
SPLIT=${SPLIT:-train}; VARIANT=${VARIANT:-docs/benchmarks/i23/hyde-v2.yaml}; NAME=${NAME:-hydev2}
R=$(pwd)
# a scratch copy of the package, run from its own folder (the current folder comes first on sys.path)
S=$(mktemp -d); trap 'rm -rf $S' EXIT; cp -r local_rag $S/; cp $VARIANT $S/local_rag/prompts/hyde.yaml
C=runs/i23/hyde-${NAME#hyde}.jsonl   # hydev2: runs/i23/hyde-v2.jsonl
[ -f $C ] || grep '|rewrite|' runs/i23/rewrites.jsonl > $C
out=runs/i23/s33-$([ "$SPLIT" = train ] && echo grid || echo test)/own-$NAME-k20
[ -f $out/scores.json ] || (cd $S && flock /tmp/heavy.lock env LOCAL_RAG_MODELS_DIR=$R/models LOCAL_RAG_INDEXES_DIR=$R/indexes \
  LOCAL_RAG_MTRAG_DIR=$(realpath $R/../shared/mtrag) LOCAL_RAG_FUSION__WEIGHTS='{"bm25":0.5}' LOCAL_RAG_FUSION__K=20 \
  $R/.venv/bin/python -m local_rag eval retrieval --split $SPLIT --out $R/$out --profile cpu-qwen --mode rewrite \
  --rewrite rewrite,hyde --llm-cache $R/$C --domains ${DOMAINS:-clapnq,cloud,fiqa,govt})
grep -E "^\| (clapnq|cloud|fiqa|govt|pool-3|all) " $out/scores.md

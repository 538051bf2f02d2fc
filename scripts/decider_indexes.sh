#!/usr/bin/env bash
# The indexes the decision stage is trained on (`local-rag train decider`).
# Default: a copy of each pool index indexes/mtrag-<domain> as indexes/i24-mtrag-<domain>, plus the reference
# passages of the MTRAG-UN development tasks that the pool lacks (mtragun-dev/corpora/extra/<domain>.jsonl); MTRAG
# tasks retrieve from mtrag-<domain> itself, which is never changed.
# SPARSE=1: BM25-only indexes, built in minutes instead of the pool's hour of embedding: i24-bm25-<domain> (the pool)
# and i24-bm25un-<domain> (the pool plus the extra passages).
# An index that exists is kept (delete it to rebuild).
set -euo pipefail
cd "$(dirname "$0")/.."
MTRAG=${LOCAL_RAG_MTRAG_DIR:-../shared/mtrag}
INDEXES=${LOCAL_RAG_INDEXES_DIR:-indexes}
LOCAL_RAG=${LOCAL_RAG:-.venv/bin/local-rag}
export LOCAL_RAG_INDEXES_DIR="$INDEXES"
for d in ${DOMAINS:-govt clapnq fiqa cloud}; do
  if [ "${SPARSE:-0}" = 1 ]; then
    export LOCAL_RAG_DENSE__ENABLED=false LOCAL_RAG_RETRIEVAL__RETRIEVERS='["bm25"]'
    base=i24-bm25-$d copy=i24-bm25un-$d
    [ -d "$INDEXES/$base" ] || $LOCAL_RAG index build "$MTRAG/corpora/pool/$d.jsonl" --sparse-only --index "$base" --skip-bad
  else
    base=mtrag-$d copy=i24-mtrag-$d
    if [ ! -f "$INDEXES/$base/manifest.json" ]; then echo "$base not built yet: skipped"; continue; fi
  fi
  if [ -d "$INDEXES/$copy" ]; then echo "$copy exists"; continue; fi
  rm -rf "$INDEXES/.$copy.tmp"
  cp -r "$INDEXES/$base" "$INDEXES/.$copy.tmp"
  $LOCAL_RAG index add "$MTRAG/mtragun-dev/corpora/extra/$d.jsonl" --index ".$copy.tmp" --skip-bad
  mv "$INDEXES/.$copy.tmp" "$INDEXES/$copy"
done

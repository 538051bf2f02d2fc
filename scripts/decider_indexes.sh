#!/usr/bin/env bash
# The indexes MTRAG-UN development tasks retrieve from: a copy of each pool index indexes/mtrag-<domain> as
# indexes/i24-mtrag-<domain>, plus the reference passages the pool lacks (mtragun-dev/corpora/extra/<domain>.jsonl).
# The pool indexes themselves are never changed. A copy that exists already is kept (delete it to rebuild).
set -euo pipefail
cd "$(dirname "$0")/.."
MTRAG=${LOCAL_RAG_MTRAG_DIR:-../shared/mtrag}
INDEXES=${LOCAL_RAG_INDEXES_DIR:-indexes}
LOCAL_RAG=${LOCAL_RAG:-.venv/bin/local-rag}
for d in ${DOMAINS:-govt clapnq fiqa cloud}; do
  if [ -d "$INDEXES/i24-mtrag-$d" ]; then echo "i24-mtrag-$d exists"; continue; fi
  if [ ! -f "$INDEXES/mtrag-$d/manifest.json" ]; then echo "mtrag-$d not built yet: skipped"; continue; fi
  cp -r "$INDEXES/mtrag-$d" "$INDEXES/.i24-mtrag-$d.tmp"
  LOCAL_RAG_INDEXES_DIR="$INDEXES" $LOCAL_RAG index add "$MTRAG/mtragun-dev/corpora/extra/$d.jsonl" --index ".i24-mtrag-$d.tmp" --skip-bad
  mv "$INDEXES/.i24-mtrag-$d.tmp" "$INDEXES/i24-mtrag-$d"
done

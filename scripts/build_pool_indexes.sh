#!/usr/bin/env bash
# Build the hybrid (bm25s + FAISS Flat) indexes of the MTRAG pool corpora: indexes/mtrag-<domain>.
# ~40 min on 2 CPU cores with all-MiniLM-L6-v2 (most of it is embedding ~45k chunks).
set -euo pipefail
cd "$(dirname "$0")/.."
MTRAG=${LOCAL_RAG_MTRAG_DIR:-../shared/mtrag}
PROFILE=${PROFILE:-cpu-test}
for d in ${DOMAINS:-clapnq cloud fiqa govt}; do
  # --skip-bad: the cloud corpus holds 3 passages with empty text (skipped and counted in the manifest)
  .venv/bin/local-rag index build "$MTRAG/corpora/pool/$d.jsonl" --profile "$PROFILE" --index "mtrag-$d" --skip-bad
done

#!/usr/bin/env bash
# Session 35: long files as passages in pieces (local_rag/corpus/pieces.py), measured on this repository's own docs
# (docs/*.md and README.md: 13 Markdown files, the longest 1,900 lines). Two indexes of the same files: one passage a
# file (as the folder reader made them before; built from a JSONL of the whole files) and the folder reader's pieces.
# Qwen2.5-Coder-1.5B (profile cpu) writes questions for 150 chunks of the first (`synth queries`, as `train adapt`
# does; ~8 min, cached in runs/pieces/), then proxy.py counts how often the chunk a question was written for is in the top k.
set -euo pipefail
cd "$(dirname "$0")/../../.."
W=runs/pieces; mkdir -p $W/docs; cp docs/*.md README.md $W/docs/
export LOCAL_RAG_INDEXES_DIR=$PWD/$W/indexes
.venv/bin/python - <<'PY'
import json
from pathlib import Path
from local_rag.corpus.documents import read_document
out = []
for path in sorted(Path("runs/pieces/docs").glob("*.md")):
    doc = read_document(path)
    out.append({"_id": path.name, "title": doc.title, "text": "".join(s.text for s in doc.sections)})
Path("runs/pieces/files.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out))
PY
[ -d $W/indexes/files ] || flock /tmp/heavy.lock .venv/bin/local-rag index build $W/files.jsonl --index files 2>&1 | tr '\r' '\n' | grep built
[ -d $W/indexes/pieces ] || flock /tmp/heavy.lock .venv/bin/local-rag index build $W/docs --index pieces 2>&1 | tr '\r' '\n' | grep built
[ -f $W/synth.jsonl ] || flock /tmp/heavy.lock .venv/bin/local-rag synth queries --index files --passages 150 \
  --holdout 0.2 --cache $W/synth-cache.jsonl --out $W/synth.jsonl 2>&1 | tr '\r' '\n' | grep -a "kept\|rror" || true
flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/pieces/proxy.py files \
  $W/synth.jsonl.queries.jsonl,$W/synth.jsonl.heldout.jsonl files pieces | tee docs/benchmarks/pieces/proxy.md

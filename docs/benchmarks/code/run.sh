#!/usr/bin/env bash
# Session 58: do a source file's definition headings (`index build --code`, local_rag/corpus/code.py) help a search
# find the code a question is about? Measured on this package's own source (local_rag/: 248 .py, 26 .yaml, 6 .md),
# two indexes of the same files: `code`, read with --code (a heading at each definition: pieces cut between
# definitions, each chunk indexed under "file § def name(args)"), and `astext`, the same files renamed X.py.txt and
# read as the plain text they were before --code (pieces cut at blank lines, no section). Qwen2.5-Coder-1.5B (profile
# cpu) writes questions for 150 chunks of `code` (`synth queries`, as `train adapt` does, every question kept; cached
# in runs/code/), then the pieces proxy counts how often the chunk a question was written for is covered by the top k
# of each index.
# Session 59: BM25 of an index read with --code also indexes the words of identifiers (read_code: read, code;
# `SparseConfig.identifiers`); `code-unsplit` is `code` rebuilt without (LOCAL_RAG_SPARSE__IDENTIFIERS=false, as
# session 58 built it), measured hybrid (the default) and with BM25 alone; the last lines pair each index with the
# first (questions only one of the two finds, sign test); and with the questions' quoted names written as words
# (in_words.py), as a person who does not know them asks.
#   bash docs/benchmarks/code/run.sh     # ~15 min here: the two index builds (the 1.5B's replies come from the
#                                        # committed cache; without it, 15 more minutes)
set -euo pipefail
cd "$(dirname "$0")/../../.."
W=runs/code; mkdir -p $W
export LOCAL_RAG_INDEXES_DIR=$PWD/$W/indexes
if [ ! -d $W/src ]; then
  git archive dfe5959 local_rag | tar -x -C $W && mv $W/local_rag $W/src  # the source as measured
  mkdir -p $W/astext && (cd $W/src && find . -type f | while read -r f; do mkdir -p "../astext/$(dirname "$f")";
    case "$f" in *.md) cp "$f" "../astext/$f";; *) cp "$f" "../astext/$f.txt";; esac; done)
fi
[ -d $W/indexes/code ] || flock /tmp/heavy.lock .venv/bin/local-rag index build $W/src --index code --code 2>&1 | tr '\r' '\n' | grep built
[ -d $W/indexes/astext ] || flock /tmp/heavy.lock .venv/bin/local-rag index build $W/astext --index astext 2>&1 | tr '\r' '\n' | grep built
if [ ! -d $W/indexes/code-unsplit ]; then
  cp -r $W/indexes/code $W/indexes/code-unsplit
  LOCAL_RAG_SPARSE__IDENTIFIERS=false .venv/bin/local-rag index rebuild --index code-unsplit > /dev/null
fi
# the 1.5B's replies of session 58 are committed (synth-cache.jsonl): a rerun writes the same questions (queries.jsonl)
[ -f $W/synth-cache.jsonl ] || cp docs/benchmarks/code/synth-cache.jsonl $W/synth-cache.jsonl
# --no-filter: every question written is kept (the consistency filter would keep those `code` already finds)
[ -f $W/synth.jsonl ] || flock /tmp/heavy.lock .venv/bin/local-rag synth queries --index code --passages 150 \
  --no-filter --cache $W/synth-cache.jsonl --out $W/synth.jsonl 2>&1 | tr '\r' '\n' | grep -a "kept\|rror" || true
{ flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/pieces/proxy.py code $W/synth.jsonl.queries.jsonl code \
    code-unsplit astext
  echo; echo "BM25 alone (LOCAL_RAG_RETRIEVAL__RETRIEVERS='[\"bm25\"]'):"
  LOCAL_RAG_RETRIEVAL__RETRIEVERS='["bm25"]' flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/pieces/proxy.py \
    code $W/synth.jsonl.queries.jsonl code code-unsplit astext
  .venv/bin/python docs/benchmarks/code/in_words.py $W/synth.jsonl.queries.jsonl > $W/in-words.jsonl
  echo; echo "The same questions with the code's names in words (\`read_code\` -> read code; in_words.py), hybrid:"
  flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/pieces/proxy.py code $W/in-words.jsonl code code-unsplit \
    astext; } | tee docs/benchmarks/code/proxy.md

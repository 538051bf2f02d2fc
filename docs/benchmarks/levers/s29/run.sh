#!/usr/bin/env bash
# Issue 26, session 29: the warm-up between turns (pipeline.warm), prompt lookup with llama.cpp's AMX kernels, and the
# rewrite's reply prefilled (rewrite.reply: prefix), in whole turns: the 12 test turns of sessions 14, 20, 26 and 28,
# Qwen2.5-Coder-1.5B Q4_K_M, all-MiniLM-L6-v2, the AMX build of scripts/install_llama_cpp.sh. Rounds 1 and 2 hold the
# four combinations of warm-up and prompt lookup, round 3 the prefilled rewrite beside its pair, round 4 the old and
# the new default once more. Resumable per turn.
# Run it alone: flock /tmp/heavy.lock bash docs/benchmarks/levers/s29/run.sh   (~45 min)
# (the committed rows were run in another order, listed in docs/benchmarks.md; the rewrite check:
#  .venv/bin/python docs/benchmarks/levers/s29/rewrite_reply.py --tasks 40 --out docs/benchmarks/levers/s29/rewrite-reply.json)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=docs/benchmarks/levers/s29
run() { .venv/bin/local-rag bench-levers ablation --mode c --conversations 2 --max-turns 12 --configs "$2" --out "$D/$1"; }
for r in round1 round2; do
  for c in all-nolookup all all-nolookup-warm all-warm; do run $r $c; done
done
for c in all-warm-prefix all-warm; do run round3 $c; done
for c in all-nolookup all-warm-prefix; do run round4 $c; done   # the old default and the new one, once more
for r in round1 round2 round3 round4; do .venv/bin/local-rag bench-levers table --out $D/$r; done

# Helpers of the issue-23 chain scripts (sourced from the repository root): a timed step under the heavy lock, and an
# `eval retrieval` on the test split that is skipped once its scores exist (resumable).
LR=.venv/bin/local-rag
B=docs/benchmarks/i23
step() { echo "=== $(date -u +%T) $*"; }
t() { /usr/bin/time -f "wall %e s, peak RSS %M KB" flock /tmp/heavy.lock "$@"; }
ev() { out=$1; shift; [ -f $B/$out/scores.json ] && return; step eval $out; t $LR eval retrieval --split test --out $B/$out "$@" 2>&1 | tr '\r' '\n' | grep -a "^|\|wall\|rror"; }

#!/usr/bin/env bash
# issue 26, session 21: does another quantisation type or batch size prefill faster on this CPU? Requantises the
# shipped Qwen2.5-Coder-1.5B Q4_K_M GGUF with llama.cpp's own quantiser (through llama-cpp-python) to Q4_0, IQ4_NL
# and Q8_0 (types llama.cpp repacks for AVX2), then times prefill of a 1,024-token prompt and 32 decoded tokens,
# 2 threads, twice each; Q4_K_M also at micro-batch 128 and 256. Writes results.jsonl here. ~10 min on 2 cores.
#   bash docs/benchmarks/levers/quant/run.sh          (needs models/qwen2.5-coder-1.5b-instruct-q4_k_m; tmp in $TMPDIR)
# OUTD=<folder> writes results.jsonl and system_info.txt there instead (session 40: levers/s40/quant, the Zen 4 VM).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
OUTD=${OUTD:-docs/benchmarks/levers/quant}; mkdir -p "$OUTD"
OUTF=$OUTD/results.jsonl
SRC=models/qwen2.5-coder-1.5b-instruct-q4_k_m/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
TMP=${TMPDIR:-/tmp}/local-rag-quant; mkdir -p "$TMP"
PY=.venv/bin/python
: > "$OUTF"
measure() {  # model ubatch label
  flock /tmp/heavy.lock $PY - "$@" >> "$OUTF" <<'PYEOF'
import json, os, sys, time
from llama_cpp import Llama
path, ubatch, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
llm = Llama(model_path=path, n_ctx=2048, n_threads=2, n_threads_batch=2, n_batch=512, n_ubatch=ubatch,
            flash_attn=True, verbose=False)
text = open("README.md", encoding="utf-8").read()
toks = llm.tokenize(text.encode())[:1024]
runs = []
for _ in range(2):
    llm.reset(); t = time.perf_counter(); llm.eval(toks); pp = len(toks) / (time.perf_counter() - t)
    t = time.perf_counter()
    for i in range(32):
        llm.eval([toks[i]])
    runs.append({"prefill_tok_s": round(pp, 1), "decode_tok_s": round(32 / (time.perf_counter() - t), 1)})
print(json.dumps({"model": label, "ubatch": ubatch, "bytes": os.path.getsize(path), "prompt_tokens": len(toks), "runs": runs}))
PYEOF
}
quantize() {  # ftype name
  [ -f "$TMP/$2.gguf" ] || flock /tmp/heavy.lock $PY -c "
import ctypes, llama_cpp
p = llama_cpp.llama_model_quantize_default_params(); p.nthread = 2; p.ftype = $1; p.allow_requantize = True
assert llama_cpp.llama_model_quantize(b'$SRC', b'$TMP/$2.gguf', ctypes.byref(p)) == 0"
}
for ub in 512 256 128; do measure $SRC $ub q4_k_m; done
for q in 2:q4_0 25:iq4_nl 7:q8_0; do quantize ${q%%:*} ${q##*:}; measure "$TMP/${q##*:}.gguf" 512 ${q##*:}; done
$PY -c "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())" > "$OUTD/system_info.txt"
grep -o 'flags.*' /proc/cpuinfo | head -1 >> "$OUTD/system_info.txt"
cat "$OUTF"

#!/usr/bin/env bash
# The whole stack on a GPU machine, end to end, with its figures written down. Run it when a GPU machine is at hand
# and commit what it writes (docs/benchmarks/gpu-smoke-<gpu>-<date>/):
#
#   bash scripts/gpu_smoke.sh [OUT]
#
# Steps, each with its exit code and wall time in OUT/steps.tsv and its output in OUT/<step>.out/.err:
#   bootstrap   make bootstrap with the CUDA builds (torch, faiss-gpu, onnxruntime-gpu, llama.cpp -DGGML_CUDA=on)
#               and the demo's models (SKIP_BOOTSTRAP=1: use .venv as it is)
#   doctor      local-rag doctor --json: the smoke FAILS when any stage would silently run on the CPU
#   plan        local-rag plan for this GPU's free VRAM
#   index       the bundled docs indexed on the GPU (embedder on cuda, FAISS on the GPU)
#   ask         one question, --json (answer, citations, timings)
#   bench       two sessions of the demo script; the report's `backends_used` says where every stage really ran
#   serve       the server: /healthz, one chat completion, one /v1/embeddings call
# PROFILE: gpu-8gb when its models are present, else cpu-qwen (its small models then run on the GPU).
# Needs a network for the bootstrap (PyPI) unless SKIP_BOOTSTRAP=1 with a ready .venv and models/.
set -uo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_smoke: no GPU (nvidia-smi -L fails); this script is for a GPU machine" >&2
  exit 2
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr -c 'A-Za-z0-9\n' '-' | tr -s '-')
OUT=${1:-docs/benchmarks/gpu-smoke-${gpu%-}-$(date +%Y%m%d)}
VENV=${VENV:-.venv}
LR="$VENV/bin/local-rag"
PORT=${PORT:-8765}
INDEX=gpu-smoke
mkdir -p "$OUT"
printf 'step\texit\tseconds\n' > "$OUT/steps.tsv"
failed=0

step() {  # step NAME CMD...: run, record exit code and wall time; a failure is counted, the smoke goes on
  local name=$1
  shift
  local start
  start=$(date +%s%N)
  "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  local rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(( ($(date +%s%N) - start) / 1000000 ))e-3" >> "$OUT/steps.tsv"
  [ "$rc" -eq 0 ] || { failed=$((failed + 1)); echo "gpu_smoke: step $name failed ($rc): $OUT/$name.err" >&2; }
  return "$rc"
}

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
if [ -z "${SKIP_BOOTSTRAP:-}" ]; then
  step bootstrap bash -c "make bootstrap && bash scripts/install_demo_model.sh"
fi
PROFILE=${PROFILE:-$("$VENV/bin/python" - <<'EOF'
from local_rag.demo import demo_profile
from local_rag.errors import LocalRagError
from local_rag.modelstore.manifest import Manifest
from local_rag.settings import load_settings

s = load_settings("gpu-8gb")
try:
    m = Manifest.load(s.models_dir)
    ok = all(n in m.entries and m.is_present(m.entries[n]) for n in (s.embedder.model, s.llm.model))
except LocalRagError:
    ok = False
print("gpu-8gb" if ok else demo_profile())
EOF
)}
echo "gpu_smoke: GPU $gpu, profile $PROFILE, figures in $OUT"

step doctor "$LR" doctor --profile "$PROFILE" --json
"$VENV/bin/python" - "$OUT/doctor.out" <<'EOF' || failed=$((failed + 1))
import json, sys
report = json.load(open(sys.argv[1]))
for warning in report.get("cpu_fallbacks", []):
    print("gpu_smoke: silent CPU fallback:", warning, file=sys.stderr)
sys.exit(1 if report.get("cpu_fallbacks") else 0)
EOF
free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | head -n1)
step plan "$LR" plan --profile "$PROFILE" --vram "${free_mib}MB" --json
step index "$LR" index build local_rag/data/docs --index "$INDEX" --profile "$PROFILE"
step ask "$LR" ask "How does local-rag fuse the ranked lists?" --index "$INDEX" --profile "$PROFILE" --json
step bench "$LR" bench --profile "$PROFILE" --index "$INDEX" --repeats 1 --build-passages 0 --no-plot --out "$OUT/bench"

"$LR" serve --index "$INDEX" --profile "$PROFILE" --port "$PORT" > "$OUT/serve.log" 2>&1 &
server=$!
serve_check() {
  for _ in $(seq 1 120); do curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break; sleep 1; done
  curl -fsS "http://127.0.0.1:$PORT/v1/chat/completions" -H 'Content-Type: application/json' \
    -d '{"model": "local-rag", "messages": [{"role": "user", "content": "How are ranked lists fused?"}]}' \
  && curl -fsS "http://127.0.0.1:$PORT/v1/embeddings" -H 'Content-Type: application/json' \
    -d '{"model": "local-rag", "input": ["ranked list fusion"], "encoding_format": "float"}' | head -c 400
}
step serve serve_check
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null

{
  echo "# GPU smoke: $gpu, profile $PROFILE, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Command: \`bash scripts/gpu_smoke.sh\` (commit $(git rev-parse --short HEAD 2>/dev/null))."
  echo
  echo '```'
  cat "$OUT/steps.tsv"
  echo '```'
  echo
  echo "Where each stage ran (bench report, backends_used):"
  echo
  echo '```'
  "$VENV/bin/python" -c "import json,glob,sys; f=sorted(glob.glob('$OUT/bench/*.json')); print(json.dumps(json.load(open(f[-1])).get('backends_used'), indent=1) if f else 'no bench report')"
  echo '```'
} > "$OUT/README.md"
echo "gpu_smoke: $failed failed step(s); see $OUT/README.md"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# The GPU check: run on a lent GPU machine (the device tool) from the repository root, with .whl (the pure-Python and
# small wheels local-rag needs that the machine lacks, no faiss) and .gpu/minilm16 (all-MiniLM-L6-v2 in fp16, which
# fits the 64 MiB the tool carries) carried. The one test that builds a FAISS index is deselected (faiss is not carried). Writes $OUT (or ./gpu-out): doctor, plan, the GPU tests, encoder figures.
# Results: docs/benchmarks/gpu/. Locally (no GPU) the tests skip and the figures are the CPU's.
set -uo pipefail
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
if [ -d .whl ]; then python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1; fi
PY=python3
M=models/all-MiniLM-L6-v2
if [ -f .gpu/minilm16/model16.safetensors ] && { [ ! -f $M/model.safetensors ] || [ -f $M/.fp16-round-trip ]; }; then
  # restore fp32 from fp16 and (re)record it (its sha256 is not the PyPI file's); never over a real import
  mkdir -p $M && cp -r .gpu/minilm16/. $M/ && rm $M/model16.safetensors && touch $M/.fp16-round-trip
  $PY - <<'PYEOF'
from safetensors.torch import load_file, save_file
from local_rag.modelstore.manifest import record_folder
t = load_file(".gpu/minilm16/model16.safetensors")
save_file({k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in t.items()}, "models/all-MiniLM-L6-v2/model.safetensors")
record_folder("models/all-MiniLM-L6-v2", "models", role="embedder", description="all-MiniLM-L6-v2 (fp16 round trip, GPU check)")
PYEOF
fi
step() { echo "=== $(date -u +%T) $*"; }
step machine; { nvidia-smi -L; nproc; $PY -c 'import torch, sentence_transformers as st, transformers, onnxruntime as o; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), st.__version__, transformers.__version__, o.__version__, o.get_available_providers())'; } 2>&1 | tee "$OUT/machine.txt"
step doctor; $PY -m local_rag doctor --profile cpu-test > "$OUT/doctor.txt" 2>&1; cat "$OUT/doctor.txt"
step plan; $PY -m local_rag plan --profile gpu-24gb --profile cpu > "$OUT/plan.md" 2>&1; grep -a "^\*\*\|rror" "$OUT/plan.md"
step tests; timeout 300 $PY -m pytest -p no:cacheprovider -q -rfEs -W ignore::DeprecationWarning tests/test_gpu.py tests/test_train.py tests/test_rerank.py --deselect tests/test_train.py::test_build_examples_excludes_gold_same_document_and_judged > "$OUT/tests.txt" 2>&1; grep -a "^FAILED\|^SKIPPED\|^ERROR\|^E  \|passed\|failed" "$OUT/tests.txt" | head -30
step bench; $PY - <<'PYEOF' 2>&1 | grep -v Warning
import json, os, torch
from sentence_transformers import CrossEncoder
from local_rag.bench.encoders import encoder_bench
CrossEncoder("models/all-MiniLM-L6-v2", num_labels=1, device="cpu").save("/tmp/ce-minilm")
devices = [d for d in os.environ.get("DEVICES", "cuda,cpu").split(",") if d != "cuda" or torch.cuda.is_available()]
figures = encoder_bench("models", "all-MiniLM-L6-v2", "/tmp/ce-minilm", devices,
                        n_passages=int(os.environ.get("N_PASSAGES", "2048")), n_queries=int(os.environ.get("N_QUERIES", "30")))
figures["torch_threads"] = torch.get_num_threads()
figures["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
open(os.path.join(os.environ["OUT"], "encoders.json"), "w").write(json.dumps(figures, indent=2) + "\n")
for d, row in figures["devices"].items():
    print(d, "embed p/s", row["embedder"]["passages_per_s_batch64"], {k: {n: v["p50_s"] for n, v in row[k].items()} for k in row if "encoder_" in k})
PYEOF
step done

#!/usr/bin/env bash
# Prepare what scripts/gpu_check.sh carries to a GPU machine that cannot download (the device tool: 64 MiB at most):
# .whl = the wheels local-rag needs that its image lacks (cp312, no faiss: 19 MB would not fit beside the model), and
# .gpu/minilm16 = all-MiniLM-L6-v2 with fp16 weights (44 MiB; gpu_check.sh restores fp32 there). Both are ignored
# through .git/info/exclude. Then: run `bash scripts/gpu_check.sh` there, carrying .whl and .gpu.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >> .git/info/exclude
plat=""; for p in manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014 manylinux1 manylinux_2_24 manylinux_2_31 manylinux_2_34; do plat="$plat --platform ${p}_x86_64"; done
names="annotated-types bm25s datasets dill gguf multiprocess platformdirs prompt_toolkit pydantic pydantic_core pydantic-settings PyStemmer python-dotenv typing-inspection wcwidth"
pins=$($PY -m pip list --format=freeze 2>/dev/null | grep -i -E "^($(echo $names | tr ' ' '|' | sed 's/[-_]/[-_]/g'))==" )
$PY -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $plat --platform any -d .whl $pins
$PY - <<'PYEOF'
from safetensors.torch import load_file, save_file
from local_rag.bench.shape_encoder import copy_small_files
copy_small_files("models/all-MiniLM-L6-v2", ".gpu/minilm16")  # config, tokenizer, pooling: all but the weights
t = load_file("models/all-MiniLM-L6-v2/model.safetensors")
save_file({k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in t.items()}, ".gpu/minilm16/model16.safetensors")
PYEOF
du -sh .whl .gpu

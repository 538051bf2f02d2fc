#!/usr/bin/env bash
# own standalone rewrites (Qwen2.5-Coder-1.5B, profile cpu-qwen) of every test-split task, cached (resumable)
cd /work/wt/i23
export PYTHONPATH=$PWD LOCAL_RAG_MODELS_DIR=/work/main/models LOCAL_RAG_INDEXES_DIR=/work/main/indexes
date; /usr/bin/time -v /work/main/.venv/bin/local-rag train rewrites --profile cpu-qwen --split test --llm-cache runs/i23/rewrites.jsonl 2>&1 | grep -v "^\s*$" | tail -40; date

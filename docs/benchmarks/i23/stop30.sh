#!/usr/bin/env bash
# stop the reranker training at its step-30 checkpoint and install that (the CPU was shared by ~10 jobs: 38 s a step)
cd /work/wt/i23
export PYTHONPATH=$PWD LOCAL_RAG_MODELS_DIR=/work/main/models LOCAL_RAG_INDEXES_DIR=/work/main/indexes
W=/work/main/models/.i23-ce-bce.training
until [ -f $W/checkpoint-30/trainer_state.json ]; do sleep 10; done
sleep 20  # let the checkpoint finish writing
kill 29671; sleep 3
date; /usr/bin/time -f "wall %e s, peak RSS %M KB" /work/main/.venv/bin/local-rag train reranker --data runs/i23/train-data.jsonl --name i23-ce-bce --loss bce --negatives 3 --max-length 192 --batch-size 16 --lr 7e-5 --max-steps 30 --save-steps 30 2>&1 | tr '\r' '\n' | grep -a "trained\|rror\|wall\|loss"

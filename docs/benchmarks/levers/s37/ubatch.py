"""Issue 26, session 37: prefill speed of Qwen2.5-Coder-1.5B Q4_K_M against llama.cpp's batch sizes and flash
attention on the 2-core Zen 4 VM (580 new prompt tokens from an empty cache, 2 threads, median of 3 after a warm-up).

Run alone: flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/levers/s37/ubatch.py   (~2 min; output: ubatch.txt)
"""

import glob
import statistics
import time

from local_rag.bench.llm_speed import WORDS
from local_rag.llm.native import import_llama_cpp

llama_cpp = import_llama_cpp()
GGUF = glob.glob("models/qwen2.5-coder-1.5b-instruct-q4_k_m/*.gguf")[0]
TEXT = " ".join(WORDS[i % len(WORDS)] for i in range(700))

for n_batch, n_ubatch, flash_attn in [(512, 512, True), (512, 256, True), (512, 128, True), (1024, 1024, True),
                                      (512, 512, False), (256, 256, True)]:
    llm = llama_cpp.Llama(GGUF, n_ctx=4096, n_batch=n_batch, n_ubatch=n_ubatch, n_threads=2, n_threads_batch=2,
                          flash_attn=flash_attn, verbose=False)
    tokens = llm.tokenize(TEXT.encode())[:580]
    llm.reset()
    llm.eval(tokens[:64])  # warm-up
    rates = []
    for _ in range(3):
        llm.reset()
        started = time.perf_counter()
        llm.eval(tokens)
        rates.append(len(tokens) / (time.perf_counter() - started))
    print(f"n_batch {n_batch} n_ubatch {n_ubatch} flash_attn {flash_attn}: prefill {statistics.median(rates):.1f} "
          f"tok/s ({', '.join(f'{r:.1f}' for r in rates)})", flush=True)
    del llm

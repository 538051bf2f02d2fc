"""Prefill and decode speed of one GGUF through local-rag's own llama.cpp backend (`LlamaCppLLM`: the GPU offload it
picks, the sampling loop every stage uses), at the prompt sizes a turn sends.

With a random-weight file from `local_rag.bench.shape_gguf` this measures a model that is not at hand: speed depends
on shapes and types, not on the weights. Greedy decoding of random weights could stop at an end-of-generation token;
the rows say how many tokens were decoded, and the loop cut is off so a repeated token does not end the reply.

Example:
    >>> rows = llm_speed("/tmp/q7.gguf", prompt_tokens=[659, 1343], new_tokens=128)  # doctest: +SKIP
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from local_rag.device import nvml_gpus
from local_rag.errors import BadInputError
from local_rag.llm.base import Message
from local_rag.settings import LLMConfig

WORDS = ("the passage says that retrieval ranks each chunk of the collection by its score against the question and "
         "the answer cites the sources it used while the conversation goes on over several turns").split()


def filler(llm: Any, n_tokens: int) -> list[Message]:
    """One user message whose rendered prompt (chat template included) has about ``n_tokens`` tokens."""
    base = len(llm._llama.tokenize(llm.render([{"role": "user", "content": ""}]).encode(), add_bos=False, special=True))
    words: list[str] = []
    while base + llm.count_tokens(" ".join(words)) < n_tokens:
        step = max(1, (n_tokens - base - llm.count_tokens(" ".join(words))) // 2)
        words += [WORDS[(len(words) + i) % len(WORDS)] for i in range(step)]
    return [{"role": "user", "content": " ".join(words)}]


def llm_speed(path: str | Path, prompt_tokens: list[int], new_tokens: int, repeats: int = 2, n_gpu_layers: int = -1,
              n_ctx: int = 4096, n_threads: int = 0) -> dict[str, Any]:
    """Load ``path`` once, then for each prompt size run ``repeats`` cold completions (no prefix reuse); the first
    completion of all is a warm-up and not counted. Returns the machine, the offload chosen and one row per size."""
    from local_rag.llm.llamacpp import LlamaCppLLM

    if not prompt_tokens or min(prompt_tokens) < 16 or max(prompt_tokens) + new_tokens > n_ctx:
        raise BadInputError(f"prompt sizes {prompt_tokens}: each at least 16 tokens, and with the {new_tokens} new "
                            f"tokens within n_ctx {n_ctx}")
    config = LLMConfig(model=str(path), n_ctx=n_ctx, n_gpu_layers=n_gpu_layers, n_threads=n_threads,
                       n_threads_batch=n_threads, prefix_cache=0, loop_repeats=0, max_tokens=new_tokens)
    started = time.perf_counter()
    llm = LlamaCppLLM(config, models_dir=Path(path).parent)
    load_s = time.perf_counter() - started
    rows = []
    warm = False
    for n in prompt_tokens:
        messages = filler(llm, n)
        calls = []
        for _ in range(repeats + (0 if warm else 1)):
            llm.forget_prompts()
            calls.append(llm.complete(messages, stage="speed", max_tokens=new_tokens).call)
        calls = calls[0 if warm else 1:]
        warm = True
        rows.append({
            "prompt_tokens": calls[0].prompt_tokens,
            "completion_tokens": [c.completion_tokens for c in calls],
            "ttft_s": round(statistics.median(c.prefill_s for c in calls), 4),
            "prefill_tok_s": round(statistics.median(c.prefill_tokens_per_s for c in calls), 1),
            "decode_tok_s": round(statistics.median(c.decode_tokens_per_s for c in calls), 1),
            "total_s": round(statistics.median(c.total_s for c in calls), 3),
        })
    gpus = nvml_gpus()
    return {"model": str(path), "model_bytes": Path(path).stat().st_size, "name": llm.model_name,
            "n_gpu_layers": llm.n_gpu_layers, "threads": [llm.n_threads, llm.n_threads_batch],
            "gpu": gpus[0]["name"] if gpus else None, "load_s": round(load_s, 2), "new_tokens": new_tokens,
            "repeats": repeats, "rows": rows}

"""Does the AMX build change what the model computes? Mean negative log-likelihood per token of the same texts (the
first 8 passages of each MTRAG pool corpus, 256-511 tokens each, read from ../shared/mtrag at run time), scored by the
llama.cpp build installed in .venv: prompts of this length are prefilled by the AMX kernels where the build has them.
Run it once per build (docs/benchmarks/levers/amx/README in benchmarks.md):

    .venv/bin/python docs/benchmarks/levers/amx/nll.py --out docs/benchmarks/levers/amx/nll-<build>.json
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from llama_cpp import Llama, llama_print_system_info

ROOT = Path(__file__).resolve().parents[4]
POOL = ROOT.parent / "shared" / "mtrag" / "corpora" / "pool"
MODELS = {
    "qwen2.5-coder-1.5b": ROOT / "models/qwen2.5-coder-1.5b-instruct-q4_k_m/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    "qwen2.5-coder-0.5b": ROOT / "models/qwen2.5-coder-0.5b-instruct-q4_k_m/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
}


def passages(per_corpus: int = 8) -> list[str]:
    out: list[str] = []
    for corpus in ("clapnq", "cloud", "fiqa", "govt"):
        kept = 0
        with open(POOL / f"{corpus}.jsonl", encoding="utf-8") as fh:
            for line in fh:
                text = json.loads(line)["text"]
                if len(text.split()) >= 200:
                    out.append(text)
                    kept += 1
                    if kept == per_corpus:
                        break
    return out


def mean_nll(llm: Llama, text: str) -> tuple[float, int]:
    tokens = llm.tokenize(text.encode("utf-8"))[:511]
    llm.reset()
    llm.eval(tokens)
    logits = np.asarray(llm.scores[: len(tokens) - 1], dtype=np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    nll = -logp[np.arange(len(tokens) - 1), tokens[1:]]
    return float(nll.sum()), len(tokens) - 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    texts = passages()
    report: dict[str, object] = {"build": llama_print_system_info().decode().strip(), "texts": len(texts)}
    for name, path in MODELS.items():
        llm = Llama(str(path), n_ctx=1024, n_batch=512, n_threads=2, logits_all=True, verbose=False)
        total, count = 0.0, 0
        for text in texts:
            s, n = mean_nll(llm, text)
            total, count = total + s, count + n
        report[name] = {"tokens": count, "mean_nll": round(total / count, 5), "perplexity": round(math.exp(total / count), 4)}
        print(name, report[name], flush=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

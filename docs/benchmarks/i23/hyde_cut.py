"""A copy of an LLM query cache whose HyDE passages are changed, to measure variants without an LLM call.

- cut to their first N tokens (the generator's tokenizer): decoding is greedy (temperature 0), so the first N tokens
  of a 96-token HyDE passage are what ``max_tokens: N`` would have written;
- ``q2d``: the turn's own rewrite put before the passage (query2doc: one query of question + pseudo-answer, instead of
  two lists fused).

Other entries are copied unchanged; a changed entry loses its prompt fingerprint (session 33), so the cache serves
it whatever the bundled prompt.

    .venv/bin/python docs/benchmarks/i23/hyde_cut.py runs/i23/rewrites.jsonl 48 runs/i23/hyde48.jsonl
    .venv/bin/python docs/benchmarks/i23/hyde_cut.py runs/i23/rewrites.jsonl 96 runs/i23/hyde-q2d.jsonl q2d
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from llama_cpp import Llama

from local_rag.modelstore.gguf_check import resolve_gguf


def main(src: str, n: int, dest: str, q2d: bool = False) -> None:
    llm = Llama(model_path=str(resolve_gguf("qwen2.5-coder-1.5b-instruct-q4_k_m", "models")), vocab_only=True, verbose=False)
    records = [json.loads(line) for line in Path(src).read_text(encoding="utf-8").splitlines() if line.strip()]
    rewrites = {r["key"].replace("|rewrite|", "|hyde|"): r["queries"]["rewrite"][0] for r in records if "rewrite" in r["queries"]}
    out = []
    for record in records:
        if "hyde" in record["queries"]:
            texts = []
            for text in record["queries"]["hyde"]:
                tokens = llm.tokenize(text.encode("utf-8"), add_bos=False)
                text = llm.detokenize(tokens[:n]).decode("utf-8", errors="ignore").strip()
                texts.append(f"{rewrites[record['key']]} {text}" if q2d and record["key"] in rewrites else text)
            record["queries"]["hyde"] = texts
            record.pop("prompt", None)  # a changed passage is no prompt's output: served as it is (LLMQueries)
        out.append(json.dumps(record, ensure_ascii=False))
    Path(dest).write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:] == ["q2d"])

"""Issue 24, session 27: what the IDK gate adds to a turn that it lets through. The default generator (profile cpu,
Qwen2.5-Coder-1.5B) answers the same ~1,500-token prompt from a cold KV cache, without and with the gate's scoring
first (3 rounds, interleaved); the difference of the turn's LLM time is the gate's cost. ``--phases``: each round's
scoring time, then the answer's own prefill and decode (latency_phases.txt).

    flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/decider-pidk/latency.py > docs/benchmarks/decider-pidk/latency.txt
    flock /tmp/heavy.lock .venv/bin/python docs/benchmarks/decider-pidk/latency.py --phases --rounds 2 > docs/benchmarks/decider-pidk/latency_phases.txt
"""

from __future__ import annotations

import argparse
import statistics
import time

from local_rag.llm import load_llm
from local_rag.llm.generate import Generator
from local_rag.records import Conversation, Hit, Turn
from local_rag.settings import load_settings


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--phases", action="store_true")
    args = ap.parse_args()
    settings = load_settings("cpu")
    llm = load_llm(settings.llm, settings.models_dir)
    generator = Generator(llm, settings.generate)
    text = " ".join(f"Sentence {i} of the passage says that the tower was painted in year {1900 + i}." for i in range(40))
    hits = [Hit(f"p{k}", 1.0, k + 1, title=f"Tower {k}", text=text) for k in range(4)]
    messages = generator.messages(Conversation([Turn("user", "When was the tower painted for the third time?")]), hits)
    times: dict[str, list[float]] = {"plain": [], "gate": []}
    for _ in range(args.rounds):
        for mode in ("gate", "plain") if args.phases else ("plain", "gate"):
            llm.forget_prompts()
            started = time.perf_counter()
            if mode == "gate":
                llm.score(messages, settings.generate.idk_answer, stage="idk-gate", n_tokens=4)
            scored = time.perf_counter()
            done = llm.run(messages, stage="generate", max_tokens=32)
            times[mode].append(time.perf_counter() - started)
            if args.phases:
                c = done.call
                print(f"{mode}: score {scored - started:.2f} run {time.perf_counter() - scored:.2f} prefill {c.prefill_s:.2f} "
                      f"decode {c.decode_s:.2f} {c.completion_tokens} {c.cached_tokens}")
    if args.phases:
        return
    print(f"prompt {done.call.prompt_tokens} tokens, reply {done.call.completion_tokens} tokens; {settings.llm.model}")
    for mode, values in times.items():
        print(f"{mode}: median {statistics.median(values):.2f} s ({', '.join(f'{v:.2f}' for v in values)})")
    print(f"the gate adds {statistics.median(times['gate']) - statistics.median(times['plain']):.2f} s (median)")


if __name__ == "__main__":
    main()

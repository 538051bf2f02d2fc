"""GRPO fine-tuning of a small policy for the agentic (ChatR1) mode on MTRAG conversations, search tool in the loop.

Needs the `train` extra (TRL). The policy is a transformers folder or a llama-architecture GGUF (dequantized by
transformers). Rollouts search the pool index ``<index-prefix><domain>`` with the settings' hybrid retriever; the
rewards are ChatR1's (answer F1 + 0.2 x intent, or retrieval with ``--second-reward retrieval``). The checkpoint is
saved in transformers format; convert it for llama.cpp with llama.cpp's ``convert_hf_to_gguf.py`` (docs/agentic.md).

Toy run (CPU, minutes):
    flock /tmp/cpu-heavy.lock .venv/bin/python scripts/train_agentic.py --model models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf \\
        --domains govt --limit 4 --steps 2 --out runs/agent-grpo-toy
GPU user (a real run): --model <HF Qwen2.5-3B-Instruct folder> --domains clapnq,cloud,fiqa,govt --limit 0 --steps 500 \\
        --num-generations 8 --prompts-per-step 4 --step-tokens 256 --learning-rate 1e-6
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from local_rag.agent.data import load_agent_tasks
from local_rag.agent.train import TrainConfig, train_on_pool
from local_rag.mtrag import default_mtrag_dir
from local_rag.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="transformers folder or .gguf file")
    parser.add_argument("--out", required=True)
    parser.add_argument("--profile", default="cpu-test")
    parser.add_argument("--domains", default="govt")
    parser.add_argument("--index-prefix", default="mtrag-")
    parser.add_argument("--mtrag-dir", default=str(default_mtrag_dir()))
    parser.add_argument("--limit", type=int, default=4, help="conversations (seeded subset); 0 = all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--num-generations", type=int, default=2)
    parser.add_argument("--prompts-per-step", type=int, default=1)
    parser.add_argument("--step-tokens", type=int, default=48)
    parser.add_argument("--learning-rate", type=float, default=1e-6)
    parser.add_argument("--second-reward", choices=["intent", "retrieval"], default="intent")
    parser.add_argument("--max-searches", type=int, help="agent.max_searches during rollouts")
    args = parser.parse_args()

    domains = args.domains.split(",")
    overrides: dict = {"index": f"{args.index_prefix}{domains[0]}"}
    if args.max_searches is not None:
        overrides["agent"] = {"max_searches": args.max_searches}
    settings = load_settings(args.profile, overrides=overrides)
    tasks = load_agent_tasks(args.mtrag_dir, domains, args.limit or None, args.seed)
    config = TrainConfig(model=args.model, out=args.out, steps=args.steps, num_generations=args.num_generations,
                         prompts_per_step=args.prompts_per_step, step_tokens=args.step_tokens,
                         learning_rate=args.learning_rate, second_reward=args.second_reward, seed=args.seed,
                         extra={"gradient_checkpointing": False})
    result = train_on_pool(config, settings, tasks, domains, args.index_prefix)
    finite = bool(result.losses) and all(math.isfinite(v) for v in result.losses + result.rewards)
    print(json.dumps({"out": str(result.out), "losses": result.losses, "rewards": result.rewards, "finite": finite}))
    if not finite:
        sys.exit(1)


if __name__ == "__main__":
    main()

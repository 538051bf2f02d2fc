"""GRPO fine-tuning of a transformers policy for the agentic mode, with the search tool in the loop (TRL).

How the search gets into TRL's loop: `trl.GRPOTrainer` takes a ``rollout_func(prompts, trainer) -> dict`` that
replaces its one-shot generation. `SearchRollout` is that function: for each prompt it runs the same `AgentLoop` as
inference, with the policy generating each step (``model.generate`` with ``stop_strings=["</search>", "</answer>"]``)
and the real hybrid retriever answering each ``<search>``. It returns, per rollout, the prompt token ids, the
completion token ids (every generated step AND the system's ``<information>`` / correction / chat-template tokens in
between, in order) and ``env_mask`` (1 for generated tokens, 0 for the system's), so the GRPO loss is taken over the
policy's own tokens only — Search-R1's "information mask". The trace of each rollout is passed to the reward
functions (``trace``), which score it with `local_rag.agent.rewards` against the dataset's labels.

(TRL's own ``tools=`` / ``environment_factory=`` drive the model's native tool-calling chat template: SmolLM2's and
most small instruct models' templates have none, and ChatR1 uses the ``<search>`` tag protocol, so a rollout
function is the fitting hook.)

Example:
    >>> result = train_policy(TrainConfig(model="policy.gguf", out="runs/agent-grpo"), settings, tasks)  # doctest: +SKIP
    >>> result.losses, result.rewards  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.agent.data import AgentTask
from local_rag.agent.rewards import (
    answer_reward,
    intent_reward,
    retrieval_reward,
    trace_answer,
    trace_queries,
    trace_reads,
)
from local_rag.agent.rollout import AgentLoop, Search, TokenCounter, initial_messages, load_agent_prompt
from local_rag.llm.base import Message
from local_rag.settings import Settings

log = logging.getLogger("local_rag.agent.train")


@dataclass
class TrainConfig:
    """The GRPO run. ``model``: a transformers folder, or a ``.gguf`` file (llama-architecture GGUFs load through
    transformers' GGUF reader, dequantized to float32)."""

    model: str
    out: str
    steps: int = 4
    num_generations: int = 2
    prompts_per_step: int = 1
    learning_rate: float = 1e-6
    step_tokens: int = 64  # new tokens per agent step (the inference default, agent.step_tokens, is larger)
    temperature: float = 1.0
    beta: float = 0.0  # KL to a reference model; 0 = none (TRL's default, no second model in memory)
    intent_weight: float = 0.2
    answer_weight: float = 1.0
    second_reward: str = "intent"  # intent | retrieval
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)  # more GRPOConfig fields


@dataclass
class TrainResult:
    out: Path
    losses: list[float]
    rewards: list[float]
    log_history: list[dict[str, Any]]


def load_policy(model: str) -> tuple[Any, Any]:
    """The transformers model and tokenizer of a folder or a GGUF file."""
    transformers = require("transformers", "agent training")
    torch = require("torch", "agent training")
    path = Path(model)
    kwargs: dict[str, Any] = {"dtype": torch.float32}
    if path.suffix == ".gguf":
        require("gguf", "loading a GGUF policy into transformers")
        folder, kwargs["gguf_file"] = str(path.parent), path.name
    else:
        folder = str(path)
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, **{k: v for k, v in kwargs.items() if k == "gguf_file"})
    policy = transformers.AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    if "gguf_file" in kwargs:
        # transformers dequantizes GGUF tensors to float32 but still marks the model as GGUF-quantized, which the
        # Trainer refuses to fine-tune; the weights are plain floats, so drop the marks (a saved checkpoint is a
        # normal float model)
        policy.hf_quantizer = None
        policy.is_quantized = False
        if hasattr(policy.config, "quantization_config"):
            del policy.config.quantization_config
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return policy, tokenizer


class SearchRollout:
    """TRL's ``rollout_func``: one `AgentLoop` rollout per prompt, the policy generating, the retriever searching.

    Args:
        settings: ``agent`` budgets and the ``generate`` IDK sentence.
        search: ``query -> hits`` (e.g. `AgenticPipeline.search`).
        tokenizer: the policy's tokenizer (its chat template renders the messages).
        step_tokens: new tokens per step.
        temperature: sampling temperature (GRPO needs varied rollouts).
    """

    def __init__(self, settings: Settings, search: Search, tokenizer: Any, step_tokens: int = 64,
                 temperature: float = 1.0) -> None:
        self.settings = settings
        self.search = search
        self.tokenizer = tokenizer
        self.step_tokens = step_tokens
        self.temperature = temperature
        self.prompt = load_agent_prompt(settings.agent.prompt)

    def render(self, messages: list[Message]) -> str:
        return self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def one(self, model: Any, messages: list[Message]) -> dict[str, Any]:
        """One rollout: prompt ids, completion ids, env mask, trace."""
        torch = require("torch")
        tok = self.tokenizer
        prompt_text = self.render(messages)
        prompt_ids = tok(prompt_text, add_special_tokens=False)["input_ids"]
        state: dict[str, Any] = {"ids": [], "mask": [], "text": prompt_text}

        def generate(msgs: list[Message], stops: list[str]) -> str:
            rendered = self.render(msgs)
            if len(state["ids"]):  # the system's part since the last step: template tokens, information, corrections
                if not rendered.startswith(state["text"]):
                    log.warning("the chat template does not preserve the rollout prefix; token alignment is approximate")
                    common = os.path.commonprefix([rendered, state["text"]])
                    env = rendered[len(common):]
                else:
                    env = rendered[len(state["text"]):]
                env_ids = tok(env, add_special_tokens=False)["input_ids"]
                state["ids"] += env_ids
                state["mask"] += [0] * len(env_ids)
            context = torch.tensor([prompt_ids + state["ids"]], device=model.device)
            with torch.no_grad():
                out = model.generate(
                    context, attention_mask=torch.ones_like(context), max_new_tokens=self.step_tokens,
                    do_sample=True, temperature=self.temperature, top_p=1.0, top_k=0, stop_strings=stops,
                    tokenizer=tok, pad_token_id=tok.pad_token_id,
                )
            new = out[0, context.shape[1]:].tolist()
            state["ids"] += new
            state["mask"] += [1] * len(new)
            state["text"] = rendered + tok.decode(new, skip_special_tokens=False)
            return tok.decode(new, skip_special_tokens=True)

        loop = AgentLoop(self.settings.agent, generate, self.search, self.prompt, self.settings.generate.idk_answer,
                         lambda text: len(tok(text, add_special_tokens=False)["input_ids"]))
        rollout = loop.run(list(messages))
        if not state["ids"]:  # nothing generated at all (cannot happen with a working model): keep TRL's shapes valid
            state["ids"], state["mask"] = [tok.eos_token_id], [1]
        return {"prompt_ids": prompt_ids, "completion_ids": state["ids"], "env_mask": state["mask"],
                "trace": rollout.trace}

    def __call__(self, prompts: list[list[Message]], trainer: Any) -> dict[str, Any]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        was_training = model.training
        model.eval()
        try:
            rollouts = [self.one(model, list(p)) for p in prompts]
        finally:
            model.train(was_training)
        return {
            "prompt_ids": [r["prompt_ids"] for r in rollouts],
            "completion_ids": [r["completion_ids"] for r in rollouts],
            "logprobs": None,  # on-policy transformers generation: TRL recomputes them
            "env_mask": [r["env_mask"] for r in rollouts],
            "trace": [r["trace"] for r in rollouts],
        }


def reward_functions(second: str = "intent") -> list[Callable[..., list[float]]]:
    """TRL reward functions over the rollouts' traces: answer F1, and the intent (or retrieval) reward."""

    def answer_f1(completions: list[Any], trace: list[Any], reference: list[str], **_: Any) -> list[float]:
        return [answer_reward(trace_answer(t), r) for t, r in zip(trace, reference, strict=True)]

    def intent(completions: list[Any], trace: list[Any], gold_rewrite: list[str], **_: Any) -> list[float]:
        return [intent_reward(trace_queries(t), g) for t, g in zip(trace, gold_rewrite, strict=True)]

    def retrieval(completions: list[Any], trace: list[Any], gold_ids: list[list[str]], **_: Any) -> list[float]:
        return [retrieval_reward(trace_reads(t), g) for t, g in zip(trace, gold_ids, strict=True)]

    if second not in ("intent", "retrieval"):
        from local_rag.errors import SettingsError

        raise SettingsError(f"second reward {second!r}: use intent or retrieval")
    return [answer_f1, intent if second == "intent" else retrieval]


def build_dataset(tasks: Sequence[AgentTask], settings: Settings, tokenizer: Any, n_ctx: int = 2048) -> Any:
    """A `datasets.Dataset` of conversational prompts (the agent's first messages) with the reward labels."""
    datasets = require("datasets", "agent training")
    prompt = load_agent_prompt(settings.agent.prompt)
    counter = TokenCounter(lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"]))
    rows = [{
        "prompt": initial_messages(t.conversation, prompt, settings.agent, settings.generate, counter, n_ctx),
        "reference": t.reference, "gold_rewrite": t.gold_rewrite, "gold_ids": sorted(t.gold_ids), "task_id": t.task_id,
    } for t in tasks]
    return datasets.Dataset.from_list(rows)


def train_policy(config: TrainConfig, settings: Settings, tasks: Sequence[AgentTask], search: Search) -> TrainResult:
    """Run GRPO for ``config.steps`` steps, save the policy and tokenizer to ``config.out``, return the logged losses
    and rewards. Uses the GPU when torch sees one, else the CPU."""
    torch = require("torch", "agent training")
    trl = require("trl", "agent training (pip install 'local-rag[train]')")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    model, tokenizer = load_policy(config.model)
    dataset = build_dataset(tasks, settings, tokenizer)
    batch = config.num_generations * config.prompts_per_step
    args = trl.GRPOConfig(
        output_dir=str(config.out), max_steps=config.steps, per_device_train_batch_size=batch,
        num_generations=config.num_generations, learning_rate=config.learning_rate, beta=config.beta,
        temperature=config.temperature, reward_weights=[config.answer_weight, config.intent_weight],
        logging_steps=1, save_strategy="no", report_to="none", seed=config.seed, use_cpu=not torch.cuda.is_available(),
        bf16=False, fp16=False, dataloader_num_workers=0, disable_tqdm=True, **config.extra,
    )
    trainer = trl.GRPOTrainer(
        model=model, reward_funcs=reward_functions(config.second_reward), args=args, train_dataset=dataset,
        processing_class=tokenizer,
        rollout_func=SearchRollout(settings, search, tokenizer, config.step_tokens, config.temperature),
    )
    trainer.train()
    out = Path(config.out)
    trainer.save_model(str(out))
    tokenizer.save_pretrained(str(out))
    history = list(trainer.state.log_history)
    losses = [float(h["loss"]) for h in history if "loss" in h]
    rewards = [float(h["reward"]) for h in history if "reward" in h]
    if not losses or not all(math.isfinite(v) for v in losses + rewards):
        log.warning("training logged non-finite or no losses: %s", losses)
    return TrainResult(out, losses, rewards, history)


def train_on_pool(config: TrainConfig, settings: Settings, tasks: Sequence[AgentTask], domains: Sequence[str],
                  index_prefix: str = "mtrag-") -> TrainResult:
    """`train_policy` with rollouts searching the pool index ``<index_prefix><domain>`` of each domain (several
    domains: all of them, the best ranks kept); the saved checkpoint is loaded once to check it."""
    from local_rag.agent.pipeline import AgenticPipeline
    from local_rag.records import Hit

    searchers = {d: AgenticPipeline(settings.model_copy(update={"index": f"{index_prefix}{d}"})) for d in domains}

    def search(query: str) -> list[Hit]:
        hits = [h for d in domains for h in searchers[d].search(query)]
        return hits if len(domains) == 1 else sorted(hits, key=lambda h: h.rank)[: settings.agent.top_k]

    result = train_policy(config, settings, tasks, search)
    load_policy(str(result.out))  # the checkpoint loads
    return result

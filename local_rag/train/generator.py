"""Fine-tuning the generator on the MTRAG train split's reference answers (LoRA), and back to a llama.cpp GGUF.

An example is the generator's own prompt at inference (`Generator.messages`: the conversation, and the evidence the
pipeline would give it: the task's gold passages mixed with the retriever's other hits in a seeded order, compressed
to the evidence budget against the pipeline's rewrite) and, as the reply to learn, the reference answer with ``[n]``
citations added by word overlap (`local_rag.llm.attribute`, as the reference answers carry none and the product
cites), or the configured "I don't know" sentence for an unanswerable task.

Training is TRL's `SFTTrainer` with a PEFT LoRA adapter on the attention and MLP projections, the loss on the reply
only (prompt-completion examples); the base is the GGUF itself (transformers dequantizes it), the adapter is merged
and saved as a transformers folder, converted with llama.cpp's ``convert_hf_to_gguf.py`` and quantized with
llama.cpp's own quantizer through llama-cpp-python (`to_gguf`).

Example:
    >>> examples = list(build_examples(tasks, settings, pipelines))  # doctest: +SKIP
    >>> folder = train_generator(GeneratorTraining(model="base.gguf", out="runs/gen-sft"), examples)  # doctest: +SKIP
    >>> to_gguf(folder, "models/tuned/tuned-q4_k_m.gguf", converter="llama.cpp/convert_hf_to_gguf.py")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
import random
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.errors import BadInputError
from local_rag.llm.base import Message
from local_rag.records import Hit
from local_rag.settings import Settings
from local_rag.train.store import check_run

log = logging.getLogger("local_rag.train.generator")


@dataclass
class GeneratorExample:
    """One supervised example: the generator's prompt and the reply to learn."""

    task_id: str
    messages: list[Message]
    target: str
    kind: str  # answer | decline
    gold_in_evidence: int = 0  # gold passages left in the evidence after compression
    support: float = 0.0  # share of the target's content words found in the evidence (1.0 for a decline)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> GeneratorExample:
        return cls(**json.loads(line))


def mix_evidence(gold: list[Hit], retrieved: list[Hit], n: int, seed: str) -> list[Hit]:
    """The gold passages (at most ``n``) and the retriever's other hits up to ``n`` passages, in a seeded order, so
    that the gold passage is not always first (at inference it is anywhere, or absent).

    Example:
        >>> g = [Hit(passage_id="g", score=1.0, rank=1, text="gold")]
        >>> r = [Hit(passage_id=p, score=1.0, rank=i, text=p) for i, p in enumerate(["g", "a", "b"], 1)]
        >>> sorted(h.passage_id for h in mix_evidence(g, r, 2, "t1"))
        ['a', 'g']
    """
    chosen = gold[:n]
    ids = {h.passage_id for h in chosen}
    chosen += [h for h in retrieved if h.passage_id not in ids][: n - len(chosen)]
    random.Random(seed).shuffle(chosen)
    return [Hit(passage_id=h.passage_id, score=h.score, rank=i, title=h.title, text=h.text, url=h.url)
            for i, h in enumerate(chosen, start=1)]


def build_examples(tasks: Iterable[dict[str, Any]], settings: Settings, pipeline_of: Callable[[dict[str, Any]], Any],
                   seed: int = 0) -> Iterator[GeneratorExample]:
    """One `GeneratorExample` per task with a reference answer (conversational turns are skipped).

    ``pipeline_of(task)``: the `Pipeline` of the task's domain; its rewrite (``queries``), retriever, compressor and
    generator build the prompt exactly as at inference.
    """
    from local_rag.evaluation.generation.official import answerability, targets_of
    from local_rag.evaluation.generation.runner import context_hits
    from local_rag.llm.attribute import attribute, content_words
    from local_rag.llm.pipeline import question_of
    from local_rag.mtrag import parse_conversation

    cfg = settings.generate
    for task in tasks:
        kind = answerability(task)
        task_id = str(task.get("task_id") or "")
        if kind not in {"ANSWERABLE", "PARTIAL", "UNANSWERABLE"}:
            continue
        pipeline = pipeline_of(task)
        conversation = parse_conversation(task.get("input"), where=f"task {task_id}")
        conversation.id = task_id
        queries = pipeline.queries(conversation)
        retrieved = pipeline.retriever.search(queries, top_k=max(cfg.passages * 2, 10))
        gold = context_hits(task) if kind != "UNANSWERABLE" else []
        passages = mix_evidence(gold, retrieved, cfg.passages, f"{seed}:{task_id}")
        evidence = passages
        if settings.evidence.compress:
            evidence = pipeline.compressor.select(question_of(queries), passages, pipeline.llm.count_tokens).hits
        messages = pipeline.generator.messages(conversation, evidence)
        gold_ids = {h.passage_id for h in gold}
        kept = sum(1 for h in evidence if h.passage_id in gold_ids)
        if kind == "UNANSWERABLE":
            yield GeneratorExample(task_id, messages, cfg.idk_answer, "decline", 0, 1.0)
            continue
        reference = next(iter(targets_of(task)), "").strip()
        if not reference:
            continue
        texts = [f"{h.title} {h.text}" for h in evidence]
        cited, _ = attribute(reference, texts)
        words, seen = content_words(reference), content_words(" ".join(texts))
        support = round(len(words & seen) / len(words), 3) if words else 0.0
        yield GeneratorExample(task_id, messages, cited, "answer", kept, support)


def cited_only(example: GeneratorExample) -> GeneratorExample | None:
    """The example with only the reply's sentences that the evidence supports (those `attribute` cited), or
    ``None`` when none is left; a decline is kept as it is. Teaches the references' style without the part of them
    the evidence does not hold.

    Example:
        >>> e = GeneratorExample("t", [], "Cats sleep a lot [1]. They were worshipped in Egypt.", "answer")
        >>> cited_only(e).target
        'Cats sleep a lot [1].'
    """
    from local_rag.decide.support import cited
    from local_rag.llm.attribute import sentences

    if example.kind != "answer":
        return example
    kept = [s for s in sentences(example.target) if cited(s)]
    return replace(example, target=" ".join(kept)) if kept else None


def read_examples(path: str | Path) -> list[GeneratorExample]:
    return [GeneratorExample.from_json(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass
class GeneratorTraining:
    """A LoRA run. ``model``: a transformers folder or a ``.gguf`` file (dequantized by transformers)."""

    model: str
    out: str
    epochs: float = 1.0
    learning_rate: float = 2e-4
    rank: int = 16
    alpha: int = 32
    max_length: int = 1536
    batch_size: int = 1
    grad_accum: int = 4
    max_steps: int = -1
    save_steps: int = 10
    bf16: bool = True  # the frozen base in bfloat16 (the adapter stays float32): ~2x faster on AVX-512 BF16 CPUs
    seed: int = 0
    top_layers: int = 0  # LoRA on the last N decoder layers only (0 = all): backward stops there, ~1/3 less work
    targets: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                                        "up_proj", "down_proj"])

    def __post_init__(self) -> None:
        check_run(self.epochs, self.batch_size, self.learning_rate, self.max_steps, {
            "--rank": (self.rank, 1), "--grad-accum": (self.grad_accum, 1), "--top-layers": (self.top_layers, 0),
            "--max-length": (self.max_length, 1), "--save-steps": (self.save_steps, 1)})


def train_generator(config: GeneratorTraining, examples: list[GeneratorExample]) -> Path:
    """Fine-tune with a LoRA adapter, merge it, and save the merged model in ``<out>/merged`` (transformers format).
    Checkpoints go to ``<out>/checkpoints`` every ``save_steps`` steps; a rerun resumes from the last."""
    torch = require("torch", "generator training")
    datasets = require("datasets", "generator training")
    peft = require("peft", "generator training")
    trl = require("trl", "generator training")
    from local_rag.agent.train import load_policy

    if not examples:
        raise BadInputError("no training examples: every task was skipped or filtered out (see --min-support)")
    out = Path(config.out)
    model, tokenizer = load_policy(config.model)
    if config.bf16:
        model = model.to(torch.bfloat16)
    rows = [{"prompt": e.messages, "completion": [{"role": "assistant", "content": e.target}]} for e in examples]
    dataset = datasets.Dataset.from_list(rows)
    args = trl.SFTConfig(
        output_dir=str(out / "checkpoints"), num_train_epochs=config.epochs, max_steps=config.max_steps,
        learning_rate=config.learning_rate, per_device_train_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum, max_length=config.max_length, save_steps=config.save_steps,
        save_total_limit=2, logging_steps=1, report_to=[], seed=config.seed, lr_scheduler_type="cosine",
        warmup_steps=2, completion_only_loss=True, dataloader_num_workers=0, use_cpu=not torch.cuda.is_available(),
        gradient_checkpointing=False,  # TRL's default is on: memory is ample here, and it costs a third more compute
        bf16=False,  # the base is already bfloat16 (config.bf16); no autocast on top
    )
    n_layers = int(model.config.num_hidden_layers)
    layers = list(range(n_layers - config.top_layers, n_layers)) if 0 < config.top_layers < n_layers else None
    lora = peft.LoraConfig(r=config.rank, lora_alpha=config.alpha, lora_dropout=0.0, target_modules=config.targets,
                           layers_to_transform=layers, task_type="CAUSAL_LM")
    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer, peft_config=lora)
    checkpoints = sorted((out / "checkpoints").glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
    trainer.train(resume_from_checkpoint=str(checkpoints[-1]) if checkpoints else None)
    (out / "log_history.json").write_text(json.dumps(trainer.state.log_history, indent=1), encoding="utf-8")
    merged = trainer.model.merge_and_unload()
    folder = out / "merged"
    merged.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def quantize_type(qtype: str) -> int:
    """llama.cpp's file type for a quantization name (``Q4_K_M``, ``Q8_0`` ...); checked before any training."""
    llama_cpp = require("llama_cpp", "quantizing a GGUF")
    ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{qtype.upper()}", None)
    if not isinstance(ftype, int):
        raise BadInputError(f"unknown llama.cpp quantization type {qtype!r} (e.g. Q4_K_M, Q5_K_M, Q8_0)")
    return ftype


def to_gguf(folder: str | Path, out_file: str | Path, converter: str | Path, qtype: str = "Q4_K_M") -> Path:
    """Convert a transformers folder to a GGUF with llama.cpp's converter (float16), then quantize it with
    llama.cpp's quantizer (through llama-cpp-python) to ``qtype``; the float16 file is removed."""
    import ctypes

    llama_cpp = require("llama_cpp", "quantizing a GGUF")
    out_file = Path(out_file)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    f16 = out_file.with_suffix(".f16.gguf")
    subprocess.run([sys.executable, str(converter), str(folder), "--outfile", str(f16), "--outtype", "f16"], check=True)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = quantize_type(qtype)
    if llama_cpp.llama_model_quantize(str(f16).encode(), str(out_file).encode(), ctypes.byref(params)) != 0:
        raise RuntimeError(f"llama.cpp could not quantize {f16} to {qtype}")
    f16.unlink()
    return out_file


def split_tasks(split: str, limit: int, hold_out: int, tasks_file: str | Path | None = None) -> list[dict[str, Any]]:
    """The MTRAG generation tasks of ``split``'s conversations, less the ``hold_out`` tasks that ``eval generation
    --split <split> --limit <hold_out>`` measures (so that the fine-tuned generator is measured on tasks it never
    saw), then a fixed subset of ``limit`` (0 = all), stratified by domain and answerability."""
    from local_rag.evaluation.generation.runner import stratified_subset
    from local_rag.evaluation.splits import load_split, task_in_split
    from local_rag.mtrag import default_mtrag_dir, load_generation_tasks

    mtrag = default_mtrag_dir()
    tasks = load_generation_tasks(tasks_file or mtrag / "generation_tasks" / "mtrag_tasks.jsonl")
    conversations = load_split(mtrag, split)
    tasks = [t for t in tasks if task_in_split(t, conversations)]
    held = {t["task_id"] for t in stratified_subset(tasks, hold_out)} if hold_out else set()
    tasks = [t for t in tasks if t["task_id"] not in held]
    return stratified_subset(tasks, limit) if limit else tasks


def write_examples(out_file: str | Path, tasks: list[dict[str, Any]], settings: Settings, index_prefix: str = "mtrag-",
                   llm_cache: str | Path | None = None, progress: bool = True) -> int:
    """Append the examples of ``tasks`` to ``out_file`` (JSONL), skipping the tasks already there (a rerun
    continues). One LLM (the rewrite's) is shared by every domain's pipeline. Returns the examples written now."""
    from local_rag.evaluation.generation.runner import TaskPipelines

    out = Path(out_file)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {e.task_id for e in read_examples(out)} if out.exists() else set()
    todo = [t for t in tasks if str(t.get("task_id")) not in done]
    pipelines = TaskPipelines(settings, index_prefix, rewrite_cache=Path(llm_cache) if llm_cache is not None else None)
    written = 0
    from tqdm import tqdm

    items = tqdm(todo, desc="generator examples", unit="task") if progress else todo
    with out.open("a", encoding="utf-8") as f:
        for example in build_examples(items, settings, pipelines):
            f.write(example.to_json() + "\n")
            f.flush()
            written += 1
    return written

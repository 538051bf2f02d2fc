"""Fine-tuning the bi-encoder (sentence-transformers ``SentenceTransformerTrainer``) on `Example` records.

Loss: ``mnrl`` (MultipleNegativesRankingLoss: each query against its positive, its hard negatives and the batch's
other passages) or ``cmnrl`` (its cached variant: large batches in small memory). Resumable and recorded as in
`local_rag.train.store`; the result is a sentence-transformers folder that the embedder backends load by name. An
index built with the stock model does not open with the new one (the model checksum differs): build new indexes.

Example:
    >>> train_embedder(read_examples("train.jsonl"), "all-MiniLM-L6-v2", "i23-embedder", "models")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.device import enforce_offline, quiet_transformers
from local_rag.errors import BadInputError, MissingDependencyError
from local_rag.train.data import Example
from local_rag.train.store import TrainedModel, base_folder, check_run, run_and_install

LOSSES = ("mnrl", "cmnrl")


@dataclass
class EmbedderTraining:
    loss: str = "mnrl"
    epochs: float = 1.0
    batch_size: int = 32
    mini_batch_size: int = 16  # cmnrl only
    learning_rate: float = 2e-5
    max_length: int = 256
    negatives: int = 1  # hard negatives per query
    warmup_ratio: float = 0.1
    seed: int = 12
    max_steps: int = -1
    save_steps: int = 100

    def __post_init__(self) -> None:
        check_run(self.epochs, self.batch_size, self.learning_rate, self.max_steps, {
            "--max-length": (self.max_length, 1), "--save-steps": (self.save_steps, 1),
            "--negatives": (self.negatives, 0)})


def train_embedder(
    examples: Sequence[Example],
    base: str,
    name: str,
    models_dir: str | Path,
    cfg: EmbedderTraining | None = None,
    data_info: dict[str, Any] | None = None,
    progress: bool = True,
) -> Path:
    """Fine-tune the bi-encoder ``base`` on ``examples`` and install it as ``<models_dir>/<name>``.

    Raises:
        ModelError: the base model is missing. BadInputError: an empty training set or an unknown loss.
    """
    cfg = cfg or EmbedderTraining()
    if cfg.loss not in LOSSES:
        raise BadInputError(f"unknown loss {cfg.loss!r}; valid: {', '.join(LOSSES)}")
    usable = [ex for ex in examples if len(ex.negatives) >= cfg.negatives]
    if not usable:
        raise BadInputError("the training set is empty (no example with enough hard negatives)")
    models_dir = Path(models_dir)
    source = base_folder(base, models_dir)
    enforce_offline()
    st = require("sentence_transformers", "training")
    datasets = require("datasets", "training")
    torch = require("torch", "training")
    quiet_transformers()
    rows: dict[str, list[str]] = {"anchor": [ex.query for ex in usable], "positive": [ex.positive for ex in usable]}
    for i in range(cfg.negatives):
        rows[f"negative_{i + 1}"] = [ex.negatives[i] for ex in usable]
    dataset = datasets.Dataset.from_dict(rows)
    torch.manual_seed(cfg.seed)
    model = st.SentenceTransformer(str(source), device="cpu" if not torch.cuda.is_available() else None,
                                   local_files_only=True)
    model.max_seq_length = cfg.max_length
    losses, training_args = _st_modules()
    loss = (losses.MultipleNegativesRankingLoss(model) if cfg.loss == "mnrl"
            else losses.CachedMultipleNegativesRankingLoss(model, mini_batch_size=cfg.mini_batch_size))
    args = st.SentenceTransformerTrainingArguments(
        output_dir=str(models_dir / f".{name}.training"), num_train_epochs=cfg.epochs, max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.batch_size, learning_rate=cfg.learning_rate, warmup_steps=cfg.warmup_ratio,
        seed=cfg.seed, logging_steps=max(1, min(10, cfg.max_steps if cfg.max_steps > 0 else 10)),
        save_strategy="steps", save_steps=cfg.save_steps, save_total_limit=1, report_to=[],
        disable_tqdm=not progress, dataloader_num_workers=0, dataloader_pin_memory=torch.cuda.is_available(),
        batch_sampler=training_args.BatchSamplers.NO_DUPLICATES,
    )
    trainer = st.SentenceTransformerTrainer(model=model, args=args, train_dataset=dataset, loss=loss)
    return run_and_install(trainer, model, TrainedModel("sentence-transformers", base, source, name, models_dir, "embedder",
                           description(base, cfg.loss, len(usable))),
                           asdict(cfg), {**(data_info or {}), "examples": len(usable)})


def description(base: str, loss: object, examples: object) -> str:
    """The manifest description of a fine-tuned bi-encoder."""
    return f"bi-encoder fine-tuned from {base} ({loss}, {examples} examples)"


def _st_modules() -> tuple[Any, Any]:
    """sentence-transformers' losses and training arguments: under ``sentence_transformer`` from v6 (the old top-level
    names are deprecated there and no longer attributes of the package), at the top level in v5."""
    try:
        return (require("sentence_transformers.sentence_transformer.losses", "training"),
                require("sentence_transformers.sentence_transformer.training_args", "training"))
    except MissingDependencyError:
        return require("sentence_transformers.losses", "training"), require("sentence_transformers.training_args", "training")

"""Training a cross-encoder reranker (sentence-transformers ``CrossEncoderTrainer``) from `Example` records.

Losses (``loss``): ``bce`` (binary cross-entropy over (query, passage, 0/1) pairs), ``mnrl`` (multiple negatives
ranking: the positive against its hard negatives and the batch's other passages), ``listnet`` (a listwise softmax
loss over the positive and its hard negatives). The run checkpoints into ``<models>/.<name>.training`` and resumes
from there; the finished model is moved into ``<models>/<name>`` and recorded in the manifest (role ``reranker``),
with ``training.json`` (base model, data sha256, settings, time, peak memory, metrics) among its files.

Example:
    >>> train_reranker(read_examples("train.jsonl"), "all-MiniLM-L6-v2", "i23-reranker", "models")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from local_rag._optional import require
from local_rag.device import enforce_offline, quiet_transformers
from local_rag.errors import BadInputError
from local_rag.train.data import Example
from local_rag.train.store import TrainedModel, base_folder, check_run, run_and_install

LOSSES = ("bce", "mnrl", "listnet")


@dataclass
class RerankerTraining:
    """Settings of one training run (recorded in ``training.json``)."""

    loss: str = "bce"
    epochs: float = 1.0
    batch_size: int = 16
    learning_rate: float = 5e-5
    max_length: int = 256
    negatives: int = 4  # hard negatives used per example
    skip_hard: int = 0  # mined negatives skipped from the top (the best-ranked are the likeliest unlabelled positives)
    random_negatives: int = 0  # other examples' positives added as easy negatives (seeded)
    warmup_ratio: float = 0.1
    seed: int = 12
    max_steps: int = -1  # > 0 stops after that many optimizer steps (tests, quick looks)
    save_steps: int = 100

    def __post_init__(self) -> None:
        check_run(self.epochs, self.batch_size, self.learning_rate, self.max_steps, {
            "--max-length": (self.max_length, 1), "--save-steps": (self.save_steps, 1),
            "--negatives": (self.negatives, 0), "--skip-hard": (self.skip_hard, 0),
            "--random-negatives": (self.random_negatives, 0)})


def chosen_negatives(examples: Sequence[Example], cfg: RerankerTraining) -> list[list[str]]:
    """Each example's negatives: its mined ones from rank ``skip_hard`` on (``negatives`` of them), then
    ``random_negatives`` positives of other examples with another gold passage (seeded, the same on every run)."""
    import random

    rng = random.Random(cfg.seed)
    out = []
    for ex in examples:
        chosen = list(ex.negatives[cfg.skip_hard : cfg.skip_hard + cfg.negatives])
        while len(chosen) < cfg.negatives + cfg.random_negatives and len(examples) > 1:
            other = examples[rng.randrange(len(examples))]
            if other.positive and other.positive_id != ex.positive_id and other.positive not in chosen:
                chosen.append(other.positive)
        out.append(chosen)
    return out


def _dataset(examples: Sequence[Example], cfg: RerankerTraining) -> Any:
    datasets = require("datasets", "training")
    usable = [ex for ex in examples if (len(ex.negatives) > cfg.skip_hard or cfg.loss == "mnrl")
              and (ex.positive or cfg.loss == "bce")]  # only bce takes an example without a positive
    if not usable:
        raise BadInputError("the training set is empty (no example with a hard negative)")
    negatives = chosen_negatives(usable, cfg)
    if cfg.loss == "bce":
        rows: dict[str, list[Any]] = {"query": [], "passage": [], "label": []}
        for ex, negs in zip(usable, negatives, strict=True):
            # an example without a positive (a synthetic unanswerable question) gives its negatives only
            for text, label in [(ex.positive, 1.0)] * bool(ex.positive) + [(n, 0.0) for n in negs]:
                rows["query"].append(ex.query)
                rows["passage"].append(text)
                rows["label"].append(label)
        return datasets.Dataset.from_dict(rows)
    if cfg.loss == "mnrl":
        k = min([cfg.negatives + cfg.random_negatives] + [len(negs) for negs in negatives])
        rows = {"query": [ex.query for ex in usable], "positive": [ex.positive for ex in usable]}
        for i in range(k):
            rows[f"negative_{i + 1}"] = [negs[i] for negs in negatives]
        return datasets.Dataset.from_dict(rows)
    docs = [[ex.positive] + negs for ex, negs in zip(usable, negatives, strict=True)]
    return datasets.Dataset.from_dict({
        "query": [ex.query for ex in usable], "docs": docs, "labels": [[1] + [0] * (len(d) - 1) for d in docs],
    })


def _loss(model: Any, name: str) -> Any:
    losses = require("sentence_transformers", "training").cross_encoder.losses
    if name == "bce":
        return losses.BinaryCrossEntropyLoss(model)
    if name == "mnrl":
        return losses.MultipleNegativesRankingLoss(model)
    if name == "listnet":
        return losses.ListNetLoss(model)
    raise BadInputError(f"unknown loss {name!r}; valid: {', '.join(LOSSES)}")


def train_reranker(
    examples: Sequence[Example],
    base: str,
    name: str,
    models_dir: str | Path,
    cfg: RerankerTraining | None = None,
    data_info: dict[str, Any] | None = None,
    progress: bool = True,
) -> Path:
    """Train a cross-encoder from ``base`` on ``examples`` and install it as ``<models_dir>/<name>``.

    Raises:
        ModelError: the base model is missing. BadInputError: an empty training set or an unknown loss.
    """
    cfg = cfg or RerankerTraining()
    if cfg.loss not in LOSSES:
        raise BadInputError(f"unknown loss {cfg.loss!r}; valid: {', '.join(LOSSES)}")
    if not examples:
        raise BadInputError("the training set is empty")
    models_dir = Path(models_dir)
    source = base_folder(base, models_dir)
    enforce_offline()
    st = require("sentence_transformers", "training")
    torch = require("torch", "training")
    quiet_transformers()

    dataset = _dataset(examples, cfg)
    work = models_dir / f".{name}.training"
    torch.manual_seed(cfg.seed)
    model = st.cross_encoder.CrossEncoder(str(source), num_labels=1, max_length=cfg.max_length, device="cpu"
                                          if not torch.cuda.is_available() else None, local_files_only=True)
    args = st.cross_encoder.CrossEncoderTrainingArguments(
        output_dir=str(work), num_train_epochs=cfg.epochs, max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.batch_size, learning_rate=cfg.learning_rate, warmup_steps=cfg.warmup_ratio,
        seed=cfg.seed, logging_steps=max(1, min(10, cfg.max_steps if cfg.max_steps > 0 else 10)),
        save_strategy="steps", save_steps=cfg.save_steps, save_total_limit=1, report_to=[],
        disable_tqdm=not progress, dataloader_num_workers=0, dataloader_pin_memory=torch.cuda.is_available(),
    )
    trainer = st.cross_encoder.CrossEncoderTrainer(model=model, args=args, train_dataset=dataset,
                                                   loss=_loss(model, cfg.loss))
    return run_and_install(trainer, model, TrainedModel("cross-encoder", base, source, name, models_dir, "reranker",
                           f"cross-encoder trained from {base} ({cfg.loss}, {len(examples)} examples)"),
                           asdict(cfg), {**(data_info or {}), "examples": len(examples), "rows": len(dataset)})

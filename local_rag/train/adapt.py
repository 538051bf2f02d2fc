"""``local-rag train adapt``: adapt the retriever to an index's own documents in one command, with no labels and no
network, and keep the result only when it measures better.

The chain (each step resumable, all files in one work folder, default ``runs/adapt/<index>``):

1. **synth**: the profile's LLM writes a question and a follow-up for sampled chunks of the index; a query is kept
   when the index finds its own chunk in the top ``k`` (`local_rag.train.synth_run`). The queries of a share of the
   documents are held out, unfiltered, and never trained on. LLM outputs are cached: a rerun asks nothing twice.
2. **train**: the index's embedder is fine-tuned on the kept queries with their mined hard negatives
   (`local_rag.train.embedder`), installed as ``models/<name>``. A run with the same data and settings is not
   repeated; an interrupted one resumes from its last checkpoint.
3. **measure**: MRR@10 and recall of the held-out queries' own chunks, first stage alone and with the fine-tuned
   model re-scoring the first stage's top ``candidates`` (fused with the first stage's order); the stock model as
   the same re-scorer beside them, for the record. With ``folds`` (the default, 5) the held-out queries are all of
   them, by cross-validation over the documents (`local_rag.train.folds`: a model per fold, trained without the
   fold's documents, ranks the fold's queries); with ``folds=0``, the queries of a ``holdout`` share of the documents,
   never trained on.
4. **decide**: kept when the held-out MRR@10 gains at least ``margin``, the gain's 95% interval (a paired bootstrap
   over the held-out queries) lies above zero (``interval``), and recall@5 is not lower, over at least
   ``min_heldout`` queries. Kept, the index takes it: ``<indexes_dir>/<index>.adapted.yaml`` (`local_rag.adaptation`)
   switches the re-scorer on wherever the index answers (ask, chat, search, serve; ``--no-adaptation`` leaves it
   out), and ``<work>/adapted.yaml`` holds the same settings for ``--config``. Not kept, both go when they name this
   model, and the index answers as before.

The held-out check's "no" is reliable, its "yes" optimistic (the held-out queries share the training queries' style:
docs/training.md); the report says so, `report.json` keeps every figure and `ranks.json` every held-out query's
rank per row.

Example:
    >>> report = adapt(settings, "notes-adapted", Path("runs/adapt/notes"), AdaptConfig(passages=300))  # doctest: +SKIP
    >>> report.kept, report.gain  # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from local_rag.adaptation import remove_adaptation, write_adaptation
from local_rag.errors import BadInputError
from local_rag.settings import Settings
from local_rag.train.embedder import LOSSES
from local_rag.train.store import check_run

if TYPE_CHECKING:
    from local_rag.train.synth_run import SynthResult


#: fewer optimizer steps than this barely move the model (17 kept queries at batch 32 are one step): a model that is
#: not kept after so few is reported with the way to more data (`local-rag train adapt`'s last line)
FEW_STEPS = 10


@dataclass
class AdaptConfig:
    passages: int = 200  # chunks the LLM writes queries for
    kinds: tuple[str, ...] = ("question", "follow_up")
    k: int = 5  # consistency filter: the chunk in the top k for its query
    negatives: int = 8  # mined per kept query
    folds: int = 5  # cross-validation over the documents: every query measured once (0: one held-out share)
    holdout: float = 0.2  # with folds=0: share of the documents held out for the check
    epochs: float = 1.0
    loss: str = "auto"  # mnrl | cmnrl | auto: cmnrl on a machine with less than LOW_MEMORY_GIB of memory
    batch_size: int = 32
    learning_rate: float = 2e-5
    max_length: int = 256
    max_steps: int = -1
    candidates: int = 20  # first-stage hits the adapted model re-scores
    prior_weight: float = 1.0  # the first stage's order fused with the model's (RRF), as measured on MTRAG
    margin: float = 0.01  # held-out MRR@10 gain needed to keep the model
    interval: bool = True  # also needed: the gain's 95% bootstrap interval above zero (session 35)
    min_heldout: int = 20  # fewer held-out queries than this: too few to judge, not kept

    def __post_init__(self) -> None:
        check_run(self.epochs, self.batch_size, self.learning_rate, self.max_steps, {
            "--max-length": (self.max_length, 1), "--min-heldout": (self.min_heldout, 0)})


LOW_MEMORY_GIB = 16.0  # mnrl at batch 32 peaks at 8-9 GB RSS (session 45); cmnrl (mini-batches of 16) at 3 GB


def training_loss(choice: str, memory_gib: float | None = None) -> str:
    """The loss ``--loss`` names; ``auto``: ``cmnrl`` (CachedMultipleNegativesRankingLoss: the same objective in
    mini-batches, ~3 GB instead of ~8 GB at batch 32, slower) on a machine with less than `LOW_MEMORY_GIB` of
    memory, else ``mnrl``.

    Example:
        >>> training_loss("auto", 8.0), training_loss("auto", 24.0), training_loss("cmnrl", 64.0)
        ('cmnrl', 'mnrl', 'cmnrl')
    """
    if choice != "auto":
        return choice
    if memory_gib is None:
        from local_rag.sysinfo import total_memory_gib

        memory_gib = total_memory_gib()
    return "cmnrl" if memory_gib < LOW_MEMORY_GIB else "mnrl"


@dataclass
class AdaptReport:
    index: str
    model: str
    base: str
    work: str
    config: dict[str, Any]
    synth: dict[str, Any]
    training: dict[str, Any]
    rows: dict[str, dict[str, float | int]]
    gain: float  # held-out MRR@10, adapted minus first stage
    gain_interval: tuple[float, float]  # its 95% interval (paired bootstrap over the held-out queries)
    over_stock: dict[str, float]  # held-out MRR@10, adapted minus the stock model as the same re-scorer, with interval
    kept: bool
    reason: str
    settings_file: str | None
    seconds: dict[str, float] = field(default_factory=dict)
    adaptation_file: str | None = None  # the index's own (`local_rag.adaptation`), when kept
    folds: list[dict[str, Any]] = field(default_factory=list)  # cross-validation: a record per fold


def adapt(settings: Settings, name: str, work: Path, cfg: AdaptConfig | None = None, progress: bool = True,
          ) -> AdaptReport:
    """Run the four steps for ``settings.index`` and write ``<work>/report.json`` (and ``adapted.yaml`` when kept).

    Raises:
        IndexError_: no such index, or one built with another embedder (before any LLM call). BadInputError: bad
        settings of the run, or no kept query to train on. ModelError: the embedder's base model is missing.
    """
    from local_rag.evaluation.lock import run_lock
    from local_rag.train.data import read_examples
    from local_rag.train.embedder import EmbedderTraining, train_embedder
    from local_rag.train.folds import ADAPTED, cross_validate
    from local_rag.train.synth import metrics_of_ranks
    from local_rag.train.synth_run import SynthRun, heldout_ranks, mrr_difference, write_synth_examples

    cfg = cfg or AdaptConfig()
    _check(cfg)
    base = settings.embedder.model
    folder = settings.models_dir / name
    if name == Path(base).name or (folder.exists() and not (folder / "training.json").exists()):
        raise BadInputError(f"--name {name}: models/{name} is a model local-rag did not train (the base is {base}); "
                            "give another name")
    seconds: dict[str, float] = {}
    with run_lock(work):
        started = time.perf_counter()
        synth = write_synth_examples(settings, work / "synth.jsonl", SynthRun(
            passages=cfg.passages, k=cfg.k, kinds=cfg.kinds, negatives=cfg.negatives, cache=work / "synth-cache.jsonl",
            holdout=0.0 if cfg.folds else cfg.holdout), progress=progress)
        seconds["synth"] = round(time.perf_counter() - started, 1)
        if not synth.kept:
            raise BadInputError(f"none of the {synth.kept + synth.dropped} written queries found its own chunk in the "
                                f"top {cfg.k}: nothing to train on (more --passages, or a larger --k)")
        _checkable(synth, cfg)
        examples = read_examples(synth.out_file)  # the kept queries: the final fine-tune's and the folds'
        started = time.perf_counter()
        training = EmbedderTraining(loss=training_loss(cfg.loss), epochs=cfg.epochs, batch_size=cfg.batch_size,
                                    learning_rate=cfg.learning_rate, max_length=cfg.max_length, negatives=1,
                                    max_steps=cfg.max_steps)
        data = {"file": str(synth.out_file), "sha256": synth.info["sha256"], "modes": None}
        trained = _same_training(folder, base, asdict(training), data["sha256"])
        if trained is not None:
            _listed(folder, settings.models_dir, trained)
        else:
            train_embedder(examples, base, name, settings.models_dir, training, data,
                           progress=progress)
            trained = json.loads((folder / "training.json").read_text(encoding="utf-8"))
            trained["repeated"] = False
        seconds["train"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        measured = settings.model_copy(update={"reranker": settings.reranker.model_copy(update={
            "backend": "bi-encoder", "model": name, "candidates": cfg.candidates, "prior_weight": cfg.prior_weight})})
        folds: list[dict[str, Any]] = []
        if cfg.folds:
            cv = cross_validate(measured, examples, synth.written, training, work, cfg.folds,
                                data["sha256"], progress=progress)
            held, folds = [synth.written[n] for n in cv.positions], cv.folds
            stock = heldout_ranks(measured, held, "chunk", [base], depth=20, progress=progress)
            first_ranks, adapted_ranks = cv.ranks["first stage"], cv.ranks[ADAPTED]
            stock_ranks = stock[f"+ {Path(base).name}"]
        else:
            # the stock model as the same re-scorer, for the record: is a gain the adaptation's or the re-scoring's?
            ranks = heldout_ranks(measured, synth.heldout, "chunk", [base, name], depth=20, progress=progress)
            stock_ranks, first_ranks, adapted_ranks = (ranks[f"+ {Path(base).name}"], ranks["first stage"],
                                                       ranks[f"+ {name}"])
        # the order of the table: first stage, stock, adapted
        rows = {"first stage": metrics_of_ranks(first_ranks), f"+ {Path(base).name} (stock)": metrics_of_ranks(stock_ranks),
                f"+ {name}": metrics_of_ranks(adapted_ranks)}
        seconds["measure"] = round(time.perf_counter() - started, 1)
        first, adapted = rows["first stage"], rows[f"+ {name}"]
        gain, low, high = mrr_difference(first_ranks, adapted_ranks)
        stock_gain, stock_low, stock_high = mrr_difference(stock_ranks, adapted_ranks)
        kept, reason = _decide(first, adapted, gain, low, cfg)
        settings_file = work / "adapted.yaml"
        index_file = None
        if kept:
            index_file = _write_settings(settings_file, settings, name, cfg, first, adapted, (gain, low, high))
        else:  # an earlier run's "keep" no longer holds
            settings_file.unlink(missing_ok=True)
            remove_adaptation(settings.indexes_dir, settings.index, name)
        report = AdaptReport(
            index=settings.index, model=name, base=base, work=str(work), config=asdict(cfg), synth=synth.info,
            training={"loss": training.loss, **{k: trained.get(k) for k in ("train_seconds", "steps", "final_loss",
                                                                             "peak_rss_mb", "repeated")}},
            rows=rows, gain=gain, gain_interval=(low, high),
            over_stock={"gain": stock_gain, "low": stock_low, "high": stock_high},
            kept=kept, reason=reason, settings_file=str(settings_file) if kept else None,
            seconds=seconds, adaptation_file=str(index_file) if index_file else None, folds=folds)
        (work / "report.json").write_text(json.dumps(asdict(report), indent=2) + "\n", encoding="utf-8")
        # each held-out query's rank of its own chunk per row (0: not in the top 20): the gain and its interval
        # re-derive from it (`local_rag.train.synth_run.mrr_difference`)
        (work / "ranks.json").write_text(json.dumps({"first stage": first_ranks, "stock": stock_ranks,
                                                     "adapted": adapted_ranks}) + "\n", encoding="utf-8")
    return report


def _check(cfg: AdaptConfig) -> None:
    from local_rag.train.synth_run import check_kinds

    if cfg.passages < 1:
        raise BadInputError(f"--passages must be at least 1, got {cfg.passages}")
    if cfg.folds < 0 or cfg.folds == 1:
        raise BadInputError(f"--folds must be 0 (one held-out share) or at least 2, got {cfg.folds}")
    if not cfg.folds and not 0 < cfg.holdout < 1:
        raise BadInputError(f"--holdout must be in (0, 1): the check needs held-out documents, got {cfg.holdout}")
    if cfg.loss not in ("auto", *LOSSES):
        raise BadInputError(f"--loss must be one of auto, {', '.join(LOSSES)}; got {cfg.loss!r}")
    check_kinds(cfg.kinds)


def _checkable(synth: SynthResult, cfg: AdaptConfig) -> None:
    """Stop before any fine-tune when the check could not keep the model whatever it measured: fewer queries to
    measure than ``--min-heldout``, or (cross-validated) all of them from one document. The LLM's queries are cached
    in the work folder, so a rerun with more ``--passages`` writes only the new ones.

    Raises:
        BadInputError: saying what to change.
    """
    from local_rag.train.synth import document_folds

    measured = synth.written if cfg.folds else synth.heldout
    if len(measured) < cfg.min_heldout:
        where = "written" if cfg.folds else "held out"
        raise BadInputError(f"{len(measured)} queries {where} to check a model on, fewer than --min-heldout "
                            f"{cfg.min_heldout}: no model could be kept, so none is trained; write more with --passages "
                            "(the queries written so far are cached and reused)")
    if cfg.folds:
        document_folds(measured, cfg.folds)  # two documents or more


def _same_training(folder: Path, base: str, settings: dict[str, Any], sha256: str) -> dict[str, Any] | None:
    """The record of an installed model trained from the same base, settings and data (then it is not trained again)."""
    try:
        record = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    same = (record.get("base_model") == base and record.get("settings") == settings
            and (record.get("data") or {}).get("sha256") == sha256)
    return {**record, "repeated": True} if same else None


def _listed(folder: Path, models_dir: Path, record: dict[str, Any]) -> None:
    """Record a model trained earlier in the manifest when its entry is gone (a manifest reset by version control,
    a models folder copied without it): the folder and its ``training.json`` are what `train embedder` left."""
    from local_rag.modelstore.manifest import Manifest
    from local_rag.train.embedder import description
    from local_rag.train.store import record_trained

    if folder.name in Manifest.load(models_dir).entries:
        return
    record_trained(folder, models_dir, "embedder", description(
        str(record.get("base_model")), (record.get("settings") or {}).get("loss"),
        (record.get("data") or {}).get("examples")), record.get("kind", ""))


def _decide(first: dict[str, float | int], adapted: dict[str, float | int], gain: float, low: float, cfg: AdaptConfig,
            ) -> tuple[bool, str]:
    n = int(first["queries"])
    if n < cfg.min_heldout:
        return False, (f"too few held-out queries to judge ({n} < {cfg.min_heldout}): write more with --passages"
                       + ("" if cfg.folds else ", or a larger --holdout"))
    if gain < cfg.margin:
        return False, f"held-out MRR@10 gains {gain:+.4f}, under the margin {cfg.margin}"
    if cfg.interval and low <= 0:
        return False, (f"held-out MRR@10 gains {gain:+.4f}, but its 95% interval reaches {low:+.4f}: not told apart "
                       f"from no change on {n} queries (more --passages, or --no-interval to keep it anyway)")
    if float(adapted["recall@5"]) < float(first["recall@5"]):
        return False, f"held-out recall@5 falls ({first['recall@5']} -> {adapted['recall@5']})"
    return True, (f"held-out MRR@10 gains {gain:+.4f} (95% interval from {low:+.4f}; margin {cfg.margin}) and "
                  "recall@5 holds; held-out queries share the training queries' style, so try a few questions of your "
                  "own with and without it")


def _write_settings(path: Path, settings: Settings, name: str, cfg: AdaptConfig, first: dict[str, float | int],
                    adapted: dict[str, float | int], gain: tuple[float, float, float]) -> Path:
    """Write ``<work>/adapted.yaml`` (for ``--config``) and the index's own adaptation; return the latter's path."""
    index = settings.index
    layer = {"pipeline": {"cross_encoder": True},
             "reranker": {"backend": "bi-encoder", "model": name, "candidates": cfg.candidates,
                          "prior_weight": cfg.prior_weight, "fallback": "skip"}}
    measured = (f"held-out MRR@10 {first['mrr@10']} -> {adapted['mrr@10']}, recall@5 {first['recall@5']} -> "
                f"{adapted['recall@5']} ({first['queries']} queries)")
    head = (f"# written by `local-rag train adapt` for index {index}: {measured}.\n"
            f"# Use: local-rag chat --config {path}   (ask, search and serve take it too)\n")
    path.write_text(head + yaml.safe_dump({"index": index, **layer}, sort_keys=False), encoding="utf-8")
    record = {"model": name, "mrr@10": [first["mrr@10"], adapted["mrr@10"]],
              "recall@5": [first["recall@5"], adapted["recall@5"]], "queries": first["queries"], "folds": cfg.folds,
              "gain_interval": [gain[1], gain[2]], "work": str(path.parent),
              "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **_documents(settings)}
    head = (f"# written by `local-rag train adapt` (work folder {path.parent}): {measured}.\n"
            f"# ask, chat, search and serve on index {index} apply it; --no-adaptation (or index_adaptation: false)\n"
            f"# leaves it out, and deleting this file ends it.\n")
    return write_adaptation(settings.indexes_dir, index, layer, record, head)


def _documents(settings: Settings) -> dict[str, Any]:
    """The index's corpus hash and passages now, so `index info` and `doctor` can tell when it changes after."""
    from local_rag.index.manifest import IndexManifest

    manifest = IndexManifest.load(settings.index_dir)
    return {"corpus_hash": manifest.corpus_hash, "passages": manifest.passages}


def table(report: AdaptReport) -> str:
    """The held-out rows as a markdown table."""
    keys = list(next(iter(report.rows.values())))
    lines = ["| row | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
    lines += [f"| {row} | " + " | ".join(str(m[k]) for k in keys) + " |" for row, m in report.rows.items()]
    low, high = report.gain_interval
    stock = report.over_stock
    lines += ["", f"MRR@10 of {report.model}: {report.gain:+.4f} over the first stage (95% interval {low:+.4f} … "
              f"{high:+.4f}), {stock['gain']:+.4f} over the stock model as the same re-scorer ({stock['low']:+.4f} … "
              f"{stock['high']:+.4f})"]
    if report.folds:
        measured = [f for f in report.folds if "skipped" not in f]
        lines.append(f"cross-validated: {len(measured)} folds of documents, each query ranked by a model trained "
                     f"without its document ({', '.join(str(f['queries']) for f in measured)} queries; "
                     f"{sum(f['train_seconds'] for f in measured):.0f} s of training)"
                     + "".join(f"; fold {f['fold']} skipped: {f['skipped']}" for f in report.folds if "skipped" in f))
    return "\n".join(lines)

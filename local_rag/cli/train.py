"""``local-rag train``: training data from MTRAG train conversations, a cross-encoder reranker, cached rewrites."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

import click

from local_rag.cli.main import handle_errors, load, settings_options
from local_rag.cli.models import model_name
from local_rag.cli.search import positive_ints, split_csv
from local_rag.errors import BadInputError


@click.group(name="train")
def train() -> None:
    """Train retrieval specialists offline (learn from MTRAG train conversations only)."""


@train.command()
@settings_options
@click.option("--split", default="train", type=click.Choice(["train", "test"]), show_default=True)
@click.option("--domains", default="clapnq,cloud,fiqa,govt", show_default=True)
@click.option("--mode", "modes", default="lastturn,rewrite,own", show_default=True,
              help="Query texts per task: lastturn, rewrite (organizers' file), own (our cached LLM rewrite).")
@click.option("--negatives", default=8, show_default=True, type=click.IntRange(min=0), help="Hard negatives per example.")
@click.option("--depth", default=30, show_default=True, type=click.IntRange(min=1), help="Hybrid hits searched for negatives.")
@click.option("--same-document/--drop-same-document", default=False, show_default=True,
              help="Keep (or drop) candidates from a gold passage's document (likely false negatives).")
@click.option("--index-prefix", default="mtrag-", show_default=True, help="Index of a domain = <prefix><domain>.")
@click.option("--llm-cache", type=click.Path(dir_okay=False), help="Rewrite cache for mode 'own' (default runs/llm-cache.jsonl).")
@click.option("--out", "out_file", required=True, type=click.Path(dir_okay=False), help="Examples JSONL to write.")
@handle_errors
def data(profile, config_file, index_name, split, domains, modes, negatives, depth, same_document, index_prefix, llm_cache, out_file):
    """(query, gold passage, hard negatives) examples from one MTRAG split, negatives mined with our hybrid."""
    from tqdm import tqdm

    from local_rag.evaluation.retrieval import check_domains
    from local_rag.mtrag import default_mtrag_dir
    from local_rag.retrieve.stack import open_retriever
    from local_rag.train.data import build_examples, load_passages, mtrag_tasks, write_examples

    settings = load(profile, config_file, index_name)
    settings.retrieval.top_k = max(settings.retrieval.top_k, depth)
    mtrag = default_mtrag_dir()
    examples, embedder, counts = [], None, {}
    for domain in check_domains(mtrag / "retrieval_tasks", split_csv((domains,)) or [], settings.indexes_dir, index_prefix):
        tasks, qrels = mtrag_tasks(mtrag, split, domain, split_csv((modes,)) or [], llm_cache or Path("runs") / "llm-cache.jsonl",
                                   settings.llm.model)
        gold = {pid for t, _, _ in tasks for pid in qrels.get(t, {})}
        passages = load_passages(mtrag / "corpora" / "pool" / f"{domain}.jsonl", gold)
        settings.index = f"{index_prefix}{domain}"
        retriever = open_retriever(settings, embedder)
        embedder = next((r.embedder for r in retriever.retrievers.values() if hasattr(r, "embedder")), embedder)
        made = build_examples(tasks, qrels, passages, functools.partial(retriever.search, top_k=depth), negatives,
                              drop_same_document=not same_document,
                              progress=functools.partial(tqdm, desc=f"mining {domain}"))
        counts[domain] = len(made)
        examples.extend(made)
    digest = write_examples(examples, out_file)
    info = {"split": split, "domains": counts, "modes": modes, "negatives": negatives, "depth": depth,
            "drop_same_document": not same_document, "sha256": digest, "index_prefix": index_prefix}
    Path(str(out_file) + ".info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    click.echo(f"{len(examples)} examples written to {out_file} (sha256 {digest[:12]}): {counts}")


@train.command()
@click.option("--split", default="train", type=click.Choice(["train", "test"]), show_default=True)
@click.option("--domains", default="clapnq,cloud,fiqa,govt", show_default=True)
@click.option("--mode", "modes", default="lastturn,rewrite", show_default=True,
              help="Question texts per task: lastturn, rewrite (organizers' file).")
@click.option("--min-held", default=0.3, show_default=True, type=click.FloatRange(0, 1),
              help="Least share of the answer's new words a passage must hold to give a pair.")
@click.option("--min-cover", default=0.8, show_default=True, type=click.FloatRange(0, 1),
              help="Least share of those words the removed sentences must cover.")
@click.option("--unit", default="sentence", type=click.Choice(["sentence", "passage"]), show_default=True,
              help="sentence: the answer's sentence against other sentences of its passage; passage: the passage with "
                   "and without the sentences that carry the answer.")
@click.option("--negatives", default=3, show_default=True, type=click.IntRange(min=0),
              help="Negative sentences per example (unit sentence).")
@click.option("--mined", "mined_file", type=click.Path(dir_okay=False),
              help="A `train data` file of the same split: its hard negatives give sentences of other documents as "
                   "negatives too (unit sentence).")
@click.option("--mined-negatives", default=3, show_default=True, type=click.IntRange(min=0), help="Such sentences per example (with --mined).")
@click.option("--out", "out_file", required=True, type=click.Path(dir_okay=False), help="Examples JSONL to write.")
@handle_errors
def containment(split, domains, modes, min_held, min_cover, unit, negatives, mined_file, mined_negatives, out_file):
    """Containment examples from MTRAG answerable tasks (does a text hold the answer, not only the subject?), for
    `train reranker --loss bce`: the sentence carrying the reference answer against other sentences of its passage,
    or (--unit passage) each gold passage with and without the sentences that carry it."""
    from local_rag.evaluation.retrieval import check_domains
    from local_rag.evaluation.splits import load_split
    from local_rag.mtrag import default_mtrag_dir, load_generation_tasks
    from local_rag.train.containment import containment_examples
    from local_rag.train.data import file_digest, mtrag_tasks, read_examples, write_examples

    mtrag = default_mtrag_dir()
    queries: dict[str, dict[str, str]] = {}
    for domain in check_domains(mtrag / "retrieval_tasks", split_csv((domains,)) or []):
        tasks, _ = mtrag_tasks(mtrag, split, domain, split_csv((modes,)) or [])
        queries.update({task_id: texts for task_id, _, texts in tasks})
    mined = {(e.task_id, e.mode): e.negatives for e in read_examples(mined_file)} if mined_file else None
    generation = load_generation_tasks(mtrag / "generation_tasks" / "mtrag_tasks.jsonl")
    examples = containment_examples([t for t in generation if str(t.get("task_id")) in queries], load_split(mtrag, split),
                                    queries, min_held, min_cover, unit=unit, negatives=negatives, mined=mined,
                                    mined_negatives=mined_negatives)
    if not examples:
        raise BadInputError(f"no containment pair: no ANSWERABLE task of the {split} split has a reference answer "
                            "found in its passages")
    digest = write_examples(examples, out_file)
    counts = {m: sum(e.mode == m for e in examples) for m in sorted({e.mode for e in examples})}
    info = {"split": split, "domains": domains, "modes": modes, "unit": unit, "negatives": negatives,
            "min_held": min_held, "min_cover": min_cover, "examples": counts, "sha256": digest,
            "mined": {"file": mined_file, "sha256": file_digest(mined_file), "negatives": mined_negatives} if mined_file else None}
    Path(str(out_file) + ".info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    click.echo(f"{len(examples)} containment examples written to {out_file} (sha256 {digest[:12]}): {counts}")


@train.command()
@settings_options
@click.option("--data", "data_file", required=True, type=click.Path(dir_okay=False), help="Examples JSONL (`train data`).")
@click.option("--base", default="all-MiniLM-L6-v2", show_default=True, help="Base model: a models/ name or a folder.")
@click.option("--name", callback=model_name, required=True, help="Name of the trained model under models/.")
@click.option("--loss", default="bce", type=click.Choice(["bce", "mnrl", "listnet"]), show_default=True)
@click.option("--epochs", default=1.0, show_default=True)
@click.option("--batch-size", default=16, show_default=True)
@click.option("--lr", "learning_rate", default=5e-5, show_default=True)
@click.option("--max-length", default=256, show_default=True, help="Tokens per (query, passage) pair.")
@click.option("--negatives", default=4, show_default=True, help="Hard negatives used per example.")
@click.option("--skip-hard", default=0, show_default=True,
              help="Mined negatives skipped from the top (the likeliest unlabelled positives).")
@click.option("--random-negatives", default=0, show_default=True,
              help="Other examples' positives added per example as easy negatives.")
@click.option("--max-steps", default=-1, show_default=True, help="Stop after N optimizer steps (> 0).")
@click.option("--mode", "modes", help="Only examples of these query modes (comma-separated).")
@click.option("--save-steps", default=100, show_default=True, help="Checkpoint every N steps (a rerun resumes from the last).")
@handle_errors
def reranker(profile, config_file, index_name, data_file, base, name, loss, epochs, batch_size, learning_rate, max_length, negatives, skip_hard, random_negatives, max_steps, modes, save_steps):
    """Train a cross-encoder reranker (resumes an interrupted run of the same name)."""
    from local_rag.train.reranker import RerankerTraining, train_reranker

    settings = load(profile, config_file, index_name)
    examples, info = _examples(data_file, modes)
    cfg = RerankerTraining(loss=loss, epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
                           max_length=max_length, negatives=negatives, skip_hard=skip_hard,
                           random_negatives=random_negatives, max_steps=max_steps, save_steps=save_steps)
    _report(name, train_reranker(examples, base, name, settings.models_dir, cfg, info))


@train.command()
@settings_options
@click.option("--data", "data_file", required=True, type=click.Path(dir_okay=False), help="Examples JSONL (`train data`).")
@click.option("--base", default="all-MiniLM-L6-v2", show_default=True, help="Base model: a models/ name or a folder.")
@click.option("--name", callback=model_name, required=True, help="Name of the trained model under models/.")
@click.option("--loss", default="mnrl", type=click.Choice(["mnrl", "cmnrl"]), show_default=True)
@click.option("--epochs", default=1.0, show_default=True)
@click.option("--batch-size", default=32, show_default=True)
@click.option("--lr", "learning_rate", default=2e-5, show_default=True)
@click.option("--max-length", default=256, show_default=True)
@click.option("--negatives", default=1, show_default=True, help="Hard negatives per query.")
@click.option("--max-steps", default=-1, show_default=True, help="Stop after N optimizer steps (> 0).")
@click.option("--mode", "modes", help="Only examples of these query modes (comma-separated).")
@handle_errors
def embedder(profile, config_file, index_name, data_file, base, name, loss, epochs, batch_size, learning_rate, max_length, negatives, max_steps, modes):
    """Fine-tune the bi-encoder (resumes an interrupted run of the same name); indexes need rebuilding with it."""
    from local_rag.train.embedder import EmbedderTraining, train_embedder

    settings = load(profile, config_file, index_name)
    examples, info = _examples(data_file, modes)
    cfg = EmbedderTraining(loss=loss, epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
                           max_length=max_length, negatives=negatives, max_steps=max_steps)
    _report(name, train_embedder(examples, base, name, settings.models_dir, cfg, info))


@train.command()
@settings_options
@click.option("--name", callback=model_name, help="Name of the adapted model under models/ (default <index>-adapted).")
@click.option("--work", "work_dir", type=click.Path(file_okay=False), help="Work folder (default runs/adapt/<index>, "
              "under the user data directory outside a checkout): "
              "LLM cache, queries, examples, report.json, adapted.yaml. A rerun resumes there.")
@click.option("--passages", default=200, show_default=True, help="Chunks the LLM writes queries for (~3-6 s each on 2 cores).")
@click.option("--kinds", default="question,follow_up", show_default=True, help="Query kinds: question, follow_up.")
@click.option("--folds", default=5, show_default=True, type=click.IntRange(min=0),
              help="Cross-validate over the documents: every written query is measured by a model trained without its "
              "document (one fine-tune per fold, then the kept model on all). 0: hold out a share instead (--holdout).")
@click.option("--holdout", type=float, help="With --folds 0: share of the documents held out for the check [0.2].")
@click.option("--epochs", default=1.0, show_default=True)
@click.option("--loss", default="auto", show_default=True, type=click.Choice(["auto", "mnrl", "cmnrl"]),
              help="mnrl: fastest, ~8-9 GB of memory at batch 32; cmnrl: the same objective in mini-batches, ~3 GB, "
              "slower; auto: cmnrl on a machine with less than 16 GiB.")
@click.option("--batch-size", default=32, show_default=True)
@click.option("--max-steps", default=-1, show_default=True, help="Stop training after N optimizer steps (> 0).")
@click.option("--margin", default=0.01, show_default=True, help="Held-out MRR@10 gain needed to keep the model.")
@click.option("--min-heldout", default=20, show_default=True, help="Fewer held-out queries than this: not kept.")
@click.option("--interval/--no-interval", default=True, show_default=True,
              help="Keep only when the gain's 95% interval (paired bootstrap over the held-out queries) lies above zero.")
@click.option("--json", "as_json", is_flag=True, help="Print report.json instead of the table.")
@handle_errors
def adapt(profile, config_file, index_name, name, work_dir, passages, kinds, folds, holdout, epochs, loss, batch_size,
          max_steps, margin, min_heldout, interval, as_json):
    """Adapt the retriever to the index's own documents, no labels, no network: the LLM writes queries for its
    chunks, the embedder is fine-tuned on them, and the model is kept only when it finds held-out documents' chunks
    better (cross-validated over the documents): then ask, chat, search and serve on the index use it
    (indexes/<index>.adapted.yaml). Resumable; see docs/training.md."""
    from local_rag.paths import default_runs_dir
    from local_rag.train.adapt import FEW_STEPS, AdaptConfig, table
    from local_rag.train.adapt import adapt as run_adapt

    if holdout is not None and folds:
        raise BadInputError("--holdout is for --folds 0 (one held-out share of the documents); with --folds N every "
                            "document's queries are held out once")
    settings = load(profile, config_file, index_name, shaped=True)
    name = name or f"{settings.index}-adapted"
    work = Path(work_dir) if work_dir else default_runs_dir() / "adapt" / settings.index
    cfg = AdaptConfig(passages=passages, kinds=tuple(split_csv((kinds,)) or []), folds=folds,
                      holdout=0.2 if holdout is None else holdout, epochs=epochs, loss=loss,
                      batch_size=batch_size, max_steps=max_steps, margin=margin, min_heldout=min_heldout,
                      interval=interval)
    report = run_adapt(settings, name, work, cfg, progress=not as_json)
    if as_json:
        click.echo((work / "report.json").read_text(encoding="utf-8"), nl=False)
        return
    synth, training = report.synth, report.training
    steps, plural = training["steps"], "s" * (training["steps"] != 1)
    measured = (f"all {report.rows['first stage']['queries']} measured by cross-validation" if report.folds
                 else f"{synth['heldout_queries']} held out")
    click.echo(f"{synth['kept']} of {synth['kept'] + synth['dropped']} written queries kept for training, "
               f"{measured} ({report.seconds['synth']} s); {report.model} "
               + ("already trained on the same data" if training.get("repeated") else
                  f"trained in {training['train_seconds']} s ({steps} step{plural} of {training['loss']}, final loss "
                  f"{training['final_loss']})"))
    click.echo(table(report))
    if report.kept:
        click.echo(f"kept: {report.reason}.\nIndex {report.index} now answers with it in ask, chat, search and serve "
                   f"({report.adaptation_file}; --no-adaptation leaves it out); elsewhere: --config {report.settings_file}")
    else:
        few = (f" ({synth['kept']} kept queries made {steps} training step{plural} at batch {cfg.batch_size}: too "
               "few to move the model much; write more with --passages)"
               if (steps or 0) < FEW_STEPS else "")
        click.echo(f"not kept: {report.reason}{few}. The index answers as before; the model stays in "
                   f"{settings.models_dir / report.model} for your own tries.")


@train.command()
@settings_options
@click.option("--name", callback=model_name, required=True, help="Name of the fine-tuned GGUF under models/ (then llm.model: <name>).")
@click.option("--base", help="Base GGUF or transformers folder (default: llm.model of the settings).")
@click.option("--work", "work_dir", type=click.Path(file_okay=False),
              help="Work folder (default runs/generator/<name>): examples.jsonl, checkpoints, merged model. A rerun resumes.")
@click.option("--split", default="train", type=click.Choice(["train", "test"]), show_default=True)
@click.option("--limit", default=240, show_default=True, type=click.IntRange(min=0), help="Tasks to learn from (0 = all of the split), stratified.")
@click.option("--hold-out", default=20, show_default=True, type=click.IntRange(min=0),
              help="Leave out the tasks `eval generation --split <split> --limit N` measures.")
@click.option("--min-support", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="Drop answers whose content words the evidence holds less than this share of.")
@click.option("--cited-only", "keep_cited", is_flag=True,
              help="Keep only the reference sentences the evidence supports (those given a citation); drop answers left empty.")
@click.option("--index-prefix", default="mtrag-", show_default=True, help="Index of a domain = <prefix><domain>.")
@click.option("--llm-cache", default="runs/llm-cache.jsonl", show_default=True, type=click.Path(dir_okay=False),
              help="Rewrite cache shared with `eval`.")
@click.option("--epochs", default=1.0, show_default=True)
@click.option("--lr", "learning_rate", default=2e-4, show_default=True)
@click.option("--rank", default=16, show_default=True, help="LoRA rank.")
@click.option("--grad-accum", default=4, show_default=True, help="Examples per optimizer step.")
@click.option("--top-layers", default=0, show_default=True, help="LoRA on the last N decoder layers only (0 = all; less work).")
@click.option("--max-steps", default=-1, show_default=True, help="Stop after N optimizer steps (> 0).")
@click.option("--converter", envvar="LLAMA_CPP_CONVERTER", type=click.Path(exists=True, dir_okay=False),
              help="llama.cpp's convert_hf_to_gguf.py (or $LLAMA_CPP_CONVERTER); without it the merged transformers "
                   "folder is left for you to convert.")
@click.option("--qtype", default="Q4_K_M", show_default=True, help="llama.cpp quantization type of the GGUF.")
@handle_errors
def generator(profile, config_file, index_name, name, base, work_dir, split, limit, hold_out, min_support, keep_cited, index_prefix,
              llm_cache, epochs, learning_rate, rank, grad_accum, top_layers, max_steps, converter, qtype):
    """Fine-tune the generator (LoRA) on the MTRAG split's reference answers, as the pipeline prompts it, and import
    it as a GGUF under models/. Resumable; see docs/training.md."""
    from local_rag.modelstore.gguf_check import resolve_gguf
    from local_rag.modelstore.importer import import_path
    from local_rag.train.generator import (
        GeneratorTraining,
        cited_only,
        quantize_type,
        read_examples,
        split_tasks,
        to_gguf,
        train_generator,
        write_examples,
    )

    if converter:
        quantize_type(qtype)  # a bad name fails now, not after the training
    settings = load(profile, config_file, index_name)
    work = Path(work_dir) if work_dir else Path("runs") / "generator" / name
    given = Path(base).expanduser() if base else None
    path = given if given is not None and (given / "config.json").is_file() else \
        resolve_gguf(base or settings.llm.model, settings.models_dir)  # a transformers folder, or the GGUF to load
    # checked before the examples are made (retrieval and rewrites of every task), not after
    config = GeneratorTraining(model=str(path), out=str(work), epochs=epochs, learning_rate=learning_rate, rank=rank,
                               grad_accum=grad_accum, top_layers=top_layers, max_steps=max_steps)
    tasks = split_tasks(split, limit, hold_out)
    new = write_examples(work / "examples.jsonl", tasks, settings, index_prefix, llm_cache)
    examples = [e for e in read_examples(work / "examples.jsonl") if e.support >= min_support]
    if keep_cited:
        examples = [c for e in examples if (c := cited_only(e)) is not None]
    click.echo(f"{len(examples)} examples ({new} new) in {work / 'examples.jsonl'}")
    folder = train_generator(config, examples)
    if not converter:
        click.echo(f"merged model in {folder}; convert it with llama.cpp's convert_hf_to_gguf.py (--converter)")
        return
    gguf = to_gguf(folder, work / f"{name}.gguf", converter, qtype)
    entry = import_path(gguf, settings.models_dir, name=name)
    click.echo(f"imported {entry.name}; use it with llm.model: {entry.name} (e.g. LOCAL_RAG_LLM__MODEL={entry.name})")


def _examples(data_file: str, modes: str | None) -> tuple[list[Any], dict[str, Any]]:
    from local_rag.train.data import file_digest, read_examples

    examples = read_examples(data_file)
    if modes:
        wanted = set(split_csv((modes,)) or [])
        examples = [e for e in examples if e.mode in wanted]
    return examples, {"file": str(data_file), "sha256": file_digest(data_file), "modes": modes}


def _report(name: str, folder: Path) -> None:
    record = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    click.echo(f"trained {name} in {record['train_seconds']} s ({record['steps']} steps, final loss "
               f"{record['final_loss']}, peak RSS {record['peak_rss_mb']} MB): {folder}")


@train.command()
@click.option("--data", "data_file", required=True, type=click.Path(dir_okay=False), help="Examples JSONL (`train data`).")
@click.option("--negatives", default=3, show_default=True, type=click.IntRange(min=1), help="Top mined negatives compared with the gold passage.")
@click.option("--skip-hard", default=0, show_default=True, type=click.IntRange(min=0), help="Mined negatives skipped from the top first.")
@handle_errors
def inspect(data_file, negatives, skip_hard):
    """Query-word overlap of gold passages against mined negatives (a shortcut check before training a reranker)."""
    from local_rag.train.data import read_examples, term_overlap

    examples = [dataclasses.replace(ex, negatives=ex.negatives[skip_hard:]) for ex in read_examples(data_file)]
    click.echo(json.dumps(term_overlap(examples, negatives)))


@train.command()
@settings_options
@click.option("--reranker", "model", required=True, help="Reranker model: a models/ name or a folder.")
@click.option("--backend", default="sentence-transformers", type=click.Choice(["sentence-transformers", "onnx", "bi-encoder"]), show_default=True)
@click.option("--counts", default="10,20,50", show_default=True, help="Candidate counts to time.")
@click.option("--queries", default=30, show_default=True, type=click.IntRange(min=1), help="Test-split queries timed per count.")
@click.option("--max-length", type=int, help="Tokens per pair (default reranker.max_length).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), help="Write the figures as JSON here.")
@handle_errors
def latency(profile, config_file, index_name, model, backend, counts, queries, max_length, out_file):
    """Reranking latency per candidate count (p50/p95) on MTRAG test-split queries and pool passages."""
    from local_rag.mtrag import default_mtrag_dir
    from local_rag.rerank import load_reranker
    from local_rag.rerank.latency import reranker_latency
    from local_rag.train.measure import sample_texts

    sizes = positive_ints("--counts", counts)
    settings = load(profile, config_file, index_name, **{"reranker.model": model, "reranker.backend": backend,
                                                         "reranker.max_length": max_length})
    reranker = load_reranker(settings.reranker, settings.models_dir)
    qs, passages = sample_texts(default_mtrag_dir(), queries, max(sizes))
    figures = reranker_latency(reranker, qs, passages, sizes)
    figures |= {"model": model, "backend": backend, "max_length": settings.reranker.max_length,
                "batch_size": settings.reranker.batch_size}
    if out_file:
        Path(out_file).parent.mkdir(parents=True, exist_ok=True)
        Path(out_file).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    click.echo(json.dumps(figures, indent=2))


@train.command()
@settings_options
@click.option("--split", required=True, type=click.Choice(["train", "test"]))
@click.option("--llm-cache", type=click.Path(dir_okay=False), help="Rewrite cache (default runs/llm-cache.jsonl).")
@handle_errors
def rewrites(profile, config_file, index_name, split, llm_cache):
    """Cache the system's own standalone rewrite of every task of a split (resumable: cached ones are skipped)."""
    from tqdm import tqdm

    from local_rag.evaluation.splits import load_split
    from local_rag.llm import load_llm
    from local_rag.llm.pipeline import LLMQueries, conversations_by_id
    from local_rag.mtrag import default_mtrag_dir
    from local_rag.subset import conversation_of

    settings = load(profile, config_file, index_name)
    mtrag = default_mtrag_dir()
    keep = load_split(mtrag, split)
    conversations = conversations_by_id(mtrag / "generation_tasks" / "mtrag_tasks.jsonl")
    llm = load_llm(settings.llm, settings.models_dir)
    queries = LLMQueries(llm, settings, ["rewrite"], llm_cache or Path("runs") / "llm-cache.jsonl")
    todo = [c for task_id, c in sorted(conversations.items()) if conversation_of(task_id) in keep]
    for conversation in tqdm(todo, desc=f"rewrites {split}", unit="task"):
        queries(conversation)
    click.echo(f"{len(todo)} rewrites of the {split} split in {queries.cache_path}")


@train.command()
@settings_options
@click.option("--split", default="test", type=click.Choice(["train", "test"]), show_default=True)
@click.option("--domains", default="clapnq,cloud,fiqa", show_default=True)
@click.option("--mode", default="lastturn", type=click.Choice(["lastturn", "own"]), show_default=True,
              help="own: the cached own rewrite (--llm-cache), the last turn where none is cached.")
@click.option("--depths", default="5,10,20,50,100", show_default=True)
@click.option("--index-prefix", default="mtrag-", show_default=True)
@click.option("--llm-cache", type=click.Path(dir_okay=False), help="Rewrite cache for --mode own.")
@handle_errors
def ceiling(profile, config_file, index_name, split, domains, mode, depths, index_prefix, llm_cache):
    """First-stage recall at several depths on an MTRAG split: what a reranker of the top N can reach at best."""
    from local_rag.evaluation.retrieval import check_domains
    from local_rag.mtrag import default_mtrag_dir
    from local_rag.records import Query
    from local_rag.retrieve.stack import open_retriever
    from local_rag.train.data import mtrag_tasks
    from local_rag.train.measure import recall_at_depths

    settings = load(profile, config_file, index_name)
    sizes = positive_ints("--depths", depths)
    settings.retrieval.top_k = max(sizes)
    result, embedder, all_hits, all_gold = {}, None, [], []
    for domain in check_domains(default_mtrag_dir() / "retrieval_tasks", split_csv((domains,)) or [], settings.indexes_dir,
                                index_prefix):
        modes = ["lastturn", "own"] if mode == "own" else ["lastturn"]
        tasks, qrels = mtrag_tasks(default_mtrag_dir(), split, domain, modes, llm_cache, settings.llm.model)
        settings.index = f"{index_prefix}{domain}"
        retriever = open_retriever(settings, embedder)
        embedder = next((r.embedder for r in retriever.retrievers.values() if hasattr(r, "embedder")), embedder)
        hits, gold = [], []
        for task_id, _, texts in tasks:
            if task_id in qrels:
                text = texts.get("own") or texts["lastturn"]
                hits.append([h.passage_id for h in retriever.search([Query(text, "rewrite")], top_k=max(sizes))])
                gold.append({p for p, r in qrels[task_id].items() if r > 0})
        result[domain] = recall_at_depths(hits, gold, sizes) | {"queries": len(hits)}
        all_hits += hits
        all_gold += gold
    result["all"] = recall_at_depths(all_hits, all_gold, sizes) | {"queries": len(all_hits)}
    click.echo(json.dumps(result, indent=2))


@train.command()
@settings_options
@click.option("--name", callback=model_name, default="decider", show_default=True, help="Model name in models/manifest.json.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default="docs/benchmarks/decider",
              show_default=True, help="Where report.json, report.md, confusion.png and predictions.jsonl go.")
@click.option("--index-prefix", default="mtrag-", show_default=True, help="MTRAG tasks retrieve from <prefix><domain>.")
@click.option("--dev-index-prefix", default="i24-mtrag-", show_default=True,
              help="MTRAG-UN tasks retrieve from <prefix><domain> (the pool plus mtragun-dev/corpora/extra).")
@click.option("--synthetic", default=150, show_default=True, type=click.IntRange(min=0), help="Synthetic underspecified turns ('this <thing>').")
@click.option("--synthetic-the", default=0, show_default=True, type=click.IntRange(min=0),
              help="More synthetic underspecified turns, a name replaced by 'the <thing>'.")
@click.option("--domains", default="clapnq,cloud,fiqa,govt", show_default=True)
@click.option("--work", type=click.Path(file_okay=False), default="runs/decider", show_default=True,
              help="Cache of retrieved evidence (a rerun retrieves nothing twice).")
@click.option("--variants", default="lr-features,gbm-features,lr-embedding,lr-features+embedding,lr-features-base,gbm-features-base",
              show_default=True, help="Model variants measured (the best is kept; -base: without the ambiguity features).")
@click.option("--cross-encoder", "cross_encoder", is_flag=True,
              help="Rerank the evidence with the cross-encoder and learn from its scores (settings: reranker).")
@click.option("--reranker", "reranker_model", help="Cross-encoder model: a models/ name or a folder (default reranker.model).")
@click.option("--reranker-backend", type=click.Choice(["sentence-transformers", "onnx"]), help="Cross-encoder backend (default reranker.backend).")
@click.option("--decline-budget", default=0.08, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Share of answerable training turns (out of fold) the decline threshold may decline.")
@click.option("--clarify-budget", default=0.04, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Share of answerable training turns (out of fold) the clarify threshold may ask about.")
@click.option("--pick", default="pool", show_default=True, type=click.Choice(["pool", "real"]),
              help="Pick the variant by its cross-validated recall on the whole pool, or on its real turns only "
                   "(the synthetic underspecified turns left out).")
@handle_errors
def decider(profile, config_file, index_name, name, report_dir, index_prefix, dev_index_prefix, synthetic, synthetic_the,
            domains, work, variants, cross_encoder, reranker_model, reranker_backend, decline_budget, clarify_budget, pick):
    """Train the decision stage (answer / decline / clarify) on MTRAG train + MTRAG-UN dev + synthetic turns, pick
    the variant by cross-validation, save it under models/NAME and write its figures."""
    from local_rag.evaluation.retrieval import check_domains
    from local_rag.mtrag import default_mtrag_dir
    from local_rag.train.decider import train_decider

    settings = load(profile, config_file, index_name, **{"reranker.model": reranker_model, "reranker.backend": reranker_backend,
                                                         "pipeline.cross_encoder": True if cross_encoder else None})
    report = train_decider(settings, default_mtrag_dir(), Path(report_dir), name, index_prefix, dev_index_prefix,
                           synthetic, check_domains(default_mtrag_dir() / "retrieval_tasks", split_csv((domains,)) or []), work=Path(work), variants=split_csv((variants,)) or [],
                           synthetic_the=synthetic_the, budgets=(decline_budget, clarify_budget), pick=pick)
    click.echo(json.dumps({k: report[k] for k in ("chosen", "examples", "latency", "cross_encoder", "targets_met")}, indent=2))


@train.command()
@settings_options
@click.option("--name", callback=model_name, default="support", show_default=True, help="Model name in models/manifest.json.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default="docs/benchmarks/support",
              show_default=True, help="Where report.json goes.")
@click.option("--answers", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="Committed answers (answers.jsonl of a generation run) to check, before and after.")
@click.option("--labels", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="Pairs of those answers labelled by hand (JSONL: answers, task_id, sentence_index, cited, supported).")
@click.option("--threshold-labels", type=click.Path(dir_okay=False, exists=True),
              help="Hand-labelled pairs of train-split answers to set the threshold on (default: the reference pairs).")
@click.option("--limit", default=3000, show_default=True, type=click.IntRange(min=1), help="Train-split pairs (a fixed sample; half as many test pairs).")
@click.option("--variants", default="lr,gbm,lr-lexical,gbm-lexical", show_default=True,
              help="Classifiers to measure (comma-separated); -lexical: without the MiniLM cosines.")
@click.option("--work", type=click.Path(file_okay=False), default="runs/support", show_default=True,
              help="Cache of the pairs' features (a rerun embeds nothing).")
@handle_errors
def support(profile, config_file, index_name, name, report_dir, answers, labels, threshold_labels, limit, variants, work):
    """Train the support classifier (is an answer sentence supported by a passage?) and write its figures."""
    from local_rag.mtrag import default_mtrag_dir
    from local_rag.train.support import train_support

    settings = load(profile, config_file, index_name)
    report = train_support(settings, default_mtrag_dir(), Path(report_dir), name, [Path(a) for a in answers], limit,
                           split_csv((variants,)) or [], [Path(a) for a in labels],
                           Path(threshold_labels) if threshold_labels else None, Path(work))
    click.echo(json.dumps({k: report[k] for k in report if k in ("kept", "threshold", "pairs", "wall_s")}, indent=2))


@train.command(name="draft-gate")
@settings_options
@click.option("--answers", multiple=True, required=True, type=click.Path(dir_okay=False, exists=True),
              help="Generated answers to learn from (predictions.jsonl of `eval generation --setting rag`); repeatable.")
@click.option("--decisions", type=click.Path(dir_okay=False, exists=True),
              help="The decision stage's P(decline) for those tasks (a decider's predictions.jsonl, out of fold).")
@click.option("--features", default=",".join(("decider", "weak_share", "weak_mean", "weak_max", "weak_min")),
              show_default=True, help="Gate features (comma-separated); without 'decider' the gate needs no trained decider.")
@click.option("--budget", default=0.10, show_default=True, type=click.FloatRange(0.0, 0.5),
              help="Share of answerable drafts the threshold may decline.")
@click.option("--test-answers", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="Answers to measure the fitted gate on (never learned from).")
@click.option("--name", callback=model_name, default="draft-gate", show_default=True, help="Model name in models/manifest.json.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), help="Where report.json goes.")
@handle_errors
def draft_gate(profile, config_file, index_name, answers, decisions, features, budget, test_answers, name, report_dir):
    """Train the draft gate: after generation, decline a draft its passages do not support (CV by conversation)."""
    import shlex
    import sys

    from local_rag.decide.support import load_support_checker
    from local_rag.train.draft import train_draft_gate

    settings = load(profile, config_file, index_name)
    checker = load_support_checker(settings)
    if checker is None:
        raise BadInputError(f"no trained support model {settings.support.model!r}: the gate reads it; build one with "
                            "`local-rag train support`")
    report = train_draft_gate(checker, [Path(a) for a in answers], Path(decisions) if decisions else None,
                              Path(settings.models_dir) / name, Path(report_dir) if report_dir else None,
                              Path(settings.models_dir), split_csv((features,)) or [], budget,
                              [Path(a) for a in test_answers], command=shlex.join(["local-rag", *sys.argv[1:]]))
    click.echo(json.dumps({k: report[k] for k in ("examples", "threshold", "cv", "test") if k in report}, indent=2))


@train.command()
@settings_options
@click.option("--name", callback=model_name, required=True, help="Model name in models/manifest.json (then fusion.method: learned, fusion.model: NAME).")
@click.option("--split", default="train", type=click.Choice(["train", "test"]), show_default=True,
              help="The MTRAG split learned from (train: figures are then reported on test).")
@click.option("--domains", default="clapnq,cloud,fiqa,govt", show_default=True)
@click.option("--mode", "modes", default="lastturn,lasttwo,lastanswer", show_default=True,
              help="Query modes whose lists the model reads: lastturn, lasttwo, lastanswer, questions; rewrite (own rewrites from --llm-cache).")
@click.option("--depth", default=50, show_default=True, type=click.IntRange(min=1), help="Candidates taken from each list.")
@click.option("--index-prefix", default="mtrag-", show_default=True, help="Index of a domain = <prefix><domain>.")
@click.option("--llm-cache", type=click.Path(dir_okay=False), help="Cache of the system's own rewrites, for mode rewrite.")
@click.option("--work", type=click.Path(file_okay=False), default="runs/fusion", show_default=True,
              help="Cache of the retrieved lists (a rerun retrieves nothing twice).")
@handle_errors
def fusion(profile, config_file, index_name, name, split, domains, modes, depth, index_prefix, llm_cache, work):
    """Learn how much each ranked list is worth (a logistic regression over ranks and scores per list, the
    regularisation picked by cross-validation by conversation) and save it under models/NAME."""
    from tqdm import tqdm

    from local_rag.evaluation.retrieval import check_domains
    from local_rag.mtrag import default_mtrag_dir
    from local_rag.train.data import own_rewrites
    from local_rag.train.fusion import train_fusion

    settings = load(profile, config_file, index_name)
    domain_list = check_domains(default_mtrag_dir() / "retrieval_tasks", split_csv((domains,)) or [], settings.indexes_dir,
                                index_prefix)
    mode_list = split_csv((modes,)) or []
    own = own_rewrites(llm_cache, settings.llm.model) if "rewrite" in mode_list else {}
    if "rewrite" in mode_list and not own:
        raise BadInputError(f"mode rewrite needs the own rewrites of the {split} split: `local-rag train rewrites --split {split} --llm-cache FILE`")
    report = train_fusion(settings, default_mtrag_dir(), name, domain_list, mode_list, index_prefix, depth,
                          own, Path(work), split, progress=lambda it: tqdm(list(it), desc="retrieving lists", unit="batch"))
    click.echo(json.dumps(report, indent=2))

"""``local-rag eval generation``: MTRAG Tasks B (``reference``) and C (``rag``), scored offline.

Scores an official-shape predictions file (or generates one with the pipeline: gold passages for ``reference``, the
full pipeline over ``<index-prefix><domain>`` for ``rag``), appending each scored
task to ``<out>/scored.jsonl`` as it finishes (a rerun continues where it stopped), then writes ``scores.json``,
``scores.md`` and ``scores_by_{domain,answerability,turn}.png``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from local_rag.cli.main import handle_errors, load, settings_options


@click.command(name="generation")
@settings_options
@click.option("--tasks", "tasks_file", type=click.Path(dir_okay=False),
              help="Generation tasks jsonl (targets, answerability). Default: MTRAG generation_tasks/mtrag_tasks.jsonl "
                   "when generating; when scoring, the predictions' own task fields unless given.")
@click.option("--setting", type=click.Choice(["reference", "rag"]), required=True,
              help="reference = Task B (gold passages); rag = Task C (retrieved passages).")
@click.option("--predictions", "predictions_file", type=click.Path(dir_okay=False),
              help="Predictions jsonl in the official shape to score. Without it, predictions are generated with the "
                   "pipeline into <out>/predictions.jsonl.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Output folder (default: runs/gen-<setting>-<name>).")
@click.option("--index-prefix", default="mtrag-", show_default=True, help="rag: index of a domain = <prefix><domain> (unless --index).")
@click.option("--prompt", type=click.Choice(["answer", "answer_plain"]), help="Generation prompt (default generate.prompt; answer_plain = baseline without role separation and IDK rules).")
@click.option("--llm-cache", type=click.Path(dir_okay=False),
              help="rag: JSONL cache of query rewrites by task id, shared with `eval retrieval` and other runs "
                   "(default: runs/llm-cache.jsonl).")
@click.option("--split", type=click.Choice(["train", "test"]), help="Only the tasks of this MTRAG split's conversations (<mtrag>/splits/).")
@click.option("--limit", type=click.IntRange(min=1), help="A fixed subset of N tasks, stratified by domain and answerability.")
@click.option("--mode", "answer_mode", type=click.Choice(["pipeline", "agentic"]),
              help="Answering mode when generating (default pipeline.mode): agentic = the LLM searches (ChatR1).")
@click.option("--judge-model", help="Judge LLM (a models/manifest.json name or .gguf path); default gen_eval.judge.model.")
@click.option("--idk-judge", type=click.Choice(["rules", "llm"]), help="IDK detection (default gen_eval.idk_judge).")
@click.option("--no-llm-judges", is_flag=True, help="Skip RL_F and RB_llm: RB_alg and the IDK judge only.")
@click.option("--bertscore-model", help="BERTScore encoder: auto, a manifest name or a folder (default gen_eval.bertscore_model).")
@click.option("--reuse", "reuse_dir", type=click.Path(file_okay=False, exists=True),
              help="A finished run folder scored with the same models and rules: tasks whose answer and contexts are "
                   "the same there take their scores from it (no judge call), e.g. after `eval recheck`.")
@click.option("--strict", is_flag=True, help="Exit with an error when the predictions break the official format rules.")
@click.option("--no-charts", is_flag=True, help="Skip the PNG charts.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@handle_errors
def generation(profile, config_file, index_name, tasks_file, setting, predictions_file, out_dir, index_prefix, prompt, llm_cache, split, limit, answer_mode, judge_model,
               idk_judge, no_llm_judges, bertscore_model, reuse_dir, strict, no_charts, as_json):
    """Score MTRAG generation predictions: RB_alg, RL_F, RB_llm, IDK conditioning, harmonic mean."""
    from local_rag.errors import BadInputError
    from local_rag.evaluation.generation.official import check_predictions, read_records, validate_records
    from local_rag.evaluation.generation.report import markdown, summarize, write_reports
    from local_rag.evaluation.generation.runner import (
        generate_predictions,
        merge_predictions,
        pipeline_generator,
        reusable_scores,
        score_predictions,
        stratified_subset,
    )
    from local_rag.evaluation.generation.scorer import GenerationScorer
    from local_rag.evaluation.lock import run_lock
    from local_rag.mtrag import default_mtrag_dir

    settings = load(profile, config_file, index_name, **{
        "gen_eval.judge.model": judge_model, "gen_eval.idk_judge": idk_judge,
        "gen_eval.llm_judges": False if no_llm_judges else None, "gen_eval.bertscore_model": bertscore_model,
        "generate.prompt": prompt, "pipeline.mode": answer_mode,
    })
    name = Path(predictions_file).stem if predictions_file else f"{settings.profile}-{settings.generate.prompt}"
    if not predictions_file and settings.pipeline.mode == "agentic":
        name += "-agentic"
    out = Path(out_dir or Path("runs") / f"gen-{setting}-{name}")
    with run_lock(out):  # one writer per run folder
        tasks = None
        if tasks_file or not predictions_file:
            tasks = read_records(tasks_file or default_mtrag_dir() / "generation_tasks" / "mtrag_tasks.jsonl")
        split_ids = None
        if split:
            from local_rag.evaluation.splits import load_split, task_in_split

            split_ids = load_split(default_mtrag_dir(), split)
            tasks = [t for t in tasks if task_in_split(t, split_ids)] if tasks is not None else None
        if predictions_file:
            predictions = check_predictions(read_records(predictions_file), predictions_file)  # what scoring reads
            errors = validate_records(predictions, setting, [str(t["task_id"]) for t in tasks] if tasks else None)
            if errors:
                message = f"{len(errors)} official format problem(s) in {predictions_file}: " + "; ".join(errors[:5])
                if strict:
                    raise BadInputError(message)
                click.echo(f"warning: {message}", err=True)
            records = predictions
            if split_ids is not None:
                records = [r for r in records if task_in_split(r, split_ids)]
            if tasks is not None:
                records, missing = merge_predictions(tasks, predictions, setting)
                if missing:
                    click.echo(f"warning: {len(missing)} task(s) have no prediction; they are not scored", err=True)
        else:
            generate = pipeline_generator(settings, setting, index_prefix,
                                          rewrite_cache=Path(llm_cache or Path("runs") / "llm-cache.jsonl"))
            chosen = stratified_subset(tasks or [], limit) if limit else tasks or []
            records = generate_predictions(chosen, generate, setting, out / "predictions.jsonl", progress=not as_json)
        if limit:
            records = stratified_subset(records, limit)
        scorer = GenerationScorer.from_settings(settings)
        reuse = None
        if reuse_dir:
            if scorer.config.llm_judges or scorer.config.idk_judge == "llm":
                scorer.llm  # noqa: B018 - loaded first, so that the judge is named as the earlier run's report names it
            reuse = reusable_scores(Path(reuse_dir), scorer.describe())
        scored = score_predictions(records, scorer, out / "scored.jsonl", progress=not as_json, reuse=reuse)
        info = scorer.describe() | {"reused_from": reuse_dir, "setting": setting, "predictions": str(predictions_file or out / "predictions.jsonl"),
                                    "tasks_file": str(tasks_file) if tasks_file else None, "limit": limit, "split": split,
                                    "profile": settings.profile}
        if not predictions_file:  # generated here: say by what (a scored file's generator is unknown)
            info |= {"prompt": settings.generate.prompt, "generator": settings.llm.model,
                     "mode": settings.pipeline.mode}
        summary = summarize(scored, info)
        title = f"MTRAG generation scores ({setting}: {name})"
        write_reports(summary, out, title, with_charts=not no_charts)
        click.echo(json.dumps(summary, indent=2) if as_json else markdown(summary, title) + f"\nwritten to {out}/")


@click.command(name="recheck")
@settings_options
@click.option("--predictions", "predictions_file", type=click.Path(dir_okay=False, exists=True), required=True,
              help="Committed predictions (official shape, with contexts), e.g. <run>/predictions.jsonl.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), required=True,
              help="Where the rechecked predictions go (a new file; the input is not changed).")
@click.option("--support", "support_mode", type=click.Choice(["off", "flag", "drop"]),
              help="The support check (default support.mode): flag moves citations and counts unsupported "
                   "sentences; drop also removes them.")
@click.option("--decisions", "decisions_file", type=click.Path(dir_okay=False, exists=True),
              help="A decider's choices (JSONL with task_id and kind, e.g. the predictions.jsonl of "
                   "`local-rag train decider --report`): declines, clarifications and small talk replace the answer.")
@click.option("--draft-gate", "draft_gate", help="A draft gate (`local-rag train draft-gate`: a models/ name or a folder) "
              "that declines drafts their passages do not support; it reads the decider's P(decline) from --decisions.")
@handle_errors
def recheck(profile, config_file, index_name, predictions_file, out_file, support_mode, decisions_file, draft_gate):
    """Apply the stages after generation (decisions, draft gate, support check) to committed answers, without the
    generator."""
    from local_rag.errors import BadInputError
    from local_rag.evaluation.generation.official import check_predictions, read_records, write_records
    from local_rag.evaluation.generation.recheck import RecheckTally, read_decision_file, recheck_record

    settings = load(profile, config_file, index_name, **{"support.mode": support_mode})
    out = Path(out_file)
    if out.resolve() == Path(predictions_file).resolve():
        raise BadInputError("--out must be another file than --predictions (the committed answers are kept)")
    records = check_predictions(read_records(predictions_file), predictions_file)
    checker = None
    if settings.support.mode != "off":
        from local_rag.decide.support import load_support_checker

        checker = load_support_checker(settings)
        if checker is None:
            raise BadInputError(f"no trained support model {settings.support.model!r}; build one with "
                                "`local-rag train support`, or pass --support off")
    gate = None
    if draft_gate:
        from local_rag.decide.draft import read_gate
        from local_rag.decide.support import load_support_checker
        from local_rag.modelstore.manifest import resolve_model

        folder, _ = resolve_model(draft_gate, settings.models_dir, role="draft-gate")
        support = checker or load_support_checker(settings)
        if support is None:
            raise BadInputError(f"the draft gate reads the support model {settings.support.model!r}, which is missing; "
                                "build one with `local-rag train support`")
        gate = read_gate(folder, support, settings.decide.draft_threshold)
        if gate.needs_decider and not decisions_file:
            raise BadInputError("this draft gate reads the decider's P(decline): give --decisions")
    # one pass over the file: the kinds, and the P(decline) a draft gate reads
    decisions, probabilities = read_decision_file(decisions_file, declines=gate is not None) if decisions_file else ({}, {})
    if decisions and not {str(r.get("task_id")) for r in records} & decisions.keys():
        raise BadInputError(f"--decisions: none of the {len(decisions)} tasks of {decisions_file} is among the "
                            f"{len(records)} of {predictions_file} (a decider's choices for other tasks?)")
    declines = probabilities if gate is not None else None
    tally = RecheckTally()
    rows = []
    for record in records:
        rows.append(recheck_record(record, checker=checker, decisions=decisions, settings=settings, gate=gate,
                                   declines=declines))
        tally.add(record["predictions"][0]["text"], rows[-1])
    out.parent.mkdir(parents=True, exist_ok=True)
    write_records(out, rows)
    summary = tally.to_json() | {"support": settings.support.mode, "support_model": settings.support.model,
                                 "decisions": decisions_file, "draft_gate": draft_gate}
    out.with_suffix(".summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    click.echo(json.dumps(summary, indent=2) + f"\nwritten to {out}")


@click.command(name="compare")
@click.argument("run_a", type=click.Path())
@click.argument("run_b", type=click.Path())
@click.option("--resamples", default=2000, show_default=True, type=click.IntRange(min=1), help="Bootstrap resamples.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--domains", help="Only these domains, comma-separated (e.g. clapnq,cloud,fiqa for pool-3).")
@click.option("--tasks-root", type=click.Path(file_okay=False),
              help="Retrieval runs: the folder of <domain>/<domain>_<mode>.jsonl + qrels that scores them (default: "
                   "MTRAG retrieval_tasks).")
@click.option("--generation-tasks", type=click.Path(dir_okay=False),
              help="Retrieval runs: score against the gold contexts of this generation-tasks jsonl (default: the file "
                   "both runs were made from with `eval retrieval --generation-tasks`, if any).")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), help="Also write the comparison as JSON here.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the Markdown table.")
@handle_errors
def compare(run_a, run_b, resamples, seed, domains, tasks_root, generation_tasks, out_file, as_json):
    """Compare two scored runs on what both scored, B − A with a paired-bootstrap 95% interval: generation runs
    (folders of `eval generation`, or their answers.jsonl) by RB_alg, RL_F, RB_llm and harmonic mean; retrieval runs
    (folders of `eval retrieval`) by nDCG@1/3/5/10 and recall@5/10 per query."""
    from local_rag.errors import BadInputError
    from local_rag.evaluation.generation.compare import only_domains, paired_bootstrap, read_scored
    from local_rag.evaluation.retrieval_compare import compare_runs, is_retrieval_run

    a, b = Path(run_a), Path(run_b)
    wanted = [d.strip() for d in domains.split(",") if d.strip()] if domains else None
    retrieval = is_retrieval_run(a), is_retrieval_run(b)
    if retrieval[0] != retrieval[1]:
        kind_a, kind_b = ("a retrieval run" if r else "a generation run" for r in retrieval)
        raise BadInputError(f"{run_a} is {kind_a} and {run_b} {kind_b}: compare two runs of one kind")
    if retrieval[0]:
        result = compare_runs(a, b, Path(tasks_root) if tasks_root else None, wanted, resamples=resamples, seed=seed,
                              generation_tasks=Path(generation_tasks) if generation_tasks else None)
    else:
        given = [name for name, value in (("--tasks-root", tasks_root), ("--generation-tasks", generation_tasks)) if value]
        if given:
            raise BadInputError(f"{' and '.join(given)}: for retrieval runs only; {run_a} and {run_b} are generation runs")
        scored_a, scored_b = read_scored(a), read_scored(b)
        if wanted:
            scored_a, scored_b = only_domains(scored_a, wanted, a), only_domains(scored_b, wanted, b)
        result = paired_bootstrap(scored_a, scored_b, resamples=resamples, seed=seed)
    payload = {"a": str(run_a), "b": str(run_b), **result.to_json()}
    if out_file:
        Path(out_file).parent.mkdir(parents=True, exist_ok=True)
        Path(out_file).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    click.echo(json.dumps(payload, indent=2) if as_json else result.markdown(Path(run_a).name, Path(run_b).name))

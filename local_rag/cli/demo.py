"""``local-rag demo``: index the bundled docs and play a scripted multi-turn conversation through the pipeline."""

from __future__ import annotations

import time

import click

from local_rag.cli.main import handle_errors, load, settings_options


@click.command()
@settings_options
@click.option("--retrieval-only", is_flag=True, help="Show retrieval only (no LLM).")
@handle_errors
def demo(profile, config_file, index_name, retrieval_only):
    """Index local-rag's own documentation (no download) and run a scripted conversation over it: a follow-up
    resolved by rewriting, cited answers, and a question the documents cannot answer."""
    from rich.console import Console
    from rich.markup import escape

    from local_rag.cli.lines import Streamer
    from local_rag.demo import DEMO_INDEX, DEMO_OVERRIDES, SCRIPT, demo_profile, docs_folder, ensure_demo_index
    from local_rag.pipeline import Pipeline
    from local_rag.records import Conversation, Turn
    from local_rag.sources import BASELESS, numbers, source_lines

    console = Console(highlight=False)
    if not profile and not config_file:
        profile = demo_profile()
        if profile == "cpu-test":
            console.print("[yellow]note:[/yellow] only SmolLM2-135M is here: expect weak rewrites and no citations; "
                          "`make demo-model` imports Qwen2.5-Coder-1.5B (profile cpu-qwen)")
    overrides = DEMO_OVERRIDES | ({"pipeline.rewrite": False} if retrieval_only else {})
    settings = load(profile, config_file, index_name or DEMO_INDEX, **overrides)
    console.print(f"[bold]local-rag demo[/bold]  profile={settings.profile}  LLM={settings.llm.model}  "
                  f"embedder={settings.embedder.model}\ncorpus: {docs_folder()}")
    started = time.perf_counter()
    if ensure_demo_index(settings, progress=False):  # no library progress bars in the transcript
        console.print(f"built index {settings.index_dir} in {time.perf_counter() - started:.1f}s")
    pipeline = Pipeline(settings)
    conversation = Conversation([])
    for question in SCRIPT:
        conversation.turns.append(Turn("user", question))
        console.rule()
        console.print(f"[bold cyan]user>[/bold cyan] {escape(question)}")
        if retrieval_only:
            hits = pipeline.retriever.search(pipeline.queries(conversation))
            for i, hit in enumerate(hits[:3], 1):
                console.print(f"  [{i}] {escape(hit.title)} ({hit.passage_id}) {hit.score:.4f}")
            conversation.turns.append(Turn("agent", hits[0].text[:200] if hits else ""))
            continue
        streamer = Streamer("agent> ")
        result = pipeline.answer(conversation, on_token=streamer)
        streamer.finish(result.answer.text, result.answer.kind == "answer")
        if result.answer.kind != "answer":
            console.print(f"  [bold]({result.answer.kind})[/bold]")
        for q in result.queries:
            console.print(f"  [dim]query ({q.mode}): {escape(q.text)}[/dim]")
        heading, lines = source_lines(result.answer)
        if heading:
            console.print(f"  [dim]({heading}:)[/dim]")
        for line in lines:
            mark = f" [yellow]({BASELESS})[/yellow]" if line.baseless else ""
            console.print(f"  [green]source {escape(numbers(line))}[/green] {escape(line.label)}{mark}")
        if result.answer.attributed:
            console.print("  [dim](the model cited nothing: sources found by word overlap with the passages)[/dim]")
        if result.answer.invalid_citations:
            console.print(f"  ({result.answer.invalid_citations} invalid citation(s) removed)")
        timing = ", ".join(f"{k} {v:.2f}s" for k, v in result.timings.items() if "." not in k)
        console.print(f"  [dim]{timing}[/dim]")
        conversation.turns.append(Turn("agent", result.answer.text))

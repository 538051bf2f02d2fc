"""``local-rag demo``: index the bundled docs and run a scripted multi-turn session."""

from __future__ import annotations

import click

from local_rag.cli.main import handle_errors, load, settings_options


@click.command()
@settings_options
@click.option("-k", "--top-k", type=int, default=3, show_default=True)
@handle_errors
def demo(profile, config_file, index_name, top_k):  # type: ignore[no-untyped-def]
    """Index local-rag's own documentation (no download) and run a scripted conversation over it."""
    from rich.console import Console
    from rich.markup import escape

    from local_rag.demo import DEMO_INDEX, SCRIPT, docs_folder, ensure_demo_index
    from local_rag.records import Conversation, Turn
    from local_rag.retrieve.queries import conversation_queries
    from local_rag.retrieve.stack import open_retriever

    console = Console()
    settings = load(profile, config_file, index_name or DEMO_INDEX)
    settings.retrieval.query_modes = ["lastturn", "questions"]
    console.print(f"[bold]local-rag demo[/bold] profile={settings.profile} corpus={docs_folder()}")
    if ensure_demo_index(settings):
        console.print(f"built index {settings.index_dir}")
    retriever = open_retriever(settings)
    conversation = Conversation([])
    for question in SCRIPT:
        conversation.turns.append(Turn("user", question))
        queries = conversation_queries(conversation, settings.retrieval.query_modes)
        hits = retriever.search(queries, top_k=top_k)
        console.rule(f"[bold cyan]user:[/bold cyan] {question}")
        for q in queries:
            console.print(escape(f"  query [{q.mode}]: {q.text!r}"))
        for hit in hits:
            console.print(f"  [{hit.rank}] {hit.passage_id} ({hit.title}) score={hit.score:.4f}")
            console.print(f"      {hit.text[:160].strip()}...".replace("\n", " "))
        conversation.turns.append(Turn("agent", hits[0].text[:200] if hits else ""))
    console.print(f"\n{len(SCRIPT)} turns; timings of the last search: {retriever.last_timings}")

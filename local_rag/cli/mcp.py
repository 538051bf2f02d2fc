"""``local-rag mcp``: the MCP server over standard input and output (docs/server.md, "MCP")."""

from __future__ import annotations

import click

from local_rag.cli.ask import pipeline_settings, stage_options
from local_rag.cli.main import (
    adaptation_option,
    also_list,
    also_option,
    handle_errors,
    only_list,
    only_option,
    settings_options,
)


@click.command()
@settings_options
@stage_options  # as `ask`: the `ask` tool answers with these stages
@adaptation_option
@only_option
@also_option
@handle_errors
def mcp(profile, config_file, index_name, rewrite, cross_encoder, llm_rerank, judge, mode, adaptation, only, also):
    """Serve the index to an assistant over MCP (Model Context Protocol) on standard input and output: tools search,
    ask, documents and read. Started by the host (Claude Desktop or Code, VS Code, Cursor), not by hand."""
    from local_rag.server.mcp_server import build_server, require_mcp

    require_mcp()  # a missing extra before anything loads
    settings = pipeline_settings(profile, config_file, index_name, rewrite, cross_encoder, llm_rerank, judge, mode,
                                 adapted=True, index_adaptation=adaptation,
                                 **{"retrieval.only": only_list(only), "retrieval.also": also_list(also)})
    server = build_server(settings)
    joint = f" with {', '.join(settings.retrieval.also)}" if settings.retrieval.also else ""
    click.echo(f"local-rag mcp: index {settings.index}{joint} on standard input and output (tools: search, ask, "
               "documents, read); the LLM loads at the first ask", err=True)
    server.run(transport="stdio")

"""An MCP server over the index (``local-rag mcp``): the Model Context Protocol, which Claude Desktop and Claude
Code, VS Code, Cursor, Zed and other assistants speak to reach local tools, over standard input and output.

Four tools, all on this machine:

- ``search(query, k, only)``: the passages for a query, best first, each with the place a reader cites it by
  ("Audit (notes:audit.md § Audit)"), in milliseconds: retrieval alone (`Pipeline.passages`), the host's own model
  writes the answer. The one tool most hosts need.
- ``ask(question, only)``: local-rag's own answer, written by the local LLM from the passages, with its citations,
  or its decline or clarifying question (``kind``); the LLM loads at the first ``ask``, seconds a turn on a CPU.
- ``documents(only)``: the documents the index holds (or a scope of them), with their titles.
- ``read(document)``: a document of the indexed folder whole, as local-rag reads it (a note, a mail folder's
  messages, a chat's days, a source file), read again from the folder: what the passages of a search came from.

``only`` takes the patterns of ``--only`` (a file's path in the folder, a folder, ``*.pdf``, words of a title). A
pattern that matches nothing, an empty query, a ``k`` outside 1-50 are tool errors with one line, as the CLI says
them; the server goes on. Nothing but the protocol is written to standard output (logs and progress go to standard
error), as a host reads it.

Example (the host's configuration, e.g. Claude Desktop's ``claude_desktop_config.json``)::

    {"mcpServers": {"notes": {"command": "local-rag", "args": ["mcp", "--index", "notes", "--also", "mail"]}}}
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from local_rag import __version__
from local_rag.errors import LocalRagError, MissingDependencyError
from local_rag.records import Citation, Conversation, Hit, Turn
from local_rag.settings import Settings

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from local_rag.pipeline import Pipeline

__all__ = ["AskResult", "DocumentInfo", "PassageInfo", "build_server", "require_mcp"]

MAX_K = 50
MAX_QUESTION_CHARS = 20_000  # as the chat and server routes cut a turn


class PassageInfo(BaseModel):
    """A passage, as the host's model reads and cites it."""

    citation: str = Field(description="how to cite it: title and place, e.g. 'Audit (notes:audit.md § Audit)'")
    document: str = Field(description="its document: the file's path in the indexed folder (INDEX:path with --also)")
    title: str = ""
    section: str = Field("", description="the heading it falls under")
    page: int = Field(0, description="its page (PDF, slides), 0 when none")
    line: int = Field(0, description="its first line (source code), 0 when none")
    url: str = Field("", description="where to open it: a file:// link (with #page=N for a PDF page)")
    text: str
    score: float = Field(description="local-rag's own ranking score: higher is better, not a 0-1 similarity")


class AskResult(BaseModel):
    """local-rag's answer to a question."""

    answer: str
    kind: str = Field(description="answer, decline (the documents do not say), clarify (a question back) or chitchat")
    citations: list[PassageInfo] = Field(default_factory=list, description="the passages the answer cites, by [n]")


class DocumentText(BaseModel):
    """A document whole, as local-rag reads it from the folder."""

    document: str
    title: str = ""
    text: str = Field(description="its text, a section after another under its heading ('## heading')")
    cut: bool = Field(False, description="true when the text was cut at max_chars")


class DocumentInfo(BaseModel):
    """A document of the index."""

    document: str
    title: str = ""
    chunks: int = 0


def require_mcp() -> type[MCPServer]:
    """The MCP SDK's server class, or `MissingDependencyError` naming the ``mcp`` extra."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:
        raise MissingDependencyError(
            f"{exc.name or 'mcp'} is needed for the MCP server but is not installed (or is older than 2.0). "
            "Install it with: pip install 'local-rag[mcp]'"
        ) from exc
    return MCPServer


def passage_info(hit: Hit, n: int = 0) -> PassageInfo:
    cited = Citation.of(n, hit)
    return PassageInfo(citation=cited.label, document=hit.doc_id, title=hit.title, section=hit.section,
                       page=hit.page, line=hit.line, url=hit.url, text=hit.text, score=round(float(hit.score), 6))


def build_server(settings: Settings, pipeline: Pipeline | None = None, with_ask: bool = True) -> MCPServer:
    """The MCP server (an `mcp.server.mcpserver.MCPServer`) answering with ``pipeline`` (default:
    `make_pipeline(settings)`); its index is opened now, so a missing one fails before the host connects. Without
    ``with_ask`` (``serve --mcp``, whose LLM turns go through the answering queue of /v1/chat/completions), the tools
    are `search`, `documents` and `read`."""
    server_class = require_mcp()
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    if pipeline is None:
        from local_rag.modes import make_pipeline

        pipeline = make_pipeline(settings)
    base_scope = pipeline.scope()  # opens the index: a missing one or a bad --only is said now
    names = ", ".join([settings.index, *settings.retrieval.also])
    server = server_class(
        name="local-rag", title=f"local-rag: {names}", version=__version__,
        instructions=(f"Search the user's own documents (index {names}, on this machine) with `search` and cite "
                      "each passage you use by its `citation`; `ask` has local-rag's own model answer from them."))
    turns = threading.Lock()  # one LLM turn at a time; searches may run beside it
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)

    def scope_of(only: list[str] | None, what: str) -> Any:
        return pipeline.scope(only, what=what) if only else base_scope

    def run(call: Any) -> Any:
        try:
            return call()
        except LocalRagError as exc:  # a pattern naming no document, a missing model: the CLI's one line
            raise ToolError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from exc

    @server.tool(title="Search the documents", annotations=read_only)
    async def search(query: str, k: int = 5, only: list[str] | None = None) -> list[PassageInfo]:
        """The passages of the user's documents for `query`, best first (k of them, 1-50); `only`: patterns of
        documents to search (a file's path in the indexed folder, a folder, '*.pdf', words of a title)."""
        if not query.strip():
            raise ToolError("query is empty: give the words to search for")
        if not 1 <= k <= MAX_K:
            raise ToolError(f"k must be from 1 to {MAX_K}")

        def call() -> list[PassageInfo]:
            hits = pipeline.passages([query[:MAX_QUESTION_CHARS]], k, scope_of(only, "only:"))
            return [passage_info(h) for h in hits]

        return await asyncio.to_thread(run, call)

    async def ask(question: str, only: list[str] | None = None) -> AskResult:
        """local-rag's own answer to `question`, written by its local model from the user's documents, with the
        passages it cites (`kind`: answer, decline when the documents do not say, clarify when the question is
        ambiguous). Slower than `search` (seconds on a CPU)."""
        if not question.strip():
            raise ToolError("question is empty")

        def call() -> AskResult:
            with turns:
                result = pipeline.answer(Conversation([Turn("user", question[:MAX_QUESTION_CHARS])]),
                                         scope=scope_of(only, "only:"))
            by_id = {h.passage_id: h for h in result.passages}
            cited = [passage_info(by_id[c.passage_id], c.n) for c in result.answer.citations if c.passage_id in by_id]
            return AskResult(answer=result.answer.text, kind=result.answer.kind, citations=cited)

        return await asyncio.to_thread(run, call)

    if with_ask:
        server.tool(title="Ask local-rag", annotations=read_only)(ask)

    @server.tool(title="List the documents", annotations=read_only)
    async def documents(only: list[str] | None = None) -> list[DocumentInfo]:
        """The documents of the index (those `only`'s patterns name, when given), with their titles and chunk
        counts."""

        def call() -> list[DocumentInfo]:
            from local_rag.server.documents import served_documents

            return [DocumentInfo(document=d.document, title=d.title, chunks=d.chunks)
                    for d in served_documents(pipeline, scope_of(only, "only:"))]

        return await asyncio.to_thread(run, call)

    @server.tool(title="Read a document whole", annotations=read_only)
    async def read(document: str, max_chars: int = 20_000) -> DocumentText:
        """The whole text of one `document` (its name as `search` or `documents` give it), read again from the
        indexed folder, at most `max_chars` characters (1,000-200,000)."""
        if not 1_000 <= max_chars <= 200_000:
            raise ToolError("max_chars must be from 1,000 to 200,000")
        return await asyncio.to_thread(run, lambda: whole_document(pipeline, document, max_chars))

    return server


def whole_document(pipeline: Pipeline, document: str, max_chars: int) -> DocumentText:
    """``document`` read whole from the folder its index follows (`local_rag.server.documents.whole_text`)."""
    from local_rag.server.documents import whole_text

    found = whole_text(pipeline, document, max_chars)
    return DocumentText(document=found.document, title=found.title, text=found.text, cut=found.cut)

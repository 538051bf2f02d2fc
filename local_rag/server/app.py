"""The FastAPI application: ``POST /v1/chat/completions``, ``POST /v1/embeddings``, ``GET /v1/models``, the vector
store search (``/v1/vector_stores``: `local_rag.server.search`), ``GET /healthz``.

Shaped after llama-cpp-python's server (``llama_cpp/server/app.py``): the settings model builds the app, a bearer
key guards ``/v1``, the model runs in a worker thread and streams as server-sent events. Unlike it, requests are
read by hand (size limit, JSON errors in the OpenAI shape), admission is bounded (429 + ``Retry-After``), and the
answer carries local-rag's citations, passages and per-stage timings in an extra ``local_rag`` field.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from local_rag import __version__
from local_rag.adaptation import in_use
from local_rag.agent.tags import BROKE_OFF
from local_rag.decide.support import revision_note
from local_rag.errors import BadInputError, LocalRagError
from local_rag.records import Conversation, TurnResult
from local_rag.server import protocol
from local_rag.server.cors import OriginGate
from local_rag.server.embeddings import EmbeddingService
from local_rag.server.errors import ApiError, ClientGone, error_body, route_message
from local_rag.server.page import FILES, HEADERS, OFF, page_file
from local_rag.server.search import VectorStores
from local_rag.server.turns import Turn, TurnRunner
from local_rag.settings import Settings

if TYPE_CHECKING:
    from local_rag.pipeline import Pipeline

log = logging.getLogger("local_rag.server")
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def key_refusal(authorization: str, key: str) -> ApiError | None:
    """The 401 for a request whose ``Authorization`` header does not carry the server's bearer ``key``; None when it
    does, or when the server has no key."""
    if not key:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), key.encode()):
        return None
    return ApiError(401, "missing or wrong API key (send 'Authorization: Bearer <key>')", "invalid_api_key",
                    {"WWW-Authenticate": "Bearer"})


class KeyGate:
    """An ASGI app behind the server's bearer key (the MCP route, which is the SDK's app, not a FastAPI route)."""

    def __init__(self, app: Any, key: str) -> None:
        self.app = app
        self.key = key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            sent = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
            if (refused := key_refusal(sent, self.key)) is not None:
                await JSONResponse(refused.body(), refused.status, headers=refused.headers)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def mcp_app(settings: Settings, pipeline: Pipeline) -> Any:
    """The MCP server's streamable HTTP app (``serve --mcp``: `local_rag.server.mcp_server`, search, documents, read;
    asking goes through /v1/chat/completions and its queue). Beyond loopback the SDK's host check is off: the key is
    required there, and the server's own origin gate answers browser pages."""
    from local_rag.origins import is_loopback
    from local_rag.server.mcp_server import build_server

    server = build_server(settings, pipeline, with_ask=False)
    security = None
    if not is_loopback(settings.server.host):
        from mcp.server.transport_security import TransportSecuritySettings

        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, host=settings.server.host,
                                      transport_security=security)


def model_id(settings: Settings) -> str:
    """The model name clients see: ``server.model_name``, else the LLM's name (a .gguf path gives its stem)."""
    name = settings.server.model_name or settings.llm.model
    return Path(name).stem if name.endswith(".gguf") else name


def load_stages(pipeline: Pipeline, settings: Settings) -> None:
    """Load the index, the embedder and the LLM now, so a missing one fails at start-up (exit 3 / 4), not at the
    first request; a pattern of ``serve --only`` or of a collection that matches no document of the index too."""
    for name in ("retriever", "llm"):
        getattr(pipeline, name, None)
    pipeline.scope()
    for collection, patterns in settings.server.collections.items():
        pipeline.scope(patterns, what=f"collection {collection!r}:")
    if settings.pipeline.cross_encoder:
        getattr(pipeline, "reranker", None)


def create_app(settings: Settings, pipeline: Pipeline | None = None, load: bool = True) -> FastAPI:
    """The app answering with ``pipeline`` (default: `make_pipeline(settings)`, its stages loaded now).

    Example:
        >>> app = create_app(load_settings("cpu-test", overrides={"index": "docs"}))  # doctest: +SKIP
        >>> uvicorn.run(app, host="127.0.0.1", port=8000)  # doctest: +SKIP
    """
    if pipeline is None:
        from local_rag.modes import make_pipeline

        pipeline = make_pipeline(settings)
    if load:
        load_stages(pipeline, settings)
        pipeline.warm_later(Conversation([]))  # the first request's prompt prefixes (system text, example)
    cfg = settings.server
    runner = TurnRunner(pipeline, cfg.queue, cfg.retry_after_s, cfg.stream_status)
    model = model_id(settings)
    embeddings = EmbeddingService(settings, pipeline)
    stores = VectorStores(settings, pipeline)
    reranker = settings.reranker.model if settings.pipeline.cross_encoder else None
    adaptation = in_use(settings)  # the re-scorer `train adapt` kept for the index, when the settings apply it
    mcp_http = mcp_app(settings, pipeline) if cfg.mcp else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if mcp_http is not None:
            async with mcp_http.router.lifespan_context(mcp_http):  # the MCP session manager's task group
                yield
        else:
            yield
        runner.stop()
        runner.executor.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(title="local-rag", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    # browser pages: this machine's and those named; with a key, the chat page wherever the server is reached
    app.add_middleware(OriginGate, allowed=cfg.origins, same_origin=bool(cfg.api_key))
    app.state.runner = runner
    app.state.settings = settings

    def check_key(request: Request) -> None:
        if (refused := key_refusal(request.headers.get("authorization", ""), cfg.api_key)) is not None:
            raise refused

    if mcp_http is not None:
        from starlette.routing import Route

        endpoint = mcp_http.routes[0].endpoint  # the Route's ASGI app, as the SDK made it
        app.router.routes.append(Route("/mcp", endpoint=KeyGate(endpoint, cfg.api_key), methods=None))

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(exc.body(), exc.status, headers=exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        message = (route_message(request.method, request.url.path, exc.status_code) if exc.status_code in (404, 405)
                   else str(exc.detail))
        return JSONResponse(error_body(exc.status_code, message, code), exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body(400, f"invalid request: {exc.errors()[:3]}", "invalid_request"), 400)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s", request.url.path)
        return JSONResponse(error_body(500, f"internal error ({type(exc).__name__})", "internal_error"), 500)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"status": "ok", "index": settings.index, **({"also": settings.retrieval.also} if settings.retrieval.also else {}),
                "model": model, "mode": settings.pipeline.mode,
                "profile": settings.profile, "reranker": reranker, "adaptation": adaptation,
                **({"only": settings.retrieval.only} if settings.retrieval.only else {}),
                **({"collections": cfg.collections} if cfg.collections else {}), "turns": runner.status()}

    def page(name: str) -> Response:
        if not cfg.ui:
            raise ApiError(404, OFF, "not_found")
        content = page_file(name)
        return Response(content, media_type=FILES[name], headers=HEADERS)

    @app.get("/", include_in_schema=False)
    async def chat_page() -> Response:
        """The chat page (`local_rag.server.page`)."""
        return page("index.html")

    @app.get("/ui/{name}", include_in_schema=False)
    async def chat_page_file(name: str) -> Response:
        return page(name)

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi(request: Request) -> JSONResponse:
        check_key(request)  # the schema is behind the key like /v1
        return JSONResponse(app.openapi())

    listed = {i: {"id": i, "object": "model", "created": 0, "owned_by": "local-rag"}
              for i in (model, *(protocol.collection_model(model, name) for name in cfg.collections))}

    @app.get("/v1/models")
    async def models(request: Request) -> dict[str, Any]:
        """The model, and one more per collection (``serve --collection``): picking one picks its documents."""
        check_key(request)
        return {"object": "list", "data": list(listed.values())}

    @app.get("/v1/models/{name:path}")
    async def one_model(request: Request, name: str) -> dict[str, Any]:
        """One model (``openai`` SDK ``models.retrieve``; clients that check a configured model exists)."""
        check_key(request)
        if name not in listed:
            raise ApiError(404, f"no model {name!r}: this server answers with {', '.join(map(repr, listed))} (GET "
                           "/v1/models)", "model_not_found")
        return listed[name]

    @app.post("/v1/embeddings")
    async def create_embeddings(request: Request) -> dict[str, Any]:
        check_key(request)
        return await embeddings.handle(await read_body(request, cfg.max_body_bytes), model)

    @app.get("/v1/vector_stores")
    async def vector_stores(request: Request) -> dict[str, Any]:
        """The index, and one store per collection (``serve --collection``): `local_rag.server.search`."""
        check_key(request)
        return stores.stores()

    @app.get("/v1/vector_stores/{store_id}")
    async def vector_store(request: Request, store_id: str) -> dict[str, Any]:
        check_key(request)
        return stores.store(store_id)

    @app.get("/v1/vector_stores/{store_id}/files")
    async def vector_store_files(request: Request, store_id: str) -> dict[str, Any]:
        """The store's documents as files (read-only: an index is built by `local-rag index`)."""
        check_key(request)
        return await asyncio.to_thread(stores.files, store_id, dict(request.query_params))

    @app.get("/v1/vector_stores/{store_id}/files/{file_id:path}")
    async def vector_store_file(request: Request, store_id: str, file_id: str) -> dict[str, Any]:
        """One document, or with ``/content`` after its name its text read again from the folder."""
        check_key(request)
        if file_id.endswith("/content") and not await asyncio.to_thread(stores.holds, store_id, file_id):
            return await asyncio.to_thread(stores.content, store_id, file_id.removesuffix("/content"))
        return await asyncio.to_thread(stores.file, store_id, file_id)

    @app.post("/v1/vector_stores/{store_id}/search")
    async def vector_store_search(request: Request, store_id: str) -> dict[str, Any]:
        """Retrieval alone, no LLM: the chunks of the index (or a collection) for a query."""
        check_key(request)
        return await stores.search(store_id, await read_body(request, cfg.max_body_bytes))

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        check_key(request)
        chat = protocol.parse_request(await read_body(request, cfg.max_body_bytes), cfg.max_messages)
        conversation, notes = protocol.to_conversation(chat, cfg.max_message_chars)
        collection = protocol.collection_of(chat.model, model, cfg.collections)
        groups = tuple(g for g in (tuple(cfg.collections.get(collection or "", ())), protocol.request_only(chat)) if g)
        answering = protocol.collection_model(model, collection) if collection is not None else model  # echoed
        queued = time.perf_counter()
        if not await runner.admit():
            raise ApiError(429, f"busy: one turn runs and {runner.queue} wait; try again later", "queue_full",
                           {"Retry-After": str(runner.retry_after())})
        notes["queue_s"] = round(time.perf_counter() - queued, 4)
        if collection is not None:
            notes["collection"] = collection
        if await request.is_disconnected():
            runner.release()
            return Response(status_code=204)
        task = protocol.client_task(conversation) if cfg.client_tasks else None
        if task is not None:
            notes["client_task"] = task
        budget = cfg.task_max_tokens if task is not None else max_tokens(settings)
        turn = runner.start(conversation, stream=chat.stream,
                            task=(protocol.task_messages(chat), budget) if task is not None else None, only=groups)
        handed_off = False
        try:
            kind, first = await turn.next_event(request.is_disconnected)
            if kind == "done":
                result = turn_result(turn)
                if not chat.stream:
                    extra = {**result.to_json(), "sources": protocol.sources_json(result), **notes}
                    body = protocol.completion(protocol.completion_id(), answering, result, extra, budget)
                    if cfg.sources_footer:
                        body["choices"][0]["message"]["content"] += protocol.sources_footer(result)
                    return JSONResponse(body)
            handed_off = True
            events = stream_events(turn, (kind, first), answering, notes, settings, budget)
            return TurnStream(events, turn, media_type="text/event-stream", headers=SSE_HEADERS)
        finally:
            if not handed_off:
                turn.close()

    return app


def max_tokens(settings: Settings) -> int:
    return settings.generate.max_tokens


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (before reading it when Content-Length says so)."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise ApiError(413, f"the request body is over {limit} bytes", "body_too_large")
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > limit:
            raise ApiError(413, f"the request body is over {limit} bytes", "body_too_large")
    return bytes(body)


def turn_result(turn: Turn) -> TurnResult:
    """The turn's `TurnResult`, or the `ApiError` its failure maps to (bad input 400, anything else 500)."""
    try:
        return turn.result()
    except ClientGone as exc:
        raise ApiError(499, "the client disconnected", "client_gone") from exc
    except BadInputError as exc:
        raise ApiError(400, str(exc), "bad_input") from exc
    except LocalRagError as exc:
        log.error("turn failed: %s", exc)
        raise ApiError(500, str(exc), "pipeline_error") from exc
    except Exception as exc:
        log.exception("turn failed")
        raise ApiError(500, f"internal error ({type(exc).__name__})", "internal_error") from exc


class TurnStream(StreamingResponse):
    """A streaming response that closes its turn however it ends (sent, failed, the client gone, never started)."""

    def __init__(self, content: AsyncIterator[bytes], turn: Turn, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.turn = turn

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.turn.close()


async def stream_events(turn: Turn, first: tuple[str, Any], model: str, notes: dict[str, Any], settings: Settings,
                        budget: int) -> AsyncIterator[bytes]:
    """The SSE stream: a role chunk, status chunks while the turn searches (an empty delta and
    ``local_rag: {"status": "3 sources: …"}``, which OpenAI clients pass over), content chunks as the model writes,
    a final chunk with ``finish_reason``, ``usage`` and the ``local_rag`` field, then ``data: [DONE]``. A draft that
    a check after generation declines (the draft gate, or a support check that left nothing) is followed by the
    decline, as in the chat. A failure after the first byte becomes an ``error`` event (the OpenAI client raises it)."""
    cid = protocol.completion_id()
    yield protocol.sse(protocol.chunk(cid, model, {"role": "assistant", "content": ""}))
    prefix = ClarifyPrefix(settings.generate.clarify)
    sent = ""  # since the last break of an agentic step: what the final answer is compared with
    kind, value = first
    while kind != "done":
        if kind == "status":
            yield protocol.sse(protocol.chunk(cid, model, {}, local_rag={"status": value}))
        elif kind == "restart":  # an agentic step broke the answer it was streaming; the next one stands alone
            if sent:
                yield protocol.sse(protocol.chunk(cid, model, {"content": f"\n({BROKE_OFF})\n"}))
            sent = ""
        elif text := prefix.feed(value):
            sent += text
            yield protocol.sse(protocol.chunk(cid, model, {"content": text}))
        kind, value = await turn.next_event()
    try:
        result = turn_result(turn)
    except ApiError as exc:
        yield protocol.sse(exc.body())
        return
    rest = prefix.flush()
    repeated = (sent + rest).strip() == result.answer.text.strip()  # the model's own "I don't know", classed a decline
    if not sent:
        rest = result.answer.text  # nothing was streamed (e.g. the fixed IDK answer without a model call)
    elif result.answer.kind == "decline" and result.answer.text.strip() and not repeated:
        rest += "\n\n" + result.answer.text  # a check after generation withdrew the streamed draft: say so
    elif note := revision_note(result.support):
        rest += f"\n\n({note})"  # the support check removed or flagged sentences of the streamed draft
    if settings.server.sources_footer:
        rest += protocol.sources_footer(result)
    if rest:
        yield protocol.sse(protocol.chunk(cid, model, {"content": rest}))
    extra = {**result.to_json(), "sources": protocol.sources_json(result), **notes}
    final = protocol.chunk(cid, model, {}, protocol.finish_reason(result, budget),
                           usage=protocol.usage(result), local_rag=extra)
    yield protocol.sse(final)
    yield protocol.sse("[DONE]")


class ClarifyPrefix:
    """Drops a leading ``CLARIFY:`` from the streamed text (the pipeline returns the question without it): the
    first characters are held back until they cannot be that prefix."""

    MARK = "CLARIFY:"

    def __init__(self, enabled: bool) -> None:
        self.held = "" if enabled else None

    def feed(self, piece: str) -> str:
        if self.held is None:
            return piece
        self.held += piece
        head = self.held.lstrip().upper()
        if head.startswith(self.MARK):
            out, self.held = self.held.lstrip()[len(self.MARK):].lstrip(), None
            return out
        if self.MARK.startswith(head):
            return ""  # could still become the prefix
        return self.flush()

    def flush(self) -> str:
        out, self.held = self.held or "", None
        return out

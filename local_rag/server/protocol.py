"""The OpenAI chat-completions wire format: request parsing into a `Conversation`, responses and stream chunks.

Roles: ``user`` -> MTRAG speaker ``user``, ``assistant`` -> ``agent``. ``system`` (and ``developer``) messages
are *ignored* for answering: the grounded-answer prompt (``prompts/answer.yaml``) is the system prompt, and a
client's generic "You are a helpful assistant" would weaken its rule that the passages are the only source of
facts. They are counted in the response's ``local_rag.system_messages_ignored``. Any other role (``tool``,
``function``...) is refused with 400. The last non-system message must be a non-empty user message.

Example:
    >>> req = parse_request(b'{"model": "x", "messages": [{"role": "user", "content": "hi"}]}')
    >>> conv, notes = to_conversation(req, max_chars=1000)
    >>> conv.turns
    [Turn(speaker='user', text='hi')]
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from local_rag import safejson
from local_rag.errors import BadInputError
from local_rag.records import Conversation, Turn
from local_rag.server.errors import ApiError

MAX_MESSAGES = 256
SPEAKERS = {"user": "user", "assistant": "agent"}
IGNORED_ROLES = ("system", "developer")


class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")  # name, tool_calls, ... : accepted, not used

    role: str
    content: str | list[TextPart] | None = None


class ChatRequest(BaseModel):
    """The fields local-rag reads. Other OpenAI parameters (temperature, max_tokens, ...) are accepted and
    ignored: the settings profile decides how the pipeline generates."""

    model_config = ConfigDict(extra="allow")

    model: str = ""
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    n: int = 1

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_defaults(cls, data: Any) -> Any:
        """``"stream": null``, ``"n": null`` (the OpenAI API's "or null": sent by clients that serialise unset
        options) mean the default, as OpenAI reads them; they were a 400 ("stream: Input should be a valid boolean")."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if not (v is None and k in ("model", "stream", "n"))}
        return data


def parse_request(body: bytes, max_messages: int = MAX_MESSAGES) -> ChatRequest:
    """Decode and validate a request body; `ApiError` 400 with a message naming the problem.

    Whatever the body holds (JSON nested 200,000 deep, a 5,000-digit integer, 24,000 messages) is a 400, never a
    500: JSON nesting is capped at `safejson.MAX_DEPTH` levels, integers at 64 bits, messages at ``max_messages``.
    """
    try:
        data = safejson.loads(body, "the request body")
    except BadInputError as exc:
        raise ApiError(400, str(exc), "invalid_json") from exc
    if isinstance(data, dict) and isinstance(data.get("messages"), list) and len(data["messages"]) > max_messages:
        raise ApiError(400, f"{len(data['messages'])} messages: at most {max_messages} per request (setting "
                       "server.max_messages); send the recent turns", "too_many_messages")
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object", "invalid_request")
    try:
        request = ChatRequest.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5])
        raise ApiError(400, f"invalid request: {problems}", "invalid_request") from exc
    if request.n != 1:
        raise ApiError(400, "n must be 1: one answer per turn", "invalid_request")
    return request


def _text(message: ChatMessage, i: int) -> str:
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    texts = []
    for part in message.content:
        if part.type != "text" or part.text is None:
            raise ApiError(400, f"messages[{i}]: only text content parts are supported (got {part.type!r})", "invalid_content")
        texts.append(part.text)
    return "\n".join(texts)


def to_conversation(request: ChatRequest, max_chars: int) -> tuple[Conversation, dict[str, Any]]:
    """The MTRAG conversation of ``request.messages`` and notes for the response (ignored system messages, cuts).

    Raises:
        ApiError: 400 for an unknown role, non-text content, or no non-empty user message last.
    """
    turns: list[Turn] = []
    ignored = 0
    cuts: list[int] = []
    for i, message in enumerate(request.messages):
        if message.role in IGNORED_ROLES:
            _text(message, i)
            ignored += 1
            continue
        if message.role not in SPEAKERS:
            raise ApiError(400, f"messages[{i}]: role {message.role!r} is not supported (expected system, user or "
                           "assistant)", "invalid_role")
        text = _text(message, i)
        if len(text) > max_chars:
            text = text[:max_chars]
            cuts.append(i)
        if message.role == "assistant" and not text.strip():
            continue  # e.g. a tool-call turn: nothing the pipeline can use
        turns.append(Turn(SPEAKERS[message.role], text))  # type: ignore[arg-type]
    if not turns or turns[-1].speaker != "user" or not turns[-1].text.strip():
        raise ApiError(400, "the last message must be a non-empty user message", "invalid_request")
    notes: dict[str, Any] = {"system_messages_ignored": ignored}
    if cuts:
        notes["messages_cut"] = {"indexes": cuts, "to_chars": max_chars}
    return Conversation(turns), notes


def collection_model(model: str, name: str) -> str:
    """The model id /v1/models lists for a collection (``serve --collection NAME=...``): ``<model>:<name>``."""
    return f"{model}:{name}"


def collection_of(requested: str, model: str, collections: dict[str, list[str]]) -> str | None:
    """The collection a request's ``model`` picks (None: the server's model, or any other id, as before: clients
    that send a placeholder model name keep working)."""
    return next((name for name in collections if requested == collection_model(model, name)), None)


MAX_PATTERNS = 256  # document patterns one request may give (`request_only`)


def request_only(request: ChatRequest) -> tuple[str, ...]:
    """The documents a request asks about: ``"local_rag": {"only": ["reports/2024", "*.pdf"]}`` (a list, or one
    string, comma-separated; the ``extra_body`` of the openai SDK). Empty: the server's own scope (``serve --only``),
    which a request narrows and never widens.

    Raises:
        ApiError: 400 when ``local_rag`` is not an object, names another key, or ``only`` is not strings.
    """
    options = (request.model_extra or {}).get("local_rag")
    if options is None:
        return ()
    if not isinstance(options, dict):
        raise ApiError(400, 'local_rag: expected an object such as {"only": ["reports/2024", "*.pdf"]}', "invalid_request")
    unknown = sorted(set(options) - {"only"})
    if unknown:
        raise ApiError(400, f"local_rag: unknown key(s) {', '.join(map(repr, unknown))} (known: only)", "invalid_request")
    only = options.get("only")
    if only is None:
        return ()
    if isinstance(only, str):
        only = [only]
    if not isinstance(only, list) or not all(isinstance(p, str) for p in only):
        raise ApiError(400, "local_rag.only: a list of document paths or patterns (strings)", "invalid_request")
    from local_rag.patterns import patterns_of

    patterns = patterns_of(only)
    if len(patterns) > MAX_PATTERNS:  # each is matched against every document id: a turn's worth of CPU per request
        raise ApiError(400, f"local_rag.only: {len(patterns)} patterns, at most {MAX_PATTERNS} (a folder or '*.pdf' names "
                       "many documents at once)", "invalid_request")
    return patterns


TASK_MARK = "### Task:"  # how Open WebUI opens the prompts of its background tasks (title, tags, follow-ups, queries)


def client_task(conversation: Conversation) -> str | None:
    """The first line of a client's own background task, when the last user message is one, else None.

    Chat front-ends ask the model of a conversation for its title, tags or follow-up questions in requests of their
    own (Open WebUI after each exchange, by default with the chat's model): answered as questions, each was a whole
    turn, retrieval on the prompt and five passages before it (a title: 822 prompt tokens and 7.4 s of the one
    generation slot with Qwen2.5-Coder-1.5B on 2 cores, against 184 and 3.7 s for the prompt alone), its reply
    checked against passages that have nothing to do with it.

    Example:
        >>> client_task(Conversation([Turn("user", "### Task:\\nGenerate a concise title for the chat.")]))
        'Generate a concise title for the chat.'
    """
    text = conversation.turns[-1].text.lstrip()
    if text[:len(TASK_MARK)].lower() != TASK_MARK.lower():
        return None
    rest = text[len(TASK_MARK):].strip()
    return (rest.splitlines()[0].strip() if rest else "")[:120] or "a task"


def task_messages(request: ChatRequest) -> list[dict[str, str]]:
    """The request's messages as the model reads them (role and text), system messages included: a client's task
    is the client's prompt, answered as it is."""
    return [{"role": m.role if m.role in ("system", "user", "assistant") else "system", "content": _text(m, i)}
            for i, m in enumerate(request.messages)]


# ------------------------------------------------------------------------------------------ responses
def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def usage(result: Any) -> dict[str, int]:
    prompt = sum(c.prompt_tokens for c in result.llm_calls)
    completion = sum(c.completion_tokens for c in result.llm_calls)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def finish_reason(result: Any, max_tokens: int) -> str:
    call = getattr(result.answer, "call", None)
    return "length" if call is not None and call.completion_tokens >= max_tokens else "stop"


def completion(cid: str, model: str, result: Any, extra: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """A ``chat.completion`` object; local-rag's citations, passages and timings ride in ``local_rag``."""
    return {
        "id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": result.answer.text},
                     "logprobs": None, "finish_reason": finish_reason(result, max_tokens)}],
        "usage": usage(result),
        "local_rag": extra,
    }


def sources_footer(result: Any) -> str:
    """The answer's citations as plain text, for clients that show only the message text (``server.sources_footer``):
    a blank line, ``Sources:``, then ``[n] title (where)`` per cited passage (`Citation.label`: the passage id, a
    PDF's page or a long file's section); for an answer that cites none, the passages it was written from, under a
    heading that says so. Empty for a decline, a clarifying question or small talk."""
    from local_rag.sources import line_text, source_lines

    answer = getattr(result, "answer", None)
    if answer is None:
        return ""
    heading, found = source_lines(answer)
    if not found:
        return ""
    return f"\n\nSources{f' ({heading})' if heading else ''}:\n" + "\n".join(line_text(s, angled=False) for s in found)


def sources_json(result: Any) -> dict[str, Any]:
    """The answer's sources as ``ask`` and the footer list them (`local_rag.sources.source_lines`), for the chat page
    and other clients: ``{"heading": "", "lines": [{"numbers": [1, 3], "label": "Title (file.md)", "url": ...,
    "baseless": false, "document": "file.md", "passages": [{"n": 1, "passage_id": ..., "text": ...}, ...]}]}``; ``heading`` names passages
    listed though the answer cites none. No lines for a decline, a clarifying question or small talk."""
    from local_rag.sources import source_lines

    answer = getattr(result, "answer", None)
    if answer is None:
        return {"heading": "", "lines": []}
    heading, found = source_lines(answer)
    citations = {c.n: c for c in answer.sources()[0]}
    texts = {h.passage_id: h.text for h in [*getattr(result, "passages", []), *answer.passages]}

    def cited(n: int) -> str:
        return citations[n].passage_id if n in citations else ""

    return {"heading": heading, "lines": [
        {"numbers": line.numbers, "label": line.label, "url": line.url, "baseless": line.baseless,
         "document": citations[line.numbers[0]].doc_id if line.numbers[0] in citations else "",
         "passages": [{"n": n, "passage_id": cited(n), "text": texts.get(cited(n), "")} for n in line.numbers]}
        for line in found]}


def chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None = None, **more: Any) -> dict[str, Any]:
    """One ``chat.completion.chunk`` of a stream."""
    return {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], **more}


def sse(data: dict[str, Any] | str) -> bytes:
    """One server-sent event (``data: ...`` and a blank line)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n".encode()

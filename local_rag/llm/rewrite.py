"""Query rewriting of the last user turn, one registered function per mode; each returns `Query` records.

Modes (``rewrite.modes`` in settings; unknown names are refused with the valid list):

- ``rewrite``: a standalone rewrite that resolves references to earlier turns (5ting). A first turn is already
  standalone: it is returned without an LLM call.
- ``keywords``: a compact keyword query (AKCIT's KWR).
- ``multi``: N diverse keyword queries (GenAIus), each its own `Query`.
- ``hyde``: a short pseudo-answer passage (HyDE, GenAIus).

A reply that does not decode, is empty, has no letters, or echoes the prompt falls back to the last turn (logged);
the mode is kept so that fusion weights still apply.

Example:
    >>> rewrite(conversation, llm, ["rewrite", "keywords"])  # doctest: +SKIP
    [Query(text='How tall is the Eiffel Tower?', mode='rewrite', weight=1.0), Query(text='Eiffel Tower height', ...)]
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable

from local_rag.llm.base import LLM, Message, repair_json
from local_rag.llm.context import conversation_text, last_question, prompt_room
from local_rag.llm.prompts import load_prompt
from local_rag.llm.registry import Registry
from local_rag.records import Conversation, Query
from local_rag.settings import RewriteConfig

log = logging.getLogger("local_rag.llm.rewrite")

RewriteFn = Callable[[Conversation, LLM, RewriteConfig], list[Query]]
REWRITE_MODES: Registry[RewriteFn] = Registry("rewrite mode")

_MAX_QUERY_CHARS = 400
_ECHOES = ("conversation:", "last user question", "reply with json", "user:", "agent:")


def clean_query(text: str | None, fallback: str, mode: str, max_chars: int = _MAX_QUERY_CHARS) -> str:
    """``text`` tidied, or ``fallback`` (logged) when it is empty, has no letters or digits, is too long or echoes
    the prompt."""
    cleaned = " ".join((text or "").split()).strip(" \"'`")
    reason = ""
    if not cleaned:
        reason = "empty"
    elif not re.search(r"\w", cleaned):
        reason = "no words"
    elif len(cleaned) > max_chars:
        reason = f"{len(cleaned)} characters"
    elif any(e in cleaned.lower() for e in _ECHOES):
        reason = "echoes the prompt"
    if reason:
        log.warning("%s: unusable LLM output (%s): %.80r; falling back to the last turn", mode, reason, text)
        return fallback
    return cleaned


def rewrite_messages(prompt_name: str, conversation: Conversation, llm: LLM, config: RewriteConfig,
                     **fields: str) -> list[Message]:
    """The messages of a rewrite prompt for the last user turn of ``conversation``."""
    prompt = load_prompt(prompt_name)
    question = last_question(conversation)
    room = prompt_room(llm, prompt, prompt.max_tokens, conversation="", question=question, **fields)
    history = conversation_text(
        conversation, llm, min(config.history_tokens, room), config.agent_tokens, stage=prompt_name,
        capped=config.history_tokens <= room,
    )
    return prompt.messages(conversation=history, question=question, **fields)


def _ask(
    prompt_name: str, conversation: Conversation, llm: LLM, config: RewriteConfig, **fields: str
) -> tuple[object, str]:
    """Run a rewrite prompt; returns (decoded reply or text, last question)."""
    prompt = load_prompt(prompt_name)
    question = last_question(conversation)
    messages = rewrite_messages(prompt_name, conversation, llm, config, **fields)
    if prompt.schema is None:
        return llm.run(messages, stage=prompt_name, max_tokens=prompt.max_tokens).text, question
    schema = copy.deepcopy(prompt.schema)
    if prompt_name == "multi":
        items = schema["properties"]["queries"]
        items["minItems"] = items["maxItems"] = config.n_queries
    data, _ = llm.run_json(messages, schema, stage=prompt_name, max_tokens=prompt.max_tokens)
    return data, question


def _field(data: object, key: str) -> object:
    return data.get(key) if isinstance(data, dict) else None


REPLY_START = '{"query": "'  # ``rewrite.reply: prefix``: the reply's start, written into the prompt


@REWRITE_MODES.register("rewrite")
def standalone(conversation: Conversation, llm: LLM, config: RewriteConfig) -> list[Query]:
    """A standalone rewrite of the last turn."""
    question = last_question(conversation)
    if len(conversation.user_turns) < 2:
        return [Query(question, "rewrite")]
    if config.reply == "prefix":
        messages = [*rewrite_messages("rewrite", conversation, llm, config), {"role": "assistant", "content": REPLY_START}]
        text = llm.run(messages, stage="rewrite", max_tokens=load_prompt("rewrite").max_tokens, stop=['"', "\n"]).text
        return [Query(clean_query(continued_query(text), question, "rewrite"), "rewrite")]
    data, question = _ask("rewrite", conversation, llm, config)
    value = _field(data, "query")
    return [Query(clean_query(value if isinstance(value, str) else None, question, "rewrite"), "rewrite")]


def continued_query(text: str) -> str | None:
    """The query of a reply that continued `REPLY_START`: the text up to its closing quote; a backend that answered
    afresh with the whole JSON object is read as JSON.

    Example:
        >>> continued_query('How tall is the Eiffel Tower?"')
        'How tall is the Eiffel Tower?'
    """
    text = text.strip()
    if text.startswith("{"):
        data = repair_json(text)
        value = _field(data, "query")
        return value if isinstance(value, str) else None
    return text.split('"', 1)[0]


@REWRITE_MODES.register("keywords")
def keywords(conversation: Conversation, llm: LLM, config: RewriteConfig) -> list[Query]:
    """A compact keyword query: the keywords joined by spaces, duplicates removed."""
    data, question = _ask("keywords", conversation, llm, config)
    words = _field(data, "keywords")
    terms = [" ".join(w.split()) for w in words if isinstance(w, str)] if isinstance(words, list) else []
    unique = list(dict.fromkeys(t for t in terms if t))
    return [Query(clean_query(" ".join(unique), question, "keywords"), "keywords")]


@REWRITE_MODES.register("multi")
def multi(conversation: Conversation, llm: LLM, config: RewriteConfig) -> list[Query]:
    """``config.n_queries`` diverse queries (fewer when the LLM repeats itself; the last turn when none is usable)."""
    data, question = _ask("multi", conversation, llm, config, n=str(config.n_queries))
    raw = _field(data, "queries")
    texts = [clean_query(q, "", "multi") for q in raw if isinstance(q, str)] if isinstance(raw, list) else []
    unique = list(dict.fromkeys(t for t in texts if t))[: config.n_queries]
    if not unique:
        log.warning("multi: no usable query in the LLM reply; falling back to the last turn")
        unique = [question]
    return [Query(t, "multi", 1.0 / len(unique)) for t in unique]


@REWRITE_MODES.register("hyde")
def hyde(conversation: Conversation, llm: LLM, config: RewriteConfig) -> list[Query]:
    """A short pseudo-answer passage to search with."""
    text, question = _ask("hyde", conversation, llm, config)
    return [Query(clean_query(text if isinstance(text, str) else None, question, "hyde", 2000), "hyde")]


def rewrite(conversation: Conversation, llm: LLM, modes: list[str] | None = None,
            config: RewriteConfig | None = None) -> list[Query]:
    """The queries of every mode in ``modes`` (default ``config.modes``), in that order.

    Raises:
        SettingsError: an unknown mode (before any LLM call).
        BadInputError: an empty conversation.
    """
    config = config or RewriteConfig()
    modes = REWRITE_MODES.check(list(modes or config.modes))
    last_question(conversation)
    out: list[Query] = []
    for mode in modes:
        out.extend(REWRITE_MODES.get(mode)(conversation, llm, config))
    return out

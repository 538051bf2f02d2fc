"""Rendering conversations and passages into prompt text within the token budget (see `local_rag.llm.budget`)."""

from __future__ import annotations

import logging

from local_rag.errors import BadInputError
from local_rag.llm.base import LLM
from local_rag.llm.budget import fit_passages, fit_turns
from local_rag.llm.prompts import Prompt
from local_rag.records import Conversation, Hit

_SPEAKER = {"user": "User", "agent": "Agent", "system": "System"}
_PER_MESSAGE = 8  # chat-template tokens around each message


def last_question(conversation: Conversation) -> str:
    """The last user turn; `BadInputError` for a conversation without one."""
    if not conversation.turns:
        raise BadInputError(f"conversation {conversation.id or '(no id)'} is empty: nothing to rewrite or answer")
    question = conversation.last_user_turn.strip()
    if not question:
        raise BadInputError(f"conversation {conversation.id or '(no id)'} has no non-empty user turn")
    return question


def prompt_room(llm: LLM, prompt: Prompt, max_tokens: int, **fields: str) -> int:
    """Tokens left for the variable part once the prompt's fixed text (with ``fields`` empty) and the reply fit."""
    messages = prompt.messages(**fields)
    fixed = sum(llm.count_tokens(m["content"]) + _PER_MESSAGE for m in messages)
    return llm.n_ctx - max_tokens - fixed


def conversation_text(
    conversation: Conversation, llm: LLM, budget: int, agent_tokens: int = 0, stage: str = "", step: int = 1,
    capped: bool = True,
) -> str:
    """``User: ...`` / ``Agent: ...`` lines of the conversation, oldest turns dropped to fit ``budget`` tokens
    (``step`` at a time from the start: see `local_rag.llm.budget.fit_turns`). ``capped``: ``budget`` is the
    configured history cap (turns dropped to it are logged at INFO), not what the context window left (WARNING)."""
    level = logging.INFO if capped else logging.WARNING
    turns, _ = fit_turns(conversation.turns, budget, llm.count_tokens, agent_tokens, stage, step, level)
    return "\n".join(f"{_SPEAKER.get(t.speaker, t.speaker)}: {' '.join(t.text.split())}" for t in turns)


def passages_text(hits: list[Hit], llm: LLM, budget: int, max_each: int, stage: str = "") -> str:
    """``[1] title: text`` lines, numbered in the order given, each cut to fit ``budget`` tokens in all."""
    texts = [f"{h.title}: {' '.join(h.text.split())}" if h.title else " ".join(h.text.split()) for h in hits]
    fitted, _ = fit_passages(texts, budget, llm.count_tokens, max_each, stage)
    return "\n".join(f"[{i}] {t}" for i, t in enumerate(fitted, 1))

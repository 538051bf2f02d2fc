"""Query variants of a conversation turn.

Modes computed here need no model: ``lastturn`` (the last user turn) and ``questions`` (all user turns, oldest
first, as the official ``questions`` query files). Other modes (``rewrite`` from the organizers' files or the
LLM, ``keywords``, ``multi``, ``hyde``) are passed in by the caller as ready texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from local_rag.errors import BadInputError
from local_rag.records import Conversation, Query

QUERY_MODES = ("lastturn", "questions")


def conversation_queries(
    conversation: Conversation,
    modes: Sequence[str],
    given: Mapping[str, str | Sequence[str]] | None = None,
    weights: Mapping[str, float] | None = None,
) -> list[Query]:
    """The `Query` variants of ``conversation`` for ``modes``.

    Args:
        conversation: the turns up to the user turn to answer.
        modes: query modes, e.g. ``["lastturn", "rewrite"]``.
        given: texts of modes computed elsewhere (a mode may map to several texts, e.g. ``multi``).
        weights: fusion weight per mode (default 1).

    Raises:
        BadInputError: a mode that is neither computed here nor given, or a conversation without a user turn.

    Example:
        >>> conv = Conversation([Turn("user", "who wrote bm25s?")])
        >>> [q.text for q in conversation_queries(conv, ["lastturn"])]
        ['who wrote bm25s?']
    """
    given = given or {}
    weights = weights or {}
    if not conversation.last_user_turn.strip():
        raise BadInputError("the conversation has no user turn to answer")
    out: list[Query] = []
    for mode in modes:
        if mode in given:
            texts = given[mode]
            texts = [texts] if isinstance(texts, str) else list(texts)
        elif mode == "lastturn":
            texts = [conversation.last_user_turn]
        elif mode == "questions":
            texts = ["\n".join(t.strip() for t in conversation.user_turns if t.strip())]
        else:
            valid = sorted(set(QUERY_MODES) | set(given))
            raise BadInputError(f"query mode {mode!r} is not available here; valid: {', '.join(valid)}")
        for text in texts:
            # a variant identical to an earlier one (a rewrite that changed nothing) would only count twice in fusion
            if text.strip() and text.strip().lower() not in {q.text.lower() for q in out}:
                out.append(Query(text=text.strip(), mode=mode, weight=weights.get(mode, 1.0)))
    if not out:
        out.append(Query(text=conversation.last_user_turn.strip(), mode="lastturn"))
    return out

"""Query variants of a conversation turn.

Modes computed here need no model: ``lastturn`` (the last user turn), ``questions`` (all user turns, oldest
first, as the official ``questions`` query files), ``lasttwo`` (the previous user turn and the last one: what a
follow-up leaves implicit is often in the turn before) and ``lastanswer`` (the last agent turn: it was written
from the passages the conversation is about). The last two are absent on a first turn. Other modes (``rewrite``
from the organizers' files or the LLM, ``keywords``, ``multi``, ``hyde``) are passed in by the caller as ready texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from local_rag.errors import BadInputError
from local_rag.records import Conversation, Query

QUERY_MODES = ("lastturn", "questions", "lasttwo", "lastanswer")
ANSWER_CHARS = 2000  # of the last answer used as a query: its opening says what it is about


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
        >>> from local_rag.records import Turn
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
        elif mode in QUERY_MODES:
            texts = conversation_texts(conversation, mode)
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


def conversation_texts(conversation: Conversation, mode: str) -> list[str]:
    """The query texts of a mode computed from the conversation alone (`QUERY_MODES`); none when the conversation
    has nothing for it (``lasttwo`` and ``lastanswer`` on a first turn).

    Example:
        >>> from local_rag.records import Turn
        >>> conv = Conversation([Turn("user", "who wrote bm25s?"), Turn("agent", "Xing Han Lu."), Turn("user", "when?")])
        >>> conversation_texts(conv, "lasttwo"), conversation_texts(conv, "lastanswer")
        (['who wrote bm25s?\\nwhen?'], ['Xing Han Lu.'])
    """
    users = [t.strip() for t in conversation.user_turns if t.strip()]
    if mode == "lastturn":
        return [conversation.last_user_turn]
    if mode == "questions":
        return ["\n".join(users)]
    if mode == "lasttwo":
        return ["\n".join(users[-2:])] if len(users) > 1 else []
    if mode == "lastanswer":
        answers = [t.text.strip() for t in conversation.turns[:-1] if t.speaker == "agent" and t.text.strip()]
        return [answers[-1][:ANSWER_CHARS]] if answers else []
    raise BadInputError(f"query mode {mode!r} is not computed from the conversation; these are: {', '.join(QUERY_MODES)}")

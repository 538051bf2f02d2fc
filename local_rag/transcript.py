"""A conversation as a Markdown transcript with the sources under each answer: what `chat`'s ``/export FILE.md``
writes, to keep or to share (``/save`` keeps the official JSON shape, which a chat can ``/load`` again but which holds no
sources).

Example:
    >>> from local_rag.records import Conversation, Turn
    >>> print(transcript(Conversation([Turn("user", "hi"), Turn("agent", "Hello.")]), {}, "notes"))
    # Conversation with index notes
    <BLANKLINE>
    **You:** hi
    <BLANKLINE>
    **local-rag:** Hello.
    <BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Mapping

from local_rag.records import Conversation, TurnResult
from local_rag.sources import line_text, source_lines


def transcript(conversation: Conversation, results: Mapping[int, TurnResult], index: str, when: str = "") -> str:
    """The Markdown of ``conversation``; ``results`` maps the position of an agent turn to the `TurnResult` it came
    from (turns loaded from a file have none: their sources are not known)."""
    out = [f"# Conversation with index {index}" + (f" ({when})" if when else ""), ""]
    for i, turn in enumerate(conversation.turns):
        speaker = "You" if turn.speaker == "user" else "local-rag"
        out += [f"**{speaker}:** {turn.text.strip()}", ""]
        result = results.get(i)
        if result is None:
            continue
        heading, lines = source_lines(result.answer)
        if lines:
            out.append(f"Sources ({heading}):" if heading else "Sources:")
            out += [f"- {line_text(line)}" for line in lines]
            out.append("")
    return "\n".join(out)

"""Does the last user turn read on its own? Then the LLM rewrite (seconds on a CPU) can be skipped.

A rule, not a model: a follow-up turn needs the conversation when it points back at it (a pronoun or demonstrative,
"the same", "what about", an ellipsis such as "and the second one?"), is a fragment rather than a question or a
request ("Regional differences"), or is too short to name its subject. The rule and its thresholds were chosen on
MTRAG **train** conversations only, against a label derived from the organizers' rewrites (a turn needs a rewrite
when its rewrite adds a content word of an earlier turn that the turn itself lacks); ``local-rag bench-levers
standalone`` measures it on train and on test (docs/benchmarks.md). MTRAG conversations stay on one document, so
even a complete question often leaves its topic implicit: the rule is right on about two thirds of the turns it
skips, which is why ``rewrite.skip_standalone`` is off by default.

Example:
    >>> is_standalone("How many teams play in the National Football League?", ["Do the Arizona Cardinals play abroad?"])
    True
    >>> is_standalone("Do they play outside the US?", ["Tell me about the Arizona Cardinals"])
    False
    >>> is_standalone("Regional differences", ["How long should one wait before adoption?"])
    False
"""

from __future__ import annotations

import re

from local_rag.records import Conversation

_WORD = re.compile(r"[a-z0-9']+")
# words that point back at something said before
_ANAPHORA = frozenset(
    "it its it's itself this that these those they them their theirs themselves he him his she her hers one ones "
    "there then such same former latter above aforementioned mentioned other others another else also too either "
    "neither both".split()
)
_OPENERS = ("and ", "but ", "so ", "or ", "also ", "what about", "how about", "what else", "why", "how come",
            "anything else", "any other", "more ", "tell me more", "which one", "is that", "are those", "really")
# a question or a request starts with one of these; anything else is a fragment that leans on the conversation
_ASKING = frozenset(
    "what who whom whose when where why how which is are was were do does did can could should would will has have "
    "had tell explain describe list give define compare name show find".split()
)
_STOP = frozenset(
    "a an the of to in on for and or but is are was were be been do does did what which who whom whose when where why "
    "how can could should would will shall may might must i you we me my your our us about with from by as at if "
    "not no yes any some all many much more most there here please tell give explain know".split()
)


def content_words(text: str) -> list[str]:
    """Lower-cased words of ``text`` that are neither stopwords nor pointers back."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP and w not in _ANAPHORA and len(w) > 2]


def is_standalone(question: str, earlier_user_turns: list[str], min_content_words: int = 3) -> bool:
    """True when ``question`` (a follow-up after ``earlier_user_turns``) needs no rewrite by the rule above.

    Args:
        question: the last user turn.
        earlier_user_turns: the user turns before it (none: a first turn, always standalone).
        min_content_words: fewer content words than this -> not standalone (it cannot name its own subject).
    """
    if not earlier_user_turns:
        return True
    text = " ".join(question.lower().split())
    words = _WORD.findall(text)
    if not words or words[0] not in _ASKING or any(w in _ANAPHORA for w in words):
        return False
    if text.startswith(_OPENERS):
        return False
    return len(content_words(text)) >= min_content_words


def skip_rewrite(conversation: Conversation, modes: list[str]) -> bool:
    """True when the ``rewrite`` mode is asked for and the last user turn of ``conversation`` is standalone (a first
    turn is never rewritten anyway: `local_rag.llm.rewrite.standalone`)."""
    users = conversation.user_turns
    return "rewrite" in modes and len(users) >= 2 and is_standalone(users[-1], users[:-1])

"""What the text of a conversation says before any retrieval: small talk, references to things never introduced,
and whether the agent just asked a clarifying question (and the user answered it).

Example:
    >>> conv = Conversation([Turn("user", "Does this animal live long?")])
    >>> dangling_references(conv)
    ['this animal']
    >>> chitchat_kind("Thanks a lot!")
    'thanks'
"""

from __future__ import annotations

import re

from local_rag.records import Conversation, Turn

_WORD = re.compile(r"[a-z0-9][a-z0-9'&.-]*")
STOPWORDS = frozenset(
    "a an the and or but if of in on at to for from by with about as into over after before between through during "
    "is are was were be been being am do does did doing have has had having can could would should will shall may "
    "might must i me my we our you your he him his she her it its they them their this that these those what which "
    "who whom whose when where why how there here not no yes so than then too very just also any some all each "
    "other more most such only own same s t don't doesn't isn't aren't can't won't tell give know please like get "
    "one ones much many well still even really".split()
)
_DEMONSTRATIVE = re.compile(r"\b(this|that|these|those)\s+([a-z][a-z'-]+)", re.I)
_PRONOUN = re.compile(r"\b(it|its|they|them|their|he|him|his|she|her|hers)\b", re.I)
_CHITCHAT = {
    "thanks": re.compile(r"^\W*(?:(?:ok(?:ay)?|great|perfect|cool|awesome|nice|wonderful|got it)[\s,.!]*)?"
                         r"(?:thanks?(?: you)?(?: (?:so|very) much)?(?: a lot)?|thx|ty|much appreciated|"
                         r"(?:i )?appreciate (?:it|that|your help))(?:[\s,.!]+(?:that|this|it) (?:helps|helped|"
                         r"was (?:very |really )?helpful)|[\s,.!]+for (?:your|the) (?:help|answer|information|info))?"
                         r"\W*$", re.I),
    "greeting": re.compile(r"^\W*(?:hi|hello|hey|good (?:morning|afternoon|evening)|greetings)(?: there)?"
                           r"(?:[\s,.!]+(?:can|could) you help(?: me)?)?\W*$", re.I),
    "goodbye": re.compile(r"^\W*(?:(?:ok(?:ay)?|thanks?|all right|alright)[\s,.!]*)?(?:bye|goodbye|see (?:you|ya)|"
                          r"that'?s all|have a (?:nice|good) (?:day|one))\W*$", re.I),
    "ack": re.compile(r"^\W*(?:ok(?:ay)?|great|perfect|cool|awesome|nice|got it|i see|understood|wow|omg|"
                      r"that'?s (?:great|helpful|interesting|good to know))\W*$", re.I),
}
CHITCHAT_REPLIES = {
    "thanks": "You're welcome! Is there anything else I can help you with?",
    "greeting": "Hello! What would you like to know about your documents?",
    "goodbye": "Goodbye! Come back any time you have a question.",
    "ack": "Glad that helps. Is there anything else you would like to know?",
}
_CLARIFY_CUE = re.compile(r"\b(which (?:one|of|\w+)|do you mean|are you (?:asking|referring|talking)|referring to|"
                          r"could you (?:say|specify|clarify)|please (?:specify|clarify|provide))\b", re.I)


def words(text: str) -> list[str]:
    """Lower-case word tokens."""
    return _WORD.findall(text.lower())


def content_words(text: str) -> list[str]:
    """Words that carry the topic: no stop words, crude plural stripping so that 'bonds' meets 'bond'."""
    out = []
    for w in words(text):
        w = w.strip("'.-")
        if len(w) < 2 or w in STOPWORDS:
            continue
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def chitchat_kind(text: str) -> str | None:
    """``thanks``, ``greeting``, ``goodbye`` or ``ack`` when the turn is only small talk, else None."""
    text = " ".join(text.split())
    if not text or len(text) > 120:
        return None
    for kind, pattern in _CHITCHAT.items():
        if pattern.match(text):
            return kind
    return None


def earlier_text(conversation: Conversation) -> str:
    """The text of every turn before the last user turn."""
    turns = conversation.turns
    last = max((i for i, t in enumerate(turns) if t.speaker == "user"), default=len(turns))
    return "\n".join(t.text for t in turns[:last])


def dangling_references(conversation: Conversation) -> list[str]:
    """'this X' / 'that X' phrases of the last user turn whose noun appears nowhere before it (never introduced)."""
    before = set(content_words(earlier_text(conversation)))
    out = []
    for match in _DEMONSTRATIVE.finditer(conversation.last_user_turn):
        head = content_words(match.group(2))
        if head and not any(w in before for w in head):
            out.append(" ".join(match.group(0).split()).lower())
    return out


def pronouns(text: str) -> int:
    """How many third-person pronouns the text has."""
    return len(_PRONOUN.findall(text))


def last_agent_turn(conversation: Conversation) -> str:
    """The agent turn just before the last user turn ('' when there is none)."""
    turns = conversation.turns
    last = max((i for i, t in enumerate(turns) if t.speaker == "user"), default=-1)
    return turns[last - 1].text if last >= 1 and turns[last - 1].speaker == "agent" else ""


def is_clarification(text: str) -> bool:
    """True when an agent turn asks the user which thing they mean (our clarifying questions and the MTRAG-UN
    reference patterns)."""
    text = text.strip()
    return bool(text) and ("?" in text[-200:] or text.lower().startswith("please")) and bool(_CLARIFY_CUE.search(text))


def resolve_clarification(conversation: Conversation) -> Conversation:
    """When the agent just asked a clarifying question and the user answered it, the conversation with the last
    user turn rewritten as the earlier question plus the answer ("Does this ocean ... ? (the Atlantic)"), so that a
    last-turn query finds the right passages; otherwise the conversation itself.

    Example:
        >>> conv = Conversation([Turn("user", "Is this ocean deep?"), Turn("agent", "Which ocean do you mean?"),
        ...                      Turn("user", "The Atlantic")])
        >>> resolve_clarification(conv).last_user_turn
        'Is this ocean deep? (The Atlantic)'
    """
    turns = conversation.turns
    if len(turns) < 3 or turns[-1].speaker != "user" or not is_clarification(last_agent_turn(conversation)):
        return conversation
    asked = next((t.text for t in reversed(turns[:-2]) if t.speaker == "user"), "")
    reply = turns[-1].text.strip()
    if not asked or len(words(reply)) > 12:
        return conversation  # a long reply is a question of its own
    return Conversation([*turns[:-1], Turn("user", f"{asked.strip()} ({reply})")], conversation.id)

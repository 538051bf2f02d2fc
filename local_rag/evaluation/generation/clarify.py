"""The MTRAG-UN clarification judge, by rules: is a reply a request for clarification?

MTRAG-UN (Rosenthal et al., 2026, Figure 6) counts an UNDERSPECIFIED task as handled when the reply's primary purpose
is to ask for the missing information: a direct clarification question ("Which one are you referring to?") or a
directive request ("Please provide the book you are referring to."), with or without a question mark. Not a
clarification: saying that something is missing without asking for it ("I can't answer because I don't have your
location"), or asking about something unrelated. `ClarificationDetector` follows that instruction with patterns;
checked against the 23 UNDERSPECIFIED references of ``mtragun-dev`` (all must be clarifications) and against the
other references of the same file (none should be), by ``tests/test_clarify_judge.py``.

Example:
    >>> ClarificationDetector().label("There are several oceans. Which one are you referring to?")
    1.0
    >>> ClarificationDetector().label("I can't answer because I don't have your location.")
    0.0
"""

from __future__ import annotations

import re

from local_rag.evaluation.generation.idk import normalize

_ASK = [re.compile(p) for p in (
    r"\bwhich (?:one|ones|of (?:these|them|those|the)|\w+(?: \w+){0,3}) (?:are|were|do|did|is|would) you\b",
    r"\b(?:are|were) you (?:asking|referring|talking|thinking|interested|looking)\b",
    r"\bdo you (?:mean|have (?:a|an|another|any) \w+(?: \w+)? in mind|want to know about)\b",
    r"\b(?:did|do) you mean\b",
    r"\bwhat (?:\w+ ){0,3}(?:do|did|are) you (?:mean|referring|asking|talking|have in mind)\b",
    r"\bcould you (?:please )?(?:clarify|specify|tell me (?:which|what|more)|say which|be more specific|provide more)\b",
    r"\bcan you (?:please )?(?:clarify|specify|tell me (?:which|what)|be more specific|provide more)\b",
    r"\b(?:please|kindly) (?:clarify|specify|provide|tell me|let me know(?! if)|share|indicate|confirm)\b",
    r"\b(?:let me know|tell me) (?:which|what)\b",
    r"\bwhich \w+(?: \w+){0,3} (?:did|do) you have in mind\b",
)]


class ClarificationDetector:
    """Deterministic clarification labels: 1.0 when the reply asks the user which thing they mean, else 0.0."""

    name = "rules"

    def label(self, reply: str) -> float:
        text = normalize(reply)
        if not text:
            return 0.0
        return 1.0 if any(p.search(text) for p in _ASK) else 0.0

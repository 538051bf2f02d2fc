"""The IDK judge: does an answer decline ("I don't know")? Labels as the official judge gives them: 1 = declines,
0.5 = declines in part but answers something, 0 = answers.

`IdkDetector` is deterministic: the configured fixed IDK sentence of the pipeline is always 1; otherwise the answer
is cut into clauses, each marked *decline* ("I do not have information about...", "the documents do not
mention..."), *filler* (apologies, "is there anything else I can help with?", "you may want to check the official
website") or *content*. Some decline and no content: 1; decline and content: 0.5; no decline: 0. Only ``idk == 1``
changes a conditioned score (see `conditioning`), so the 0 / 0.5 line matters less than the 1 line.

`LLMIdkJudge` asks the judge model the official question (yes / partial / no) under a JSON schema.

Example:
    >>> IdkDetector().label("I'm sorry, but I don't have the answer to your question.")
    1.0
    >>> IdkDetector().label("The documents do not say. However, Paris is the capital of France.")
    0.5
    >>> IdkDetector().label("Paris is the capital of France.")
    0.0
    >>> IdkDetector().label("I apologize, but I'm not able to assist with that.")
    1.0
"""

from __future__ import annotations

import re
from typing import Any

from local_rag.llm.base import LLM

#: used when neither gen_eval.idk_sentence nor the generator's generate.idk_answer is set
DEFAULT_IDK_SENTENCE = "I'm sorry, but I don't have the answer to that in the documents I have."

_NEG = r"(?:do not|don't|dont|did not|didn't|does not|doesn't|could not|couldn't|cannot|can't|can not|was not able to|am not able to|am unable to|'m unable to|'m not able to)"
_INFO = r"(?:information|answer|answers|details|data|knowledge|reference|references|mention|record|records|response|specifics|documentation|info)"
_DOCS = r"(?:document|documents|passage|passages|context|contexts|text|texts|sources?|articles?|data|references?|materials?|records?|information)"
_DOC_VERBS = (
    r"(?:contain|provide|include|mention|say|specify|state|describe|discuss|address|cover|answer|give|offer|have|"
    r"tell|indicate|explain|list|detail|show|offer|clarify|reference|talk about|go into)"
)

DECLINE = [re.compile(p) for p in (
    r"\bi " + _NEG + r" know\b",
    r"\bi " + _NEG + r" (?:have|find|see|locate|get|possess|access)\b.{0,80}?\b" + _INFO + r"\b",
    r"\bi " + _NEG + r" (?:have|find|see|locate) (?:that|this|it|any)\b",
    r"\bi (?:have|found|see|could find|can find) no\b.{0,40}?\b" + _INFO + r"\b",
    r"\b(?:i|we)(?: am|'m| are|'re)? (?:unable|not able) to (?:answer|provide|find|tell|help|assist|determine|say|locate|confirm|give|specify|respond|recommend|offer)",
    r"\bi " + _NEG + r" (?:\w+ly )?(?:answer|provide|tell|determine|say|confirm|specify|recommend|give you|respond|help|assist)",
    r"\bi " + _NEG + r" (?:find|locate|understand)\b",
    r"\bi " + _NEG + r" have\b.{0,60}\bto share\b",
    r"\b(?:the |your )?(?:question|request) is (?:not clear|unclear|ambiguous)",
    r"\b" + _DOCS + r"\b(?: \w+){0,3} (?:does|do|did)(?: not|n't) (?:\w+ly )?" + _DOC_VERBS,
    r"\b(?:there is|there's|there are|there was) no\b.{0,40}?\b" + _INFO + r"\b",
    r"\bno (?:specific |relevant |further |additional |other )?(?:information|documents?|passages?|answer|details|data|results?)"
    r" (?:\w+ )?(?:is |are |was |were )?(?:found|available|provided|given|present|exists?|about|on|regarding)\b",
    r"\b(?:not|isn't|is not) (?:enough|sufficient) (?:information|context|details|data)",
    r"\b(?:insufficient|not enough|no sufficient) (?:information|context|details|data)",
    r"\bi(?: am|'m) not (?:sure|aware|certain)\b",
    r"\b(?:beyond|outside) (?:the scope|my knowledge)",
    r"\b" + _NEG + r" (?:find|locate) (?:any|the|a|an|that|this|specific|relevant)? ?" + _INFO,
    r"\bunable to (?:find|locate|answer|provide|determine)\b",
    r"\bi (?:have|had) no (?:idea|way of knowing)\b",
    r"\b(?:is|are) not (?:mentioned|provided|specified|covered|discussed|described|available) in the " + _DOCS,
)]

FILLER = [re.compile(p) for p in (
    r"^(?:(?:i am|i'm|we are|we're|i|we) )?(?:so |very )?(?:sorry|afraid|apologi[sz]e)\b",
    r"^(?:sorry|unfortunately|apologies|regrettably|yes|no|ok|okay)$",
    r"\b(?:is there )?anything else (?:i|we) (?:can|could|may) (?:help|assist)",
    r"\blet me know if\b",
    r"\bfeel free to (?:ask|reach|contact|check)\b",
    r"\b(?:i|we) (?:would |can )?(?:suggest|recommend)(?:ing)? (?:checking|visiting|consulting|contacting|looking|referring|searching|reaching|that you)",
    r"\byou (?:may|might|could|can|should|would) (?:want to |wish to |need to )?(?:check|visit|consult|contact|look|refer|try|search|reach|find out|ask)",
    r"\b(?:please|kindly) (?:check|visit|consult|contact|refer|ask|provide|clarify|rephrase)",
    r"\bi can (?:only )?(?:help|assist)(?: you)? with\b",
    r"\b(?:here is|here's|there is|there's) (?:a|the) (?:site|link|website|page|resource)",
    r"\bfor (?:the )?(?:most )?(?:up-to-date|accurate|latest|current|more) (?:information|details)",
    r"\b(?:i hope|hope) (?:this|that) helps\b",
    r"^(?:however|but|although),? (?:i|we) (?:can|could|may) (?:help|assist|suggest|recommend)",
)]

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_ROLE = re.compile(r"^(?:user|assistant|agent|system)\s*:\s*")
_LEADING = re.compile(r"^(?:although|though|while|even though|whilst) ([^,]+),\s*")
_CLAUSES = re.compile(r",?\s+(?:but|however|although|though|yet)\s*,?\s+|;\s*|,\s*however,?\s*", re.IGNORECASE)


def normalize(text: str) -> str:
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'").replace("\u201c", '"')
    return " ".join(text.lower().replace("\u201d", '"').split())


def clauses(text: str) -> list[str]:
    """The answer cut into sentences, and sentences at "but", "however", ";" and after a leading "although ...,"."""
    out = []
    for sentence in _SENTENCES.split(normalize(text)):
        sentence = _ROLE.sub("", sentence)  # "user: i'm sorry, ...": a small model echoing the prompt's framing
        head = _LEADING.match(sentence)
        if head:
            out.append(head.group(1))
            sentence = sentence[head.end():]
        out += [c.strip(" .!?,:;\"'()") for c in _CLAUSES.split(sentence)]
    return [c for c in out if c]


def clause_kind(clause: str) -> str:
    """``decline``, ``filler`` or ``content``."""
    if any(p.search(clause) for p in DECLINE):
        return "decline"
    if any(p.search(clause) for p in FILLER) or len(clause.split()) < 2:
        return "filler"
    return "content"


class IdkDetector:
    """Deterministic IDK labels; ``idk_sentence`` (the pipeline's fixed answer) always counts as declining."""

    name = "rules"

    def __init__(self, idk_sentence: str = "") -> None:
        self.idk_sentence = normalize(idk_sentence).strip(" .!") if idk_sentence else ""

    def label(self, answer: str, question: str = "") -> float:
        text = normalize(answer)
        if not text:
            return 0.0  # an empty answer does not say it cannot answer (the official judge says "no")
        if self.idk_sentence and text.strip(" .!").startswith(self.idk_sentence):
            rest = text.strip(" .!")[len(self.idk_sentence):]
            if not any(clause_kind(c) == "content" for c in clauses(rest)):
                return 1.0
        kinds = [clause_kind(c) for c in clauses(text)]
        if "decline" not in kinds:
            return 0.0
        return 0.5 if "content" in kinds else 1.0


IDK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"label": {"type": "string", "enum": ["yes", "partial", "no"]}},
    "required": ["label"],
}
_LABELS = {"yes": 1.0, "partial": 0.5, "no": 0.0}


class LLMIdkJudge:
    """The official IDK question put to the judge model (prompt ``idk`` in this package's ``prompts/``).

    A reply that does not decode scores 0.5, as an unparsable reply does officially.
    """

    name = "llm"

    def __init__(self, llm: LLM, idk_sentence: str = "") -> None:
        from local_rag.evaluation.generation.prompts import load_eval_prompt

        self.llm = llm
        self.prompt = load_eval_prompt("idk")
        self.fixed = IdkDetector(idk_sentence) if idk_sentence else None

    def label(self, answer: str, question: str = "") -> float:
        if self.fixed is not None and self.fixed.idk_sentence and \
                normalize(answer).strip(" .!") == self.fixed.idk_sentence:
            return 1.0
        data, _ = self.llm.run_json(
            self.prompt.messages(inquiry=question, response=answer), self.prompt.schema or IDK_SCHEMA,
            stage="eval-idk", max_tokens=self.prompt.max_tokens,
        )
        label = data.get("label") if isinstance(data, dict) else None
        return _LABELS.get(str(label).lower(), 0.5)

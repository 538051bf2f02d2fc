"""Grounded answers: passages as the only source of facts, citations checked, a fixed "I don't know", and a
clarifying question when the turn is ambiguous.

The model sees numbered passages, the conversation (to resolve what the user means) and the last turn as the
question (``prompts/answer.yaml``). Its reply is then checked: citations ``[n]`` outside the passages given are
removed and counted, a decline becomes the configured IDK sentence, and a reply starting ``CLARIFY:`` is returned
as a clarifying question.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from local_rag.llm.base import LLM, Message
from local_rag.llm.budget import truncate
from local_rag.llm.context import conversation_text, last_question, passages_text
from local_rag.llm.prompts import load_prompt
from local_rag.records import Answer, Citation, Conversation, Hit, LLMCall
from local_rag.settings import GenerateConfig
from local_rag.text import CITATION

log = logging.getLogger("local_rag.llm.generate")
_DECLINE = re.compile(
    r"\b(i (?:do not|don't|cannot|can't) (?:know|answer|find|say)|"
    r"i (?:do not|don't) have (?:the |an |any |enough )?(?:answer|information)|(?:is|are) not (?:mentioned|provided|stated|given|"
    r"included|available|specified)|(?:passages|documents|context|texts?) (?:do(?:es)? not|don't|doesn't) "
    r"(?:contain|mention|provide|say|include|specify)|no (?:information|mention|details?) (?:about|on|of|in)|"
    r"there is no information|not enough information|unable to (?:answer|find|determine))",
    re.IGNORECASE,
)

_ROLE_ECHO = re.compile(r"^(?:user|assistant|agent)\s*:\s*", re.IGNORECASE)


def is_decline(text: str, idk_answer: str = "") -> bool:
    """True when ``text`` declines to answer: the configured IDK sentence, or a short reply that says the
    information is missing without citing anything.

    Example:
        >>> is_decline("The documents do not mention the price.")
        True
        >>> is_decline("It costs 5 dollars [1].")
        False
    """
    norm = " ".join(text.lower().split())
    if idk_answer and " ".join(idk_answer.lower().split()) in norm:
        return True
    if not norm:
        return True
    return bool(_DECLINE.search(norm)) and not CITATION.search(text) and len(norm.split()) <= 60


def check_citations(text: str, n_passages: int) -> tuple[str, list[int], int]:
    """Remove citations to passages that were not given. Returns (text, valid numbers in order, invalid count).

    Example:
        >>> check_citations("A [1]. B [2, 7]. C [9].", 2)
        ('A [1]. B [2]. C.', [1, 2], 2)
    """
    valid: list[int] = []
    invalid = 0

    def fix(match: re.Match[str]) -> str:
        nonlocal invalid
        keep = []
        for part in match.group(1).split(","):
            n = int(part)
            if 1 <= n <= n_passages:
                keep.append(n)
                if n not in valid:
                    valid.append(n)
            else:
                invalid += 1
        return f"[{', '.join(map(str, keep))}]" if keep else ""

    cleaned = CITATION.sub(fix, text)
    cleaned = re.sub(r"\s+([.,;:!?])", r"\1", cleaned)
    return re.sub(r"[ \t]{2,}", " ", cleaned).strip(), valid, invalid


class Generator:
    """Writes the grounded answer of a turn from its passages.

    Example:
        >>> answer = Generator(llm, settings.generate).answer(conversation, hits)  # doctest: +SKIP
        >>> answer.kind, [c.passage_id for c in answer.citations]  # doctest: +SKIP
    """

    def __init__(self, llm: LLM, config: GenerateConfig | None = None) -> None:
        self.llm = llm
        self.config = config or GenerateConfig()
        self.prompt = load_prompt(self.config.prompt)
        self._warned = False  # the IDK gate's backend warning, once

    @staticmethod
    def idk(config: GenerateConfig) -> Answer:
        """The fixed IDK answer (no passage survived filtering: the LLM is not called)."""
        return Answer(config.idk_answer, "decline")

    def messages(self, conversation: Conversation, hits: list[Hit]) -> list[Message]:
        cfg = self.config
        question = last_question(conversation)
        room = max(64, self.llm.n_ctx // 4)
        if self.llm.count_tokens(question) > room:
            question = truncate(question, room, self.llm.count_tokens)
            log.warning("generate: the question was cut to %d tokens to fit the context", room)
        system = self.prompt.system.format(idk=cfg.idk_answer, max_words=cfg.max_words)
        if not cfg.clarify:
            system = "\n".join(line for line in system.splitlines() if "CLARIFY" not in line)
        earlier = Conversation(conversation.turns[:-1] if conversation.turns and conversation.turns[-1].speaker == "user" else conversation.turns)
        history = conversation_text(earlier, self.llm, cfg.history_tokens, cfg.agent_turn_tokens, "generate",
                                    cfg.history_step) or "(none)"
        fixed = self.llm.count_tokens(system) + self.llm.count_tokens(question) + self.llm.count_tokens(history) + 64
        fixed += sum(self.llm.count_tokens(u) + self.llm.count_tokens(a) for u, a in self.prompt.examples)
        budget = max(64, self.llm.n_ctx - cfg.max_tokens - fixed)
        passages = passages_text(hits, self.llm, budget, cfg.passage_tokens, "generate")
        out: list[Message] = [{"role": "system", "content": system.strip()}]
        for user, assistant in self.prompt.examples:
            out += [{"role": "user", "content": user.strip()}, {"role": "assistant", "content": assistant.strip()}]
        out.append({"role": "user", "content": self.prompt.render_user(passages=passages, history=history, question=question, idk=cfg.idk_answer, idk_hint="").strip()})
        return out

    def answer(self, conversation: Conversation, hits: list[Hit], on_token: Callable[[str], None] | None = None) -> Answer:
        """The answer to the last user turn of ``conversation`` from ``hits`` (the first ``config.passages``)."""
        cfg = self.config
        last_question(conversation)  # a clear error for an empty conversation, before any model call
        hits = hits[: cfg.passages]
        if not hits:
            return self.idk(cfg)
        messages = self.messages(conversation, hits)
        score, gate = self.idk_score(messages), cfg.idk_gate
        if score is not None and gate is not None and score > gate:  # declined before a word is written
            return Answer(cfg.idk_answer, "decline", passages=hits, idk_score=score, gate="idk")
        done = self.llm.run(messages, stage="generate", max_tokens=cfg.max_tokens, on_token=on_token)
        answer = self.parse(done.text, hits, done.call)
        answer.idk_score = score
        return answer

    def idk_score(self, messages: list[Message]) -> float | None:
        """With ``generate.idk_gate`` set: the mean log-probability of the reply to ``messages`` beginning with the
        decline sentence (its first ``idk_gate_tokens`` tokens). Scored on the answer's own prompt, whose prefill the
        answer then reuses (its prefill is then one token: 0.1 s with Qwen2.5-Coder-1.5B on 2 cores). ``None`` when off or the backend cannot score."""
        cfg = self.config
        if cfg.idk_gate is None:
            return None
        logprobs = self.llm.score(messages, cfg.idk_answer, stage="idk-gate", n_tokens=cfg.idk_gate_tokens)
        if not logprobs:
            if logprobs is None and not self._warned:
                log.warning("generate.idk_gate: %s cannot score a reply; the gate is off", type(self.llm).__name__)
                self._warned = True
            return None
        return round(sum(logprobs) / len(logprobs), 4)

    def parse(self, raw: str, hits: list[Hit], call: LLMCall | None = None) -> Answer:
        cfg = self.config
        text = _ROLE_ECHO.sub("", raw.strip(), count=1)  # small models echo the prompt's "User:" framing
        if cfg.clarify and text.upper().startswith("CLARIFY:"):
            return Answer(text[len("CLARIFY:") :].strip(), "clarify", passages=hits, raw=raw, call=call)
        if is_decline(text, cfg.idk_answer):
            return Answer(cfg.idk_answer, "decline", passages=hits, raw=raw, call=call)
        text, numbers, invalid = check_citations(text, len(hits))
        attributed = 0
        if not numbers and cfg.attribute:
            from local_rag.llm.attribute import attribute

            text, numbers = attribute(text, [f"{h.title} {h.text}" for h in hits])
            attributed = len(numbers)
        citations = [Citation.of(n, hits[n - 1]) for n in numbers]
        return Answer(text, "answer", citations, invalid, hits, raw, call, attributed=attributed)

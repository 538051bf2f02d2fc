"""The LLM judges: RL_F (RAGAS faithfulness) and RB_llm (1-10 against the reference), on the judge model.

- **RL_F**, as RAGAS ``faithfulness`` (which the official scorer runs): the judge breaks the answer into standalone
  claims, then marks each claim supported (1) or not (0) by the passages; RL_F = supported / claims. An answer with
  no claims has no RL_F (``None``; RAGAS gives NaN), and such tasks are left out of the means.
- **RB_llm**: the judge rates the answer 1-10 against the reference answer, the conversation and the documents;
  the score is rating / 10, and 0.5 when the reply gives no usable rating (the official fallback).

Both replies are constrained by a JSON schema (a llama.cpp grammar), never parsed from free text. The two
document-grounded calls (claim verdicts, then the rating) open with the same system message and the same rendered
documents (`judge_documents`, prompt ``documents``), so llama.cpp reuses the documents' KV cache and the second call
only processes its own instructions: on a CPU, where prompt processing dominates, this saves about a third of the
judging time.

Example:
    >>> rl_f = Faithfulness(llm).score("user: what is BM25?", "BM25 ranks documents.", ["BM25 is ..."])  # doctest: +SKIP
    >>> rl_f.value, rl_f.claims  # doctest: +SKIP
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from local_rag.llm.base import LLM, Message
from local_rag.llm.budget import fit_passages, truncate
from local_rag.llm.context import prompt_room
from local_rag.llm.prompts import Prompt

RATING_FALLBACK = 0.5


@dataclass
class JudgeResult:
    """A judge's score and what it was made of (kept in the scored record for inspection)."""

    value: float | None
    claims: list[str] = field(default_factory=list)
    verdicts: list[int | None] = field(default_factory=list)
    rating: int | None = None


def documents_budget(llm: LLM) -> int:
    """Tokens for the rendered documents: half the context, leaving room for the conversation, answers and reply."""
    return max(256, min(llm.n_ctx // 2, llm.n_ctx - 1536))


def judge_documents(llm: LLM, passages: Sequence[str], max_each: int = 384, stage: str = "eval-judge") -> str:
    """``[1] text`` lines of the passages, each cut to ``max_each`` tokens, all within `documents_budget`.

    Render once per task and pass the same string to both judges, so their prompts share the documents prefix.
    """
    if not passages:
        return "(no documents)"
    texts = [" ".join(t.split()) for t in passages]
    fitted, _ = fit_passages(texts, documents_budget(llm), llm.count_tokens, max_each, stage)
    return "\n".join(f"[{i}] {t}" for i, t in enumerate(fitted, 1))


def grounded_messages(task: Prompt, documents: str, **fields: str) -> list[Message]:
    """The shared head (system message + documents), then the judge's instructions and its fields."""
    from local_rag.evaluation.generation.prompts import load_eval_prompt

    head = load_eval_prompt("documents")
    user = "\n\n".join([head.render_user(documents=documents).strip(), task.system.strip(),
                         task.render_user(**fields).strip()])
    return [{"role": "system", "content": head.system.strip()}, {"role": "user", "content": user}]


def recent_lines(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """The most recent lines of a conversation that fit ``max_tokens`` (oldest lines dropped first)."""
    lines = text.splitlines()
    while len(lines) > 1 and count("\n".join(lines)) > max_tokens:
        lines.pop(0)
    return truncate("\n".join(lines), max_tokens, count)


def _room(llm: LLM, task: Prompt, documents: str, max_tokens: int, **fields: str) -> int:
    """Tokens left for the variable fields once the documents, the fixed text and the reply fit."""
    fixed = sum(llm.count_tokens(m["content"]) + 8 for m in grounded_messages(task, documents, **fields))
    return llm.n_ctx - max_tokens - fixed


class Faithfulness:
    """RL_F with the judge model. See the module docstring."""

    def __init__(self, llm: LLM, max_claims: int = 10, passage_tokens: int = 384) -> None:
        from local_rag.evaluation.generation.prompts import load_eval_prompt

        self.llm = llm
        self.max_claims = max_claims
        self.passage_tokens = passage_tokens
        self.claims_prompt = load_eval_prompt("claims")
        self.verdicts_prompt = load_eval_prompt("verdicts")

    def claims(self, question: str, answer: str) -> list[str]:
        """The answer's standalone claims (at most ``max_claims``)."""
        prompt = self.claims_prompt
        room = prompt_room(self.llm, prompt, prompt.max_tokens, question="", answer="")
        question = recent_lines(question, max(room // 4, 32), self.llm.count_tokens)
        answer = truncate(answer, max(room - self.llm.count_tokens(question), 32), self.llm.count_tokens)
        schema = copy.deepcopy(prompt.schema) or {}
        schema["properties"]["claims"]["maxItems"] = self.max_claims
        data, _ = self.llm.run_json(prompt.messages(question=question, answer=answer), schema,
                                    stage="eval-claims", max_tokens=prompt.max_tokens)
        items = data.get("claims") if isinstance(data, dict) else None
        out: list[str] = []
        seen: set[str] = set()
        for claim in items if isinstance(items, list) else []:
            text = " ".join(claim.split()) if isinstance(claim, str) else ""
            if text and text.lower() not in seen:  # small judges repeat claims; a repeat must not weigh twice
                seen.add(text.lower())
                out.append(text)
        return out[: self.max_claims]

    def verdicts(self, claims: list[str], documents: str) -> list[int | None]:
        """1 / 0 per claim against the rendered ``documents`` (`judge_documents`); ``None`` where no verdict came."""
        prompt = self.verdicts_prompt
        n = len(claims)
        max_tokens = min(prompt.max_tokens, 12 * n + 24)
        room = _room(self.llm, prompt, documents, max_tokens, claims="", n=str(n))
        claims_text = truncate("\n".join(f"{i}. {c}" for i, c in enumerate(claims, 1)), max(room, 32),
                               self.llm.count_tokens)
        schema = copy.deepcopy(prompt.schema) or {}
        schema["properties"]["verdicts"]["maxItems"] = n
        schema["properties"]["verdicts"]["items"]["properties"]["id"]["maximum"] = n
        data, _ = self.llm.run_json(grounded_messages(prompt, documents, claims=claims_text, n=str(n)), schema,
                                    stage="eval-verdicts", max_tokens=max_tokens)
        by_id: dict[int, int] = {}
        items = data.get("verdicts") if isinstance(data, dict) else None
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("id"), int) and item.get("verdict") in (0, 1):
                by_id.setdefault(item["id"], int(item["verdict"]))
        return [by_id.get(i) for i in range(1, n + 1)]

    def score(self, question: str, answer: str, passages: Sequence[str], documents: str | None = None) -> JudgeResult:
        """RL_F of ``answer`` given the conversation text ``question`` and the passages (pre-rendered ``documents``
        may be given, see `judge_documents`)."""
        claims = self.claims(question, answer) if answer.strip() else []
        if not claims:
            return JudgeResult(None)
        if not passages:  # nothing can support a claim
            return JudgeResult(0.0, claims, [0] * len(claims))
        if documents is None:
            documents = judge_documents(self.llm, passages, self.passage_tokens)
        verdicts = self.verdicts(claims, documents)
        judged = [v for v in verdicts if v is not None]
        value = sum(judged) / len(judged) if judged else None
        return JudgeResult(value, claims, verdicts)


class ReferenceJudge:
    """RB_llm with the judge model. See the module docstring."""

    def __init__(self, llm: LLM, passage_tokens: int = 384) -> None:
        from local_rag.evaluation.generation.prompts import load_eval_prompt

        self.llm = llm
        self.passage_tokens = passage_tokens
        self.prompt = load_eval_prompt("rb_llm")

    def score(self, history: str, question: str, reference: str, answer: str, passages: Sequence[str],
              documents: str | None = None) -> JudgeResult:
        """RB_llm of ``answer``; pre-rendered ``documents`` may be given (see `judge_documents`)."""
        prompt = self.prompt
        count = self.llm.count_tokens
        if documents is None:
            documents = judge_documents(self.llm, passages, self.passage_tokens)
        room = _room(self.llm, prompt, documents, prompt.max_tokens, history="", question="", reference="", answer="")
        # the answer, the question and the reference first; the history gets what is left
        answer_t = truncate(answer, max(room // 3, 48), count)
        question_t = truncate(question, max(room // 6, 24), count)
        reference_t = truncate(reference, max(room // 3, 48), count)
        left = room - count(answer_t) - count(question_t) - count(reference_t)
        history_t = recent_lines(history, max(left, 0), count) if history else "(none)"
        data, _ = self.llm.run_json(
            grounded_messages(prompt, documents, history=history_t or "(cut)", question=question_t,
                              reference=reference_t, answer=answer_t),
            prompt.schema or {}, stage="eval-rb-llm", max_tokens=prompt.max_tokens,
        )
        rating = data.get("rating") if isinstance(data, dict) else None
        if isinstance(rating, int) and not isinstance(rating, bool) and 1 <= rating <= 10:
            return JudgeResult(rating / 10, rating=rating)
        return JudgeResult(RATING_FALLBACK)

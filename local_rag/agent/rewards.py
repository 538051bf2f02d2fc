"""ChatR1's rewards as functions over traces (Lupart et al., "ChatR1: Reinforcement Learning for Conversational
Reasoning and Retrieval Augmented Question Answering"), used as training rewards and as evaluation metrics.

- answer reward: token F1 of the final answer against the reference (SQuAD normalisation; ``[n]`` citations dropped);
- intent reward: the best token F1 of any issued query against the gold standalone rewrite (on MTRAG, the
  organizers' ``rewrite`` queries);
- retrieval reward (the alternative to the intent reward): 1 when a gold passage is in the top-k of any search;
- the weighted sum (paper: 1.0 answer + 0.2 intent).

A trace is `TurnResult.trace` / `Rollout.trace`: a list of ``{"type": "think" | "search" | "information" |
"invalid" | "answer" | "error", ...}`` steps.

Example:
    >>> trace = [{"type": "search", "query": "apple tree water"},
    ...          {"type": "information", "passage_ids": ["d1", "d2"]},
    ...          {"type": "answer", "text": "About 5 liters a week [1]."}]
    >>> round(answer_reward(trace_answer(trace), "5 liters a week"), 3)
    0.857
    >>> intent_reward(trace_queries(trace), "how much water does an apple tree need")
    0.6
    >>> retrieval_reward(trace_reads(trace), {"d2"}, k=3)
    1.0
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from local_rag.text import CITATION

ANSWER_WEIGHT = 1.0
INTENT_WEIGHT = 0.2
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)

Trace = Sequence[Mapping[str, Any]]


def normalize(text: str) -> list[str]:
    """SQuAD normalisation: lower case, no citations, punctuation or articles, split on whitespace.

    Example:
        >>> normalize("The answer is: 42 [1].")
        ['answer', 'is', '42']
    """
    text = CITATION.sub(" ", text.lower()).translate(_PUNCT)
    return _ARTICLES.sub(" ", text).split()


def token_f1(prediction: str, reference: str) -> float:
    """Token-level F1 of two texts after `normalize` (0 when either is empty)."""
    pred, ref = normalize(prediction), normalize(reference)
    common = sum((Counter(pred) & Counter(ref)).values())
    if not pred or not ref or not common:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def answer_reward(answer: str | None, references: str | Iterable[str]) -> float:
    """The best `token_f1` of ``answer`` against the reference answer(s); 0 without an answer."""
    if not answer:
        return 0.0
    refs = [references] if isinstance(references, str) else list(references)
    return max((token_f1(answer, r) for r in refs if r), default=0.0)


def intent_reward(queries: Sequence[str], gold_rewrite: str) -> float:
    """The best `token_f1` of any issued query against the gold rewrite; 0 when no search was issued."""
    return max((token_f1(q, gold_rewrite) for q in queries), default=0.0)


def retrieval_reward(reads: Sequence[Sequence[str]], gold_ids: Iterable[str], k: int = 3) -> float:
    """1.0 when a gold passage id is among the first ``k`` passages of any search, else 0.0."""
    gold = set(gold_ids)
    return 1.0 if any(pid in gold for ids in reads for pid in list(ids)[:k]) else 0.0


def combined_reward(answer: float, intent: float, answer_weight: float = ANSWER_WEIGHT,
                    intent_weight: float = INTENT_WEIGHT) -> float:
    """The weighted sum of the answer reward and the intent (or retrieval) reward."""
    return answer_weight * answer + intent_weight * intent


def trace_queries(trace: Trace) -> list[str]:
    """The queries the trace searched, in order."""
    return [str(s["query"]) for s in trace if s.get("type") == "search"]


def trace_reads(trace: Trace) -> list[list[str]]:
    """Per search, the passage ids it returned (in rank order)."""
    return [list(s.get("passage_ids", [])) for s in trace if s.get("type") == "information"]


def trace_answer(trace: Trace) -> str:
    """The final answer text of the trace ('' when it has none)."""
    answers = [str(s.get("text", "")) for s in trace if s.get("type") == "answer"]
    return answers[-1] if answers else ""


def score_trace(trace: Trace, reference: str | Iterable[str], gold_rewrite: str | None = None,
                gold_ids: Iterable[str] | None = None, k: int = 3, answer_weight: float = ANSWER_WEIGHT,
                intent_weight: float = INTENT_WEIGHT) -> dict[str, float]:
    """All rewards of one trace: ``answer_f1``, ``intent`` and/or ``retrieval`` (when their labels are given),
    ``searches``, and ``reward`` (answer + intent, or answer + retrieval without a gold rewrite)."""
    out = {"answer_f1": answer_reward(trace_answer(trace), reference), "searches": float(len(trace_queries(trace)))}
    if gold_rewrite is not None:
        out["intent"] = intent_reward(trace_queries(trace), gold_rewrite)
    if gold_ids is not None:
        out["retrieval"] = retrieval_reward(trace_reads(trace), gold_ids, k)
    second = out.get("intent", out.get("retrieval", 0.0))
    out["reward"] = combined_reward(out["answer_f1"], second, answer_weight, intent_weight)
    return out

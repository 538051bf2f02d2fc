"""Containment examples: does a text *hold the answer*, or only talk about the question's subject?

A relevance cross-encoder scores MTRAG's unanswerable questions as high as answerable ones: their passages are on
topic. These examples teach the other distinction, from the reference answers of answerable tasks, without an LLM:

- ``unit="sentence"`` (`answer_sentence_pairs`): the sentence of a gold passage that carries most of the answer
  (label 1) against sentences of the same passage, and optionally of other retrieved documents, that hold at most one
  of its words (label 0); a model trained on them scores a passage by its best sentence (``reranker.unit: sentence``);
- ``unit="passage"`` (`ablate`): the passage without the sentences that carry the answer (label 0) against the
  passage without as many other sentences (label 1: it still answers; length and the question's words alike).

The sentences that carry the answer are found by a greedy cover of the reference answer's content words that the
question does not already say (its new information) and that the passage holds: the sentence covering most of the
words still uncovered, then the next, while a sentence adds ``min_new`` words or more. A passage gives no pair when it
holds under ``min_held`` of the answer's new words (the answer draws on another passage) or, for the passage unit,
when the chosen sentences cover under ``min_cover`` of those it holds (the answer is spread thin: no clean cut).

Example:
    >>> cut = ablate("Mars\\nMars is red. Its two moons are Phobos and Deimos. It has dust storms. Winds are strong.",
    ...              "What moons has Mars?", "Mars has two moons: Phobos and Deimos.")
    >>> cut.without
    'Mars\\nMars is red. It has dust storms. Winds are strong.'
    >>> cut.removed, cut.cover
    (1, 1.0)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from local_rag.decide.turns import content_words
from local_rag.evaluation.generation.official import answerability
from local_rag.mtrag import task_domain
from local_rag.text import split_sentences
from local_rag.train.data import Example, passage_text

MODE = "contain"


@dataclass
class Ablation:
    """One passage cut two ways: ``answer`` still holds the answer, ``without`` lost the sentences that carry it."""

    answer: str
    without: str
    removed: int  # sentences removed from each
    cover: float  # share of the answer's new words the removed sentences hold


def answer_sentences(sentences: Sequence[str], question: str, answer: str, min_new: int = 2) -> tuple[list[int], float, float]:
    """Indexes of the sentences that carry ``answer``, best first: a greedy cover of its content words that
    ``question`` does not say and the sentences hold. Also returns the share of those words the sentences hold
    (``held``) and the share of the held ones the chosen sentences cover."""
    wanted = set(content_words(answer)) - set(content_words(question))
    words = [set(content_words(s)) for s in sentences]
    held = wanted & set().union(*words)
    if not held:
        return [], 0.0, 0.0
    left, chosen = set(held), list[int]()
    while left:
        gain, best = max(((len(w & left), i) for i, w in enumerate(words) if i not in chosen), default=(0, -1))
        if gain < min_new:
            break
        chosen.append(best)
        left -= words[best]
    return chosen, len(held) / len(wanted), 1 - len(left) / len(held)


def _title_body(passage: str) -> tuple[str, str]:
    """A passage's first line is its title when it has no full stop and text follows."""
    title, _, body = passage.partition("\n")
    if not body or title.rstrip().endswith((".", "?", "!")):
        return "", passage
    return title, body


def _with_title(title: str, text: str) -> str:
    return f"{title}\n{text}" if title else text


def ablate(passage: str, question: str, answer: str, min_held: float = 0.3, min_cover: float = 0.8, min_new: int = 2,
           rng: random.Random | None = None) -> Ablation | None:
    """The two cuts of ``passage`` (its title kept), or None when the answer is not found in it, or when it has too
    few other sentences to cut a like number from."""
    title, body = _title_body(passage)
    sentences = split_sentences(body)
    carry, held, cover = answer_sentences(sentences, question, answer, min_new)
    others = [i for i in range(len(sentences)) if i not in carry]
    if not carry or held < min_held or cover < min_cover or len(others) < len(carry) + 1:
        return None
    dropped = set((rng or random.Random(0)).sample(others, len(carry)))

    def joined(skip: set[int]) -> str:
        return _with_title(title, " ".join(s for i, s in enumerate(sentences) if i not in skip))

    return Ablation(joined(dropped), joined(set(carry)), len(carry), round(cover, 3))


def _clean_sentences(passages: Sequence[str], question: str, answer: str, skip: tuple[int, set[int]] = (-1, set())) -> list[str]:
    """Sentences of ``passages`` (each under its title) that hold at most one of the answer's new words, those sharing
    most of the question's words first (``skip``: a passage index and its sentences left out)."""
    answer_words = set(content_words(answer)) - set(content_words(question))
    asked = set(content_words(question))
    ranked = []
    for p, passage in enumerate(passages):
        title, body = _title_body(passage)
        for i, sentence in enumerate(split_sentences(body)):
            words = set(content_words(sentence))
            if not (p == skip[0] and i in skip[1]) and len(answer_words & words) <= 1:
                ranked.append((-len(asked & words), p, i, _with_title(title, sentence)))
    return [text for *_, text in sorted(ranked)]


def answer_sentence_pairs(
    passage: str, question: str, answer: str, negatives: int = 3, min_held: float = 0.3, min_new: int = 2,
    mined: Sequence[str] = (), mined_negatives: int = 0,
) -> tuple[str, list[str], list[str]] | None:
    """The sentence of ``passage`` that carries most of the answer, and up to ``negatives`` sentences of the same
    passage that hold at most one of its words (those sharing most of the question's words first), then up to
    ``mined_negatives`` such sentences of the ``mined`` passages (other documents the retriever found for the
    question), each under its passage's title: (positive, negatives of the passage, mined negatives), or None when
    the answer is not found in the passage or no negative is left."""
    title, body = _title_body(passage)
    sentences = split_sentences(body)
    carry, held, _ = answer_sentences(sentences, question, answer, min_new)
    if not carry or held < min_held:
        return None
    own = _clean_sentences([passage], question, answer, (0, set(carry)))[:negatives]
    other = _clean_sentences(mined, question, answer)[:mined_negatives] if mined_negatives else []
    return (_with_title(title, sentences[carry[0]]), own, other) if own or other else None


def _user_turn(task: dict[str, Any]) -> str:
    turns = [t for t in task.get("input") or [] if isinstance(t, dict) and t.get("speaker") == "user"]
    return str(turns[-1].get("text", "")).strip() if turns else ""


def containment_examples(
    tasks: Sequence[dict[str, Any]], conversations: set[str], queries: dict[str, dict[str, str]] | None = None,
    min_held: float = 0.3, min_cover: float = 0.8, seed: int = 12, unit: str = "passage", negatives: int = 3,
    mined: dict[tuple[str, str], list[str]] | None = None, mined_negatives: int = 0,
) -> list[Example]:
    """Containment examples per (ANSWERABLE task of ``conversations``, query text, gold passage). Query texts:
    ``queries[task_id]`` (mode -> text, e.g. the organizers' rewrite) when given, else the last user turn (mode
    ``lastturn``). ``unit="passage"``: positive the passage still answering, one negative the passage without its
    answer (`ablate`); ``unit="sentence"``: positive the sentence carrying most of the answer, negatives other
    sentences of the passage holding at most one of its words, and of the hard negatives ``mined[(task_id, mode)]``
    (`answer_sentence_pairs`)."""
    out: list[Example] = []
    for task in tasks:
        task_id, conversation = str(task.get("task_id", "")), str(task.get("conversation_id", ""))
        if conversation not in conversations or answerability(task) != "ANSWERABLE" or not task.get("targets"):
            continue
        target = task["targets"][0]
        answer = str(target.get("text", "")) if isinstance(target, dict) else ""
        texts = (queries or {}).get(task_id) or {"lastturn": _user_turn(task)}
        for mode, question in sorted(texts.items()):
            if not question.strip():
                continue
            for context in [c for c in task.get("contexts") or [] if isinstance(c, dict)]:
                pid, passage = str(context.get("document_id", "")), passage_text(context)
                if unit == "sentence":
                    found = answer_sentence_pairs(passage, question, answer, negatives, min_held,
                                                  mined=(mined or {}).get((task_id, mode), ()), mined_negatives=mined_negatives)
                    if found is not None:
                        positive, own, other = found
                        out.append(Example(task_id, task_domain(task), f"{MODE}-{mode}", question, positive,
                                           f"{pid}#answer", own + other, [f"{pid}#other"] * len(own) + ["mined"] * len(other)))
                    continue
                cut = ablate(passage, question, answer, min_held, min_cover, rng=random.Random(f"{seed}|{task_id}|{pid}"))
                if cut is not None:
                    out.append(Example(task_id, task_domain(task), f"{MODE}-{mode}", question, cut.answer, pid,
                                       [cut.without], [f"{pid}#without-answer"]))
    return out

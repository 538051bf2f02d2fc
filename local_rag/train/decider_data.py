"""Training and evaluation examples for the decision stage, from MTRAG, MTRAG-UN and synthetic underspecified turns.

- MTRAG tasks (``generation_tasks/mtrag_tasks.jsonl``) give ``answer`` (ANSWERABLE, PARTIAL), ``decline``
  (UNANSWERABLE) and ``chitchat`` (CONVERSATIONAL), for the conversations of a split file.
- MTRAG-UN development tasks (``mtragun-dev``) add ``clarify`` (UNDERSPECIFIED) and more declines.
- Synthetic underspecified turns: a named thing of a standalone MTRAG question replaced by "this <kind of thing>",
  asked alone or stitched after another conversation (as MTRAG-UN stitched its questions), so that nothing before
  it introduces the thing.

Every example gets its evidence (the hits retrieval gives its last turn) from `attach_evidence`.

Example:
    >>> examples = mtrag_examples(Path("../shared/mtrag/generation_tasks/mtrag_tasks.jsonl"), train_ids)  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_rag.decide.turns import resolve_clarification
from local_rag.evaluation.generation.kinds import KIND_OF
from local_rag.evaluation.generation.official import answerability
from local_rag.mtrag import load_generation_tasks, parse_conversation, task_domain
from local_rag.records import Conversation, Hit, Query, Turn

# what a replaced named thing may be called, per domain (a wrong guess still leaves "this X" never introduced)
THINGS = {
    "clapnq": ("country", "city", "person", "team", "film", "show", "company", "band", "book", "war", "song", "player"),
    "govt": ("program", "agency", "office", "park", "library", "state", "form", "benefit", "county", "law"),
    "cloud": ("service", "plan", "tool", "instance", "cluster", "region", "account", "feature", "database"),
    "fiqa": ("stock", "fund", "bond", "credit card", "account", "company", "loan", "tax", "policy", "bank"),
}
EVIDENCE = 10  # hits an example keeps (the decider's features read at most these)
_NAME = re.compile(r"\b(?:[Tt]he\s+)?([A-Z][\w'&.-]*(?:\s+(?:(?:of|and|de|the)\s+)?[A-Z][\w'&.-]*)*)\b")


@dataclass
class Example:
    """One turn to decide: its conversation, gold class, the kind wanted, and its evidence once attached."""

    id: str
    group: str  # conversation: cross-validation folds never split one
    source: str  # mtrag-train | mtrag-test | mtragun-dev | synthetic
    domain: str
    gold: str
    conversation: Conversation
    hits: list[Hit] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return KIND_OF.get(self.gold, "answer")


def task_examples(tasks: Iterable[dict[str, Any]], source: str, keep: Callable[[dict[str, Any]], bool]) -> list[Example]:
    out = []
    for task in tasks:
        if not keep(task):
            continue
        gold = answerability(task)
        # as the pipeline sees it: a reply to a clarifying question is resolved before the decision
        conversation = resolve_clarification(parse_conversation(task["input"], where=f"task {task['task_id']}"))
        conversation.id = str(task["task_id"])
        out.append(Example(str(task["task_id"]), str(task.get("conversation_id") or task["task_id"]).split("<::>")[0],
                           source, task_domain(task), gold, conversation))
    return out


def mtrag_examples(path: Path, conversations: set[str], source: str) -> list[Example]:
    """The MTRAG tasks of ``conversations`` (a split)."""
    tasks = load_generation_tasks(path)
    return task_examples(tasks, source, lambda t: str(t.get("conversation_id") or t["task_id"]).split("<::>")[0] in conversations)


def first_turns(conversation: Conversation) -> str:
    return " ".join(conversation.user_turns[:1]).strip().lower()


def mtragun_examples(path: Path, avoid: Sequence[Example] = ()) -> list[Example]:
    """MTRAG-UN development tasks, without those stitched onto a conversation of ``avoid`` (e.g. the MTRAG test
    split: their history would leak into training)."""
    seen = {first_turns(e.conversation) for e in avoid}
    examples = task_examples(load_generation_tasks(path), "mtragun-dev", lambda t: True)
    return [e for e in examples if len(e.conversation.user_turns) < 2 or first_turns(e.conversation) not in seen]


def _seeded(key: str, seed: int) -> random.Random:
    return random.Random(int(hashlib.sha1(f"{seed}:{key}".encode()).hexdigest()[:12], 16))


def underspecify(question: str, domain: str, rng: random.Random, article: str = "this") -> tuple[str, str] | None:
    """``question`` with its longest capitalized name (not the first word alone) replaced by '<article> <thing>'
    ('this country', or with ``article`` 'the': 'the country', a category the passages show several members of),
    and the thing; None when it names nothing."""
    if len(question.split()) < 4:
        return None
    spans = [m for m in _NAME.finditer(question) if (m.start(1) > 0 or " " in m.group(1)) and len(m.group(1)) > 2
             and m.group(1).split()[0] not in {"I", "I'm", "What", "How", "Why", "When", "Where", "Who", "Which", "Is",
                                               "Are", "Can", "Do", "Does", "Did", "Tell", "Please", "Could", "Would"}]
    if not spans:
        return None
    match = max(spans, key=lambda m: len(m.group(1)))
    thing = rng.choice(THINGS.get(domain, THINGS["clapnq"]))
    out = question[: match.start()] + f"{article} {thing}" + question[match.end() :]
    return out[0].upper() + out[1:], thing


def synthetic_examples(examples: Sequence[Example], n: int, seed: int = 0, article: str = "this") -> list[Example]:
    """Up to ``n`` synthetic UNDERSPECIFIED turns from the answerable first turns of ``examples``: half asked
    alone, half stitched after the turns of another conversation. ``article``: 'this' ("Does this country ...?",
    ids ``synthetic:<task>``) or 'the' ("Does the country ...?", ids ``synthetic-the:<task>``)."""
    pool = [e for e in examples if e.gold == "ANSWERABLE"]
    donors = [e for e in examples if len(e.conversation.turns) >= 3]
    pool.sort(key=lambda e: hashlib.sha1(f"{seed}:{article}:{e.id}".encode()).hexdigest() if article != "this"
              else hashlib.sha1(f"{seed}:{e.id}".encode()).hexdigest())
    prefix = "synthetic" if article == "this" else f"synthetic-{article}"
    out: list[Example] = []
    for example in pool:
        rng = _seeded(example.id, seed)
        made = underspecify(example.conversation.last_user_turn, example.domain, rng, article)
        if made is None:
            continue
        question, thing = made
        turns = [Turn("user", question)]
        others = [d for d in donors if d.group != example.group]
        if len(out) % 2 and others:
            history = rng.choice(others).conversation.turns[:-1]
            if thing not in " ".join(t.text.lower() for t in history):
                turns = [*history, *turns]
        conversation = Conversation(turns, f"{prefix}:{example.id}")
        out.append(Example(f"{prefix}:{example.id}", example.group, "synthetic", example.domain, "UNDERSPECIFIED",
                           conversation))
        if len(out) == n:
            break
    return out


def attach_evidence(examples: Sequence[Example], settings: Any, index_of: Callable[[Example], str],
                    progress: bool = True, retriever: Any = None, keep: int | None = None,
                    done: Callable[[Example], None] | None = None) -> None:
    """Retrieve each example's last turn (``settings.retrieval.query_modes``, no LLM rewrite) over its index and
    keep the first ``keep`` hits (default: the `EVIDENCE` the decider reads; the cross-encoder reranks them when
    ``settings.pipeline.cross_encoder`` is on). ``retriever``: one prebuilt retriever for every example (tests).
    ``done``: called with each example once it has its hits (e.g. to cache it)."""
    from local_rag.pipeline import Pipeline

    by_index: dict[str, list[Example]] = {}
    for example in examples:
        by_index.setdefault(index_of(example), []).append(example)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(examples), desc="evidence", unit="turn")
    shared_embedder = None
    for index, group in sorted(by_index.items()):
        cfg = settings.model_copy(update={"index": index})
        pipeline = Pipeline(cfg, retriever=retriever)
        if shared_embedder is not None and retriever is None:
            from local_rag.retrieve.stack import open_retriever

            pipeline._retriever = open_retriever(cfg, shared_embedder)
        dense = getattr(pipeline.retriever, "retrievers", {}).get("dense")
        shared_embedder = dense.embedder if dense is not None else shared_embedder
        for example in group:
            queries = [Query(q.text, q.mode, q.weight) for q in pipeline.queries(example.conversation)]
            hits = pipeline.retriever.search(queries, top_k=pipeline.depth)
            if cfg.pipeline.cross_encoder and hits and (reranker := pipeline.reranker) is not None:
                hits = reranker.rerank(example.conversation.last_user_turn, hits)
            example.hits = hits[: keep or max(EVIDENCE, cfg.decide.max_options)]
            if done is not None:
                done(example)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()

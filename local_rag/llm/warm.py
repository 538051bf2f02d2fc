"""The next turn's prompts, prefilled while the user types (issue 26).

Every LLM prompt of a chat turn begins with what is known before the user's next message: the stage's system text
and worked example, then the conversation so far (the history-first answer prompt puts the passages after it). Only
the next message and its passages are new. `next_prompts` renders each LLM stage of the next turn with `MARK` where
those go; `LLM.prefill` prefills each prompt up to the first `MARK` and keeps its KV state under the stage's name,
so the next turn prefills its new message and passages only. `Warmer` runs this on a background thread between two
turns and stops, within one prefill chunk, when the next turn starts (`local_rag.pipeline.Pipeline.warm_later`).

The model computes the same prompt: what changes is which part of it is already in the KV cache (as with
`local_rag.llm.kv_cache`), and so how its prefill is split into batches. Greedy answers are the same where the
arithmetic is (SmolLM2 on one thread, tested); with several threads and other kernels a batch split rounds
differently, and a near-tie can flip a word (the 1.5B on 2 threads with AMX: 3-5 of 12 answers, docs/benchmarks.md). A guess that misses (a turn that skips its rewrite, a decided turn) costs idle
time, never a turn's time.

Example:
    >>> [stage for stage, _ in next_prompts(conversation, llm, settings, generator)]  # doctest: +SKIP
    ['rewrite', 'generate']
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from local_rag.errors import LocalRagError
from local_rag.llm.base import LLM, Message
from local_rag.records import Conversation, Hit, TraceStep, Turn

if TYPE_CHECKING:
    from local_rag.llm.generate import Generator
    from local_rag.settings import Settings

log = logging.getLogger("local_rag.llm.warm")

MARK = "\u2063next\u2063"  # an invisible separator around a word: no conversation or passage contains it


@dataclass
class Warmed:
    """One stage's prompt prefix prefilled between turns: the tokens the KV state holds, and the time it took."""

    stage: str
    tokens: int
    seconds: float

    def to_json(self) -> dict[str, str | int | float]:
        return {"stage": self.stage, "tokens": self.tokens, "seconds": round(self.seconds, 3)}

    def trace(self) -> TraceStep:
        """The next turn's trace entry."""
        if self.stage == "load":
            return {"type": "warm", "stage": "load", "tokens": 0, "latency_s": round(self.seconds, 3),
                    "text": f"the index, embedder and LLM loaded before this turn ({self.seconds:.1f} s)"}
        return {"type": "warm", "stage": self.stage, "tokens": self.tokens, "latency_s": round(self.seconds, 3),
                "text": f"{self.tokens} tokens of the {self.stage} prompt prefilled before this turn, "
                        f"while the user typed ({self.seconds:.1f} s)"}


def next_prompts(conversation: Conversation, llm: LLM, settings: Settings,
                 generator: Generator) -> list[tuple[str, list[Message]]]:
    """(stage, messages) of the LLM calls the turn after ``conversation`` makes, in their order, with `MARK` for the
    next user message and its passages. ``conversation`` is what precedes that message: empty at the start of a chat,
    else ending with the agent's reply. Only the rewrite modes and the answer are warmed (the stages a CPU profile
    runs); a first turn is its own rewrite."""
    from local_rag.llm.rewrite import rewrite_messages

    following = Conversation([*conversation.turns, Turn("user", MARK)], conversation.id)
    out: list[tuple[str, list[Message]]] = []
    if settings.pipeline.rewrite and conversation.user_turns:
        for mode in settings.rewrite.modes:
            fields = {"n": str(settings.rewrite.n_queries)} if mode == "multi" else {}
            out.append((mode, rewrite_messages(mode, following, llm, settings.rewrite, **fields)))
    out.append(("generate", generator.messages(following, [Hit(MARK, 0.0, title=MARK, text=MARK)])))
    return out


def warm(prompts: list[tuple[str, list[Message]]], llm: LLM, cancelled: Callable[[], bool] | None = None) -> list[Warmed]:
    """Prefill each prompt up to its first `MARK` (`LLM.prefill`), in order, until ``cancelled()``."""
    done: list[Warmed] = []
    for stage, messages in prompts:
        if cancelled is not None and cancelled():
            break
        started = time.perf_counter()
        tokens = llm.prefill(messages, stage=stage, upto=MARK, cancelled=cancelled)
        done.append(Warmed(stage, tokens, time.perf_counter() - started))
    return done


class Warmer:
    """Runs a warm-up on a background thread; `stop` ends it (within one prefill chunk) and waits for it, so that the
    model is never used by two threads at once.

    Example:
        >>> warmer = Warmer(lambda cancelled: [])
        >>> warmer.start(); warmer.stop()
        []
    """

    def __init__(self, work: Callable[[Callable[[], bool]], list[Warmed]]) -> None:
        self.work = work
        self.last: list[Warmed] = []
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the warm-up (after stopping one still running)."""
        self.stop()
        self._cancel = threading.Event()
        self.last = []
        self._thread = threading.Thread(target=self._run, args=(self._cancel,), name="local-rag-warm", daemon=True)
        self._thread.start()

    def _run(self, cancel: threading.Event) -> None:
        try:
            self.last = self.work(cancel.is_set)
        except LocalRagError as exc:  # a missing index or model: the turn reports it, as it would without a warm-up
            log.info("warming the next turn failed: %s", exc)
        except Exception as exc:  # noqa: BLE001 - a failed warm-up only means the next turn prefills it all
            log.warning("warming the next turn's prompts failed (%s); the next turn prefills them", exc)

    def stop(self) -> list[Warmed]:
        """Stop the warm-up and wait for it; returns what it prefilled."""
        thread = self._thread
        if thread is not None:
            self._cancel.set()
            thread.join()
            self._thread = None
        return self.last

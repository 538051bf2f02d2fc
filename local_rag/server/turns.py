"""One generation at a time: a slot, a bounded wait queue, and a worker thread per turn that stops when its client
leaves.

The pipeline is synchronous and the model (one GPU, or the CPU) serves one generation at a time, so turns run one
by one on a single worker thread. Requests wait for the slot in arrival order (``asyncio.Lock`` is fair); at most
``queue`` wait, the next ones are refused (the caller answers 429 with `TurnRunner.retry_after`). The slot is
released when the worker thread is really done, never earlier, so a cancelled request cannot overlap the next one.
A client that disconnects sets the turn's cancel flag; the pipeline's ``on_token`` callback raises `ClientGone` at
the next token, which ends the generation.

Example:
    >>> runner = TurnRunner(pipeline, queue=8)  # doctest: +SKIP
    >>> if await runner.admit():  # doctest: +SKIP
    ...     turn = runner.start(conversation, stream=True)
"""

from __future__ import annotations

import asyncio
import logging
import math
import statistics
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any  # Any: the payload of a stream event (a text piece, a status line)

from local_rag.records import Conversation, TurnResult
from local_rag.records import Turn as ChatTurn

if TYPE_CHECKING:
    from local_rag.pipeline import Pipeline
from local_rag.server.errors import ClientGone

log = logging.getLogger("local_rag.server")
POLL_S = 0.2  # how often a waiting request checks that its client is still there


class TurnRunner:
    """Admits, queues and runs pipeline turns one at a time; keeps counters for ``/healthz``."""

    def __init__(self, pipeline: Pipeline, queue: int, retry_after_s: int = 0, stream_status: bool = False) -> None:
        self.pipeline = pipeline
        self.stream_status = stream_status
        self.queue = queue
        self.retry_after_s = retry_after_s
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="local-rag-turn")
        self.waiting = 0
        self.busy = False
        self.durations: deque[float] = deque(maxlen=20)
        self.counts: Counter[str] = Counter()
        self._lock: asyncio.Lock | None = None
        self.active: Turn | None = None  # the turn running now
        self.last: Conversation | None = None  # the last conversation answered, with its answer: warmed between turns

    # ------------------------------------------------------------ the slot
    async def admit(self) -> bool:
        """Wait for the slot; False (at once) when ``queue`` requests are already waiting."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        if (self._lock.locked() or self.waiting) and self.waiting >= self.queue:
            self.counts["refused"] += 1
            return False
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        self.busy = True
        return True

    def release(self) -> None:
        """Give the slot back (a turn does it when its worker thread is done)."""
        self.busy = False
        assert self._lock is not None
        self._lock.release()

    def retry_after(self) -> int:
        """Seconds a refused client should wait: the setting, or when the running turn should end. That is when a
        place in the queue frees (the first waiting request takes the slot), so the estimate is the median of recent
        turn times less what the running turn has already run; not that median times the queue length, which
        overstated the wait fifteen-fold when the probe's queue drained."""
        if self.retry_after_s:
            return self.retry_after_s
        typical = statistics.median(self.durations) if self.durations else 1.0
        elapsed = time.perf_counter() - self.active.started if self.active is not None else 0.0
        return max(1, min(600, math.ceil(typical - elapsed)))

    def start(self, conversation: Conversation, stream: bool,
              task: tuple[list[dict[str, str]], int] | None = None, only: tuple[tuple[str, ...], ...] = ()) -> Turn:
        """Run the pipeline on ``conversation`` in the worker thread (the caller holds the slot); with ``task`` (the
        client's messages and a token budget), `Pipeline.client_task` instead of a turn; ``only``: groups of document
        patterns that narrow the server's scope in turn (the collection the request's model picks, its
        ``local_rag.only``)."""
        turn = Turn(self, asyncio.get_running_loop(), stream)
        turn.start(conversation, task, only)
        return turn

    def stop(self) -> None:
        """Server shutdown: stop the running turn at its next token, and a warm-up between turns."""
        if self.active is not None:
            self.active.cancel.set()
        self.pipeline.stop_warming()

    def status(self) -> dict[str, Any]:
        return {"busy": self.busy, "waiting": self.waiting, "queue": self.queue, **dict(self.counts)}


class TokenSink:
    """A turn's ``on_token``: each piece to its stream, and (``restart``, which `local_rag.agent.tags.AnswerStream`
    calls) where an agentic step broke off the answer it was streaming, so that the stream compares the final answer
    with what came after the break (before, a forced "I don't know" after a broken answer was sent twice)."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn

    def __call__(self, piece: str) -> None:
        self.turn._on_token(piece)

    def restart(self) -> None:
        self.turn._on_restart()


class Turn:
    """One admitted turn: its worker future, the stream of token events and a cancel flag."""

    def __init__(self, runner: TurnRunner, loop: asyncio.AbstractEventLoop, stream: bool) -> None:
        self.runner = runner
        self.loop = loop
        self.stream = stream
        self.cancel = threading.Event()
        self.events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.future: Future[TurnResult] | None = None
        self.started = time.perf_counter()
        self._released = False
        self._get: asyncio.Future[tuple[str, Any]] | None = None

    def _on_token(self, piece: str) -> None:  # runs in the worker thread
        if self.cancel.is_set():
            raise ClientGone("the client disconnected")
        if self.stream:
            self.loop.call_soon_threadsafe(self.events.put_nowait, ("piece", piece))

    def _on_restart(self) -> None:  # runs in the worker thread: an agentic step broke the answer it was streaming
        if self.stream:
            self.loop.call_soon_threadsafe(self.events.put_nowait, ("restart", None))

    def _on_status(self, text: str) -> None:  # runs in the worker thread: "Searching…", "3 sources: …"
        if self.stream and self.runner.stream_status:
            self.loop.call_soon_threadsafe(self.events.put_nowait, ("status", text))

    def start(self, conversation: Conversation, task: tuple[list[dict[str, str]], int] | None = None,
              only: tuple[tuple[str, ...], ...] = ()) -> None:
        self.conversation = conversation
        self.task = task is not None
        self.runner.active = self
        pipeline = self.runner.pipeline
        if task is not None:
            self.future = self.runner.executor.submit(pipeline.client_task, task[0], TokenSink(self), task[1])
        elif only:
            self.future = self.runner.executor.submit(self._scoped_answer, conversation, only)
        else:
            self.future = self.runner.executor.submit(pipeline.answer, conversation, TokenSink(self), self._on_status)
        self.future.add_done_callback(lambda _: self.loop.call_soon_threadsafe(self._finished))

    def _scoped_answer(self, conversation: Conversation, only: tuple[tuple[str, ...], ...]) -> TurnResult:  # worker
        """A turn about some documents: the request's patterns, within the server's (a pattern matching no document
        raises `BadInputError`: a 400 naming it)."""
        pipeline = self.runner.pipeline
        scope = pipeline.scope(*only, what="local_rag.only")
        return pipeline.answer(conversation, TokenSink(self), self._on_status, scope=scope)

    def _finished(self) -> None:  # on the event loop, once the worker thread is done
        assert self.future is not None
        self.runner.active = None
        self.runner.durations.append(time.perf_counter() - self.started)
        error = None if self.future.cancelled() else self.future.exception()
        outcome = "cancelled" if isinstance(error, ClientGone) or self.future.cancelled() else "failed" if error else "served"
        self.runner.counts[outcome] += 1
        if outcome == "cancelled":
            log.info("turn stopped: the client disconnected")
        elif outcome == "served" and self.task:  # a title or tags: the chat's last conversation is still the next
            if self.runner.last is not None:
                self.runner.pipeline.warm_later(self.runner.last)
        elif outcome == "served":  # the client's next turn starts with this conversation: prefill it meanwhile
            answer = self.future.result().answer.text
            self.runner.last = Conversation([*self.conversation.turns, ChatTurn("agent", answer)], self.conversation.id)
            self.runner.pipeline.warm_later(self.runner.last)
        self.events.put_nowait(("done", None))
        self._release()  # after warm_later: the next turn's answer() stops that warm-up before it runs

    def _release(self) -> None:
        if not self._released:
            self._released = True
            self.runner.release()

    def close(self) -> None:
        """The response is over (sent, failed or its client left): stop the generation if it still runs."""
        self.cancel.set()
        if self._get is not None:
            self._get.cancel()
        if self.future is None:
            self._release()

    async def next_event(self, is_disconnected: Callable[[], Awaitable[bool]] | None = None) -> tuple[str, Any]:
        """The next ``("status", line)``, ``("piece", text)`` or ``("done", None)``; with ``is_disconnected``, polls the client meanwhile
        and cancels the turn when it has gone."""
        while True:
            if self._get is None:
                self._get = asyncio.ensure_future(self.events.get())
            done, _ = await asyncio.wait({self._get}, timeout=POLL_S if is_disconnected else None)
            if done:
                event, self._get = self._get.result(), None
                return event
            assert is_disconnected is not None
            if not self.cancel.is_set() and await is_disconnected():
                self.cancel.set()

    def result(self) -> TurnResult:
        """The `TurnResult` (re-raises the pipeline's error); call after the ``done`` event."""
        assert self.future is not None
        return self.future.result()

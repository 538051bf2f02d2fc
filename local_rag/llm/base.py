"""The `LLM` interface: one required method, `LLM.complete`; recording and JSON decoding derive from it.

Every stage talks to an `LLM` through `LLM.run` / `LLM.run_json`, which append each call's `LLMCall` (stage, token
counts, prefill and decode time) to ``llm.calls``, so benchmarks read what really happened.

Example:
    >>> llm = load_llm(settings.llm, settings.models_dir)  # doctest: +SKIP
    >>> data, done = llm.run_json([{"role": "user", "content": "Say hi"}], {"type": "object"}, stage="demo")
    >>> done.call.completion_tokens  # doctest: +SKIP
    4
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any  # Any: JSON schemas and the JSON values parsed from replies

from local_rag.records import LLMCall

log = logging.getLogger("local_rag.llm")

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}
OnToken = Callable[[str], None]  # receives the reply's text piece by piece as it is generated


@dataclass
class Completion:
    """What `LLM.complete` returns: the text and the recorded call."""

    text: str
    call: LLMCall


@dataclass
class Scored:
    """What `LLM.continuation_logprobs` returns: one log-probability a continuation token, and the recorded call
    (its prompt tokens and prefill time; no completion tokens)."""

    logprobs: list[float]
    call: LLMCall


class LLM(ABC):
    """A chat LLM. Backends implement `complete`; ``count_tokens`` should be overridden when a tokenizer is at hand."""

    #: context window in tokens (prompt + completion)
    n_ctx: int = 4096
    #: completion tokens when a call does not say
    max_tokens: int = 256

    def __init__(self) -> None:
        self.calls: list[LLMCall] = []

    @abstractmethod
    def complete(
        self,
        messages: list[Message],
        *,
        stage: str,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        on_token: OnToken | None = None,
        stop: list[str] | None = None,
    ) -> Completion:
        """Generate the assistant's reply to ``messages``.

        Args:
            messages: chat messages, rendered with the model's own chat template. A last ``assistant`` message is the
                start of the reply, which the model continues (the returned text leaves it out); a backend that
                cannot continue a reply answers afresh.
            stage: what the call is for (``rewrite``, ``rerank``...), recorded in its `LLMCall`.
            schema: a JSON schema the output must follow (enforced by a grammar where the backend can).
            max_tokens: completion budget; default ``self.max_tokens``.
            on_token: called with each new piece of text as it is generated (streaming to a user).
            stop: strings that end the reply as soon as it contains one; the stop string is KEPT at the end of the
                text (so a caller can tell a stop from a ``max_tokens`` cut). Backends that predate it may omit it.
        """

    def continuation_logprobs(self, messages: list[Message], continuation: str, *, stage: str,
                              n_tokens: int = 4) -> Scored | None:
        """Log-probabilities of the reply to ``messages`` beginning with the first ``n_tokens`` tokens of
        ``continuation`` (teacher-forced: nothing is generated), and the recorded call. ``None`` where the backend
        cannot score (this default); `local_rag.llm.llamacpp.LlamaCppLLM` does, and its next call on the same prompt
        reuses the prefill."""
        return None

    def prefill(self, messages: list[Message], *, stage: str, upto: str = "",
                cancelled: Callable[[], bool] | None = None) -> int:
        """Prefill the prompt of ``messages`` up to the first ``upto`` in its rendered text (all of it when ``upto``
        is empty or absent) and keep its KV state for ``stage``, so that the next call whose prompt starts the same
        way prefills only the rest (`local_rag.llm.warm`: the next turn's prompt, prefilled while the user types).
        Stops early, keeping what is done, once ``cancelled()`` is true. Returns the prompt tokens now held; 0 where
        the backend keeps no KV cache (this default)."""
        return 0

    def forget_prompts(self) -> None:
        """Drop every cached prompt (KV cache, saved prefixes) so the next call prefills from scratch; benchmarks
        call it so that a repeated turn is not answered from its own earlier prompt. No-op by default."""
        return None

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text``; this default estimates 4 characters a token."""
        return max(1, len(text) // 4) if text else 0

    def run(self, messages: list[Message], *, stage: str, max_tokens: int | None = None,
            on_token: OnToken | None = None, stop: list[str] | None = None) -> Completion:
        """`complete` a free-text reply and record the call in ``self.calls`` (``stop``: see `complete`)."""
        extra: dict[str, Any] = {"stop": stop} if stop else {}  # only when asked: backends written before `stop` keep working
        done = self.complete(messages, stage=stage, max_tokens=max_tokens, on_token=on_token, **extra)
        self.calls.append(done.call)
        return done

    def score(self, messages: list[Message], continuation: str, *, stage: str, n_tokens: int = 4) -> list[float] | None:
        """`continuation_logprobs`, with the call recorded in ``self.calls``; ``None`` where the backend cannot score."""
        done = self.continuation_logprobs(messages, continuation, stage=stage, n_tokens=n_tokens)
        if done is None:
            return None
        self.calls.append(done.call)
        return done.logprobs

    def run_json(
        self, messages: list[Message], schema: dict[str, Any], *, stage: str, max_tokens: int | None = None
    ) -> tuple[Any | None, Completion]:
        """`complete` under ``schema``, record the call, and decode the JSON (``None`` when it does not decode).

        A grammar guarantees the shape but not completion: a reply cut by ``max_tokens`` does not decode, and the
        stage then falls back (logged here).
        """
        done = self.complete(messages, stage=stage, schema=schema, max_tokens=max_tokens)
        self.calls.append(done.call)
        try:
            return json.loads(done.text), done
        except json.JSONDecodeError:
            pass
        data = repair_json(done.text)
        log.warning("%s: the LLM reply is not complete JSON (%d tokens)%s: %.120r", stage,
                    done.call.completion_tokens, "; kept its complete items" if data is not None else "",
                    done.text)
        return data, done


def repair_json(text: str) -> Any | None:
    """The longest prefix of ``text`` that ends a complete value, closed with the brackets still open.

    A grammar makes a reply well-formed up to where ``max_tokens`` cuts it; this keeps the complete items.

    Example:
        >>> repair_json('{"keywords": ["a", "b", "c')
        {'keywords': ['a', 'b']}
    """
    stack: list[str] = []
    in_string = escaped = False
    best: tuple[int, list[str]] | None = None
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                if stack and stack[-1] == "[":  # a complete string item of an array
                    best = (i + 1, list(stack))
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append(ch)
        elif ch in "]}":
            if not stack:
                break
            stack.pop()
            best = (i + 1, list(stack))
        elif ch == "," and stack:
            best = (i, list(stack))
    if best is None:
        return None
    end, open_ = best
    closers = "".join("]" if b == "[" else "}" for b in reversed(open_))
    try:
        return json.loads(text[:end].rstrip().rstrip(",") + closers)
    except json.JSONDecodeError:
        return None

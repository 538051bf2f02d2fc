"""The tag protocol of the agentic mode (ChatR1 / Search-R1): parse one LLM step into an action.

A step is the text the model writes until it closes ``</search>`` or ``</answer>`` (the backends stop there). As in
Search-R1's rollout, the FIRST complete ``<search>...</search>`` or ``<answer>...</answer>`` decides the action;
anything else (no tag, an unclosed tag cut by the token budget, an empty query) is ``invalid`` and gets a corrective
message.

Example:
    >>> parse_step("<think>who?</think>\\n<search>first moon landing</search>").action
    'search'
    >>> parse_step("<search>first moon landing").action
    'invalid'
    >>> parse_step("<think>ok</think><answer>In 1969 [1].</answer>").content
    'In 1969 [1].'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

SEARCH_CLOSE = "</search>"
ANSWER_CLOSE = "</answer>"
STOPS = [SEARCH_CLOSE, ANSWER_CLOSE]

_ACTION = re.compile(r"<(search|answer)>(.*?)</\1>", re.DOTALL)
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.DOTALL)
_TAG = re.compile(r"</?(?:think|search|answer|information)>")

Action = Literal["search", "answer", "invalid"]


@dataclass(frozen=True)
class Step:
    """One parsed LLM step: the action, its content (query or answer), the reasoning before it and why it is invalid."""

    action: Action
    content: str
    think: str
    raw: str
    problem: str = ""


def parse_step(text: str) -> Step:
    """The action of one step (see the module docstring)."""
    match = _ACTION.search(text)
    think_match = _THINK.search(text[: match.start()] if match else text)
    if think_match:
        think = think_match.group(1).strip()
    else:  # reasoning written without <think> tags: the text before the action
        think = _TAG.sub(" ", text[: match.start()] if match else "").strip()
    if match is None:
        if "<search>" in text or "<answer>" in text:
            problem = "unclosed tag"
        else:
            problem = "no <search> or <answer>"
        return Step("invalid", "", think, text, problem)
    action, content = match.group(1), " ".join(match.group(2).split())
    if not content:
        return Step("invalid", "", think, text, f"empty <{action}>")
    return Step(action, content, think, text)  # type: ignore[arg-type]


def lenient_answer(text: str) -> str:
    """The answer of a forced last step, whatever its shape: the ``<answer>`` content (closed or not), else the text
    without tags and without its ``<think>`` part.

    Example:
        >>> lenient_answer("<think>hmm</think> <answer>Paris [1]")
        'Paris [1]'
        >>> lenient_answer("It is Paris [1].")
        'It is Paris [1].'
    """
    if "<answer>" in text:
        text = text.split("<answer>", 1)[1].split(ANSWER_CLOSE, 1)[0]
    else:
        text = re.sub(r"<think>.*?(?:</think>|$)", " ", text, flags=re.DOTALL)
        text = re.sub(r"<search>.*?(?:</search>|$)", " ", text, flags=re.DOTALL)
    return " ".join(_TAG.sub(" ", text).split())


BROKE_OFF = "that answer broke off; the agent goes on"  # written where a streamed answer's step broke off


class AnswerStream:
    """Passes on only what the model writes inside ``<answer>...</answer>`` to ``on_token`` (streaming to a user),
    holding back characters that may start ``</answer>``.

    Example:
        >>> out = []
        >>> stream = AnswerStream(out.append)
        >>> for piece in ["<think>x</think><ans", "wer>Hi", " there</ans", "wer>"]:
        ...     stream(piece)
        >>> "".join(out)
        'Hi there'
    """

    def __init__(self, on_token: Callable[[str], None]) -> None:
        self.on_token = on_token
        self.buffer = ""
        self.sent = 0
        self.held = False

    def reset(self, hold: bool = False) -> None:
        """A new LLM step starts: its text is a new buffer (after a step that streamed an answer it then broke, e.g.
        an unclosed ``<answer>``, a new line keeps the next answer apart). ``hold``: this step's answer would not be
        taken (an answer before any search is sent back), so none of it reaches the user."""
        if self.sent:  # a writer that knows steps (`cli.lines.Streamer.restart`) starts a new one; else a new line
            restart = getattr(self.on_token, "restart", None)
            if callable(restart):
                restart()
            else:
                self.on_token("\n")
        self.buffer, self.sent, self.held = "", 0, hold

    def __call__(self, piece: str) -> None:
        self.buffer += piece
        if self.held or "<answer>" not in self.buffer:
            return
        content = self.buffer.split("<answer>", 1)[1]
        end = content.find(ANSWER_CLOSE)
        if end >= 0:
            content = content[:end]
        else:  # hold back a possible beginning of "</answer>"
            for n in range(min(len(ANSWER_CLOSE) - 1, len(content)), 0, -1):
                if ANSWER_CLOSE.startswith(content[-n:]):
                    content = content[:-n]
                    break
        if len(content) > self.sent:
            self.on_token(content[self.sent :])
            self.sent = len(content)

"""``rewrite.reply: prefix``: the rewrite's JSON reply started in the prompt and the query decoded as free text, against
the reply under a grammar (issue 26, session 29)."""

from __future__ import annotations

import pytest

from local_rag.llm.base import LLM
from local_rag.llm.rewrite import REPLY_START, continued_query, standalone
from local_rag.records import Conversation, Turn
from local_rag.settings import RewriteConfig

from .llm_fixtures import ScriptedLLM

FOLLOW_UP = Conversation([Turn("user", "When was the Eiffel Tower built?"),
                          Turn("agent", "It was built from 1887 to 1889 for the World's Fair in Paris."),
                          Turn("user", "how tall is it?")])


@pytest.mark.parametrize(("text", "expected"), [
    ('How tall is the Eiffel Tower?"', "How tall is the Eiffel Tower?"),
    ('How tall is the Eiffel Tower?"}', "How tall is the Eiffel Tower?"),
    ('{"query": "How tall is it"}', "How tall is it"),  # a backend that answered afresh
    ('{"query": "How tall', None),  # cut before the object closes: the caller falls back to the last turn
    ("", ""),
])
def test_the_query_is_read_up_to_its_closing_quote(text: str, expected: str | None) -> None:
    assert continued_query(text) == expected


def test_the_reply_starts_in_the_prompt_and_stops_at_the_quote() -> None:
    seen = {}

    def reply(messages: list, schema: dict | None) -> str:
        seen.update(last=messages[-1], schema=schema)
        return 'How tall is the Eiffel Tower?"} and more'

    llm = ScriptedLLM(reply)
    [query] = standalone(FOLLOW_UP, llm, RewriteConfig(reply="prefix"))
    assert query.text == "How tall is the Eiffel Tower?" and query.mode == "rewrite"
    assert seen == {"last": {"role": "assistant", "content": REPLY_START}, "schema": None}
    [fallback] = standalone(FOLLOW_UP, ScriptedLLM('"'), RewriteConfig(reply="prefix"))  # nothing usable: the last turn
    assert fallback.text == "how tall is it?"


def test_prefix_and_grammar_give_the_same_rewrite_on_a_real_model(smollm: LLM) -> None:
    rendered = smollm.render([{"role": "user", "content": "hi"}, {"role": "assistant", "content": REPLY_START}])  # type: ignore[attr-defined]
    assert rendered == smollm.render([{"role": "user", "content": "hi"}]) + REPLY_START  # type: ignore[attr-defined]
    before = len(smollm.calls)
    grammar = standalone(FOLLOW_UP, smollm, RewriteConfig(reply="grammar"))[0].text
    prefix = standalone(FOLLOW_UP, smollm, RewriteConfig(reply="prefix"))[0].text
    g, p = smollm.calls[before:]
    assert prefix == grammar and p.completion_tokens < g.completion_tokens  # the JSON opening is not decoded
    assert p.prompt.endswith(REPLY_START) and not p.response.startswith("{")

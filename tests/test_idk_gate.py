"""The generator's IDK gate (issue 24): the reply's probability of beginning with the decline sentence, scored by a
real llama.cpp model (SmolLM2-135M) on the answer's own prompt, and the pipeline declining on it."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from local_rag.evaluation.generation.recheck import prediction_of
from local_rag.index import build_index, open_index
from local_rag.llm.base import LLM
from local_rag.llm.generate import Generator
from local_rag.pipeline import Pipeline
from local_rag.records import Conversation, Hit, Turn
from local_rag.retrieve import HybridRetriever
from local_rag.settings import GenerateConfig, Settings
from tests.conftest import HashEmbedder
from tests.llm_fixtures import ScriptedLLM

pytestmark = pytest.mark.llm

CONV = Conversation([Turn("user", "How tall is the Eiffel Tower?")])
HITS = [Hit("p1", 0.8, 1, title="Eiffel Tower", text="The Eiffel Tower is 330 metres tall."),
        Hit("p2", 0.7, 2, title="Seine", text="The Seine is a 777-kilometre-long river in northern France.")]
IDK = GenerateConfig().idk_answer


def sequential_logprobs(llm: LLM, messages: list[dict[str, str]], text: str, n: int) -> list[float]:
    """The reference: a cold prefill, then one decode step a token, reading each step's logits."""
    llama = llm._llama  # type: ignore[attr-defined]
    tokens = llama.tokenize(llm.render(messages).encode(), add_bos=False, special=True)  # type: ignore[attr-defined]
    follow = llama.tokenize(text.encode(), add_bos=False, special=False)[:n]
    llama.reset()
    llama.eval(tokens)
    out = []
    for token in follow:
        row = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).astype(np.float64)
        row -= row.max()
        out.append(float(row[token] - np.log(np.exp(row).sum())))
        llama.eval([token])
    llm.forget_prompts()
    return out


def test_scoring_matches_token_by_token_decoding_and_the_answer_after_it_is_unchanged(smollm: LLM) -> None:
    generator = Generator(smollm, GenerateConfig(max_tokens=24))
    messages = generator.messages(CONV, HITS)
    smollm.forget_prompts()
    cold = smollm.run(messages, stage="generate", max_tokens=24).text
    reference = sequential_logprobs(smollm, messages, IDK, 4)

    before = len(smollm.calls)
    scored = smollm.score(messages, IDK, stage="idk-gate", n_tokens=4)
    assert scored is not None and len(scored) == 4 and all(np.isfinite(scored)) and max(scored) <= 0
    # the first token's from the prompt's own logits, as in decoding; the others from one batched pass, whose
    # kernels round differently from one-token decode steps (measured: up to 0.03 on SmolLM2)
    assert scored[0] == pytest.approx(reference[0], abs=1e-6)
    assert np.allclose(scored, reference, atol=0.1)
    call = smollm.calls[before]
    assert call.stage == "idk-gate" and call.prompt_tokens > 0 and call.completion_tokens == 0
    after = smollm.run(messages, stage="generate", max_tokens=24)
    assert after.text == cold  # the scored continuation left nothing behind in the KV cache
    assert after.call.cached_tokens >= after.call.prompt_tokens - 1  # the answer reused the gate's prefill
    # warm: the prompt's last token is evaluated alone now, not in the prefill's batch; llama.cpp's kernels round
    # differently (SmolLM2: 0.15 on the first token), as they do for any prompt the KV cache holds part of
    assert smollm.score(messages, IDK, stage="idk-gate", n_tokens=4) == pytest.approx(scored, abs=0.3)


def test_the_gate_declines_above_its_threshold_and_records_the_score_below_it(smollm: LLM) -> None:
    base = GenerateConfig(max_tokens=24)
    plain = Generator(smollm, base).answer(CONV, HITS)
    assert plain.idk_score is None

    smollm.calls.clear()
    declined = Generator(smollm, base.model_copy(update={"idk_gate": -1000.0})).answer(CONV, HITS)
    assert declined.kind == "decline" and declined.text == IDK and declined.call is None
    assert declined.idk_score is not None and declined.passages == HITS and declined.gate == "idk"
    assert [c.stage for c in smollm.calls] == ["idk-gate"]  # nothing was written

    scored = Generator(smollm, base.model_copy(update={"idk_gate": 0.0})).answer(CONV, HITS)  # 0: score only
    assert scored.kind == plain.kind and scored.text == plain.text and scored.gate is None
    assert scored.idk_score == pytest.approx(declined.idk_score, abs=1e-3)
    assert prediction_of(scored)["idk_score"] == scored.idk_score


def test_a_backend_that_cannot_score_leaves_the_gate_off_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    llm = ScriptedLLM("The tower is 330 metres tall [1].")
    generator = Generator(llm, GenerateConfig(idk_gate=-1.0))
    with caplog.at_level(logging.WARNING, logger="local_rag.llm.generate"):
        first = generator.answer(CONV, HITS)
        generator.answer(CONV, HITS)
    assert first.kind == "answer" and first.idk_score is None
    assert sum("cannot score" in r.getMessage() for r in caplog.records) == 1
    assert "idk_score" not in prediction_of(first)


def gated_pipeline(llm: LLM, fake_settings: Settings, embedder: HashEmbedder, corpus: Path) -> tuple[Settings, Pipeline]:
    """A real index of the test corpus and a pipeline whose IDK gate declines every turn (threshold -1000)."""
    build_index(fake_settings, corpus, embedder=embedder, progress=False)
    settings = fake_settings.model_copy(update={
        "pipeline": fake_settings.pipeline.model_copy(update={"rewrite": False}),
        "generate": fake_settings.generate.model_copy(update={"idk_gate": -1000.0, "max_tokens": 24}),
    })
    return settings, Pipeline(settings, retriever=HybridRetriever(open_index(settings), settings, embedder), llm=llm)


def test_the_pipeline_records_a_gate_decline_as_a_decision_and_in_the_trace(
        smollm: LLM, fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path) -> None:
    settings, pipeline = gated_pipeline(smollm, fake_settings, hash_embedder, corpus_file)
    streamed: list[str] = []
    result = pipeline.answer(
        Conversation([Turn("user", "how long do cats sleep?")]), on_token=streamed.append)
    assert result.answer.kind == "decline" and streamed == []
    assert result.decision is not None and result.decision.reason == "generator P(IDK)"
    assert "idk" in result.decision.scores and 0 < result.decision.confidence <= 1
    assert any(step["type"] == "gate" and step.get("stage") == "idk" for step in result.trace)
    assert [c.stage for c in result.llm_calls] == ["idk-gate"]
    assert result.to_json()["kind"] == "decline"


def test_the_server_streams_only_the_decline_of_a_gated_turn(
        smollm: LLM, fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path) -> None:
    from local_rag.server.app import create_app
    from tests.test_server import CONV, client, running

    settings, pipeline = gated_pipeline(smollm, fake_settings, hash_embedder, corpus_file)
    with running(create_app(settings, pipeline)) as url:
        chunks = list(client(url, timeout=120).chat.completions.create(model="m", messages=CONV, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    extra = chunks[-1].model_extra["local_rag"]
    assert text == IDK and extra["kind"] == "decline" and extra["decision"]["reason"] == "generator P(IDK)"
    assert any(step.get("stage") == "idk" for step in extra["trace"])

"""Cross-encoder code paths on a cross-encoder built from MiniLM weights with a random (seeded) head: no trained
cross-encoder ships on PyPI, so these check structure and backend agreement, not ranking quality."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from local_rag.records import Hit
from local_rag.rerank.base import Reranker
from local_rag.settings import RerankerConfig

from .conftest import MODELS, needs_minilm


class LengthReranker(Reranker):
    """Deterministic fake: longer texts are more relevant."""

    def score(self, query: str, texts: list[str]) -> list[float]:
        return [float(len(t)) for t in texts]


def test_rerank_orders_head_and_keeps_tail():
    hits = [Hit(f"p{i}", 1.0 / (i + 1), rank=i + 1, text="x" * (i % 3)) for i in range(6)]
    out = LengthReranker(RerankerConfig(candidates=4)).rerank("q", hits)
    assert [h.passage_id for h in out] == ["p2", "p1", "p0", "p3", "p4", "p5"]  # ties keep prior order
    assert [h.rank for h in out] == [1, 2, 3, 4, 5, 6]
    assert out[0].scores["fused"] == pytest.approx(1 / 3) and out[0].scores["cross-encoder"] == 2.0
    assert out[4].scores == {} and LengthReranker(RerankerConfig()).rerank("q", []) == []


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    if not (MODELS / "all-MiniLM-L6-v2" / "model.safetensors").exists():
        pytest.skip("all-MiniLM-L6-v2 not imported")
    dest = tmp_path_factory.mktemp("ce") / "minilm-ce"
    torch.manual_seed(0)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(str(MODELS / "all-MiniLM-L6-v2"), num_labels=1)
    model.save_pretrained(str(dest))
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        shutil.copy2(MODELS / "all-MiniLM-L6-v2" / name, dest / name)
    return dest


@needs_minilm
def test_sentence_transformers_and_onnx_backends_agree(cross_encoder_dir: Path, tmp_path: Path):
    pytest.importorskip("onnx")
    from local_rag.rerank import load_reranker
    from local_rag.rerank.onnx import export_cross_encoder_onnx

    hits = [Hit(f"p{i}", 1.0, text=t) for i, t in enumerate(["cats purr", "bm25 ranks documents by term weights", "faiss searches vectors", ""])]
    st = load_reranker(RerankerConfig(backend="sentence-transformers", model=str(cross_encoder_dir), max_length=64), MODELS)
    onnx_dir = export_cross_encoder_onnx(cross_encoder_dir, tmp_path / "ce-onnx")
    ort = load_reranker(RerankerConfig(backend="onnx", model=str(onnx_dir), max_length=64, batch_size=3), MODELS)
    a = np.array(st.score("how does bm25 rank", [h.text for h in hits]))
    b = np.array(ort.score("how does bm25 rank", [h.text for h in hits]))
    assert a.shape == (4,) and np.allclose(a, b, atol=1e-3)
    assert [h.passage_id for h in st.rerank("how does bm25 rank", hits)] == [h.passage_id for h in ort.rerank("how does bm25 rank", hits)]
    assert ort.providers == ["CPUExecutionProvider"]


def test_unknown_backend_is_refused():
    from local_rag.errors import SettingsError
    from local_rag.rerank import load_reranker

    with pytest.raises(SettingsError, match="valid: bi-encoder, likelihood, onnx, sentence-transformers"):
        load_reranker(RerankerConfig.model_construct(backend="colbert", model="x"), MODELS)


def test_prior_weight_fuses_cross_encoder_and_first_stage_orders():
    hits = [Hit(f"p{i}", 1.0 / (i + 1), rank=i + 1, text="x" * i) for i in range(4)]  # the fake prefers p3, p2, p1, p0
    assert [h.passage_id for h in LengthReranker(RerankerConfig(candidates=4)).rerank("q", hits)] == ["p3", "p2", "p1", "p0"]
    fused = LengthReranker(RerankerConfig(candidates=4, prior_weight=1.0)).rerank("q", hits)
    assert [h.passage_id for h in fused] == ["p0", "p3", "p1", "p2"]  # equal weights: extremes tie, ties keep prior order
    strong_prior = LengthReranker(RerankerConfig(candidates=4, prior_weight=3.0)).rerank("q", hits)
    assert [h.passage_id for h in strong_prior] == ["p0", "p1", "p2", "p3"]
    assert strong_prior[0].scores["cross-encoder"] == 0.0


class CallRecorder(LengthReranker):
    """`LengthReranker` that remembers what each call scored."""

    calls: list[list[str]]

    def score(self, query: str, texts: list[str]) -> list[float]:
        self.calls = [*getattr(self, "calls", []), list(texts)]
        return super().score(query, texts)


def test_sentence_unit_scores_a_passage_by_its_best_sentence_in_one_call():
    hits = [Hit("p0", 0.9, 1, text="Short one. A much longer sentence than that.", title="T"),
            Hit("p1", 0.8, 2, text="Medium sentence here."), Hit("p2", 0.7, 3, text="")]
    ce = CallRecorder(RerankerConfig(unit="sentence"))
    assert ce.score_hits("q", hits) == [len("T\nA much longer sentence than that."), len("Medium sentence here."), float("-inf")]
    assert ce.calls == [["T\nShort one.", "T\nA much longer sentence than that.", "Medium sentence here."]]
    assert [h.passage_id for h in ce.rerank("q", hits)] == ["p0", "p1", "p2"]
    assert CallRecorder(RerankerConfig()).score_hits("q", hits) == [len("T\n" + hits[0].text), len(hits[1].text), 0.0]
    assert CallRecorder(RerankerConfig(unit="sentence")).score_hits("q", [Hit("e", 1.0)]) == [float("-inf")]


@pytest.mark.slow
def test_likelihood_reranker_puts_the_passage_the_question_is_about_first(tmp_path: Path):
    """The real SmolLM2-135M through `load_reranker`: the question's log-probability given each passage orders them
    (UPR), a passage longer than ``max_length`` is cut to fit, an unknown model is a one-line error, and named as the
    pipeline's own LLM it scores with the pipeline's loaded model."""
    from local_rag.errors import ModelError
    from local_rag.rerank import load_reranker

    from .llm_fixtures import SMOLLM, llama_cpp_or_skip, model_or_skip

    llama_cpp_or_skip()
    model_or_skip(SMOLLM)
    reranker = load_reranker(RerankerConfig(backend="likelihood", model=SMOLLM, candidates=3, max_length=64), MODELS)
    hits = [Hit("tower", 0.9, rank=1, title="Paris", text="The Eiffel Tower was finished in 1889 for the World's Fair."),
            Hit("water", 0.8, rank=2, title="Water", text="At sea level, water boils at 100 degrees Celsius."),
            Hit("long", 0.7, rank=3, text="Granite is an igneous rock. " * 200),
            Hit("tail", 0.6, rank=4, text="not reranked")]
    out = reranker.rerank("At what temperature does water boil at sea level?", hits)
    assert out[0].passage_id == "water" and out[-1].passage_id == "tail"
    assert all(h.scores["cross-encoder"] < 0 for h in out[:3])  # summed log-probabilities
    assert reranker.llm.count_tokens(reranker.fit(hits[2].text)) <= 64 < reranker.llm.count_tokens(hits[2].text)
    assert reranker.fit("short") == "short"
    assert reranker.messages("a passage")[0]["role"] == "user"  # empty system text: the template's default
    with pytest.raises(ModelError):
        load_reranker(RerankerConfig(backend="likelihood", model="no-such-model"), tmp_path)

    # named as the pipeline's own LLM: the pipeline's loaded model scores, with the same scores as a model of its own
    from local_rag.pipeline import Pipeline

    from .conftest import make_settings

    settings = make_settings(tmp_path, llm={"model": SMOLLM}, pipeline={"cross_encoder": True},
                             reranker={"backend": "likelihood", "model": SMOLLM, "candidates": 3, "max_length": 64})
    pipe = Pipeline(settings)  # no index: the retriever is not needed here
    pipe._load_encoders_first()  # what a GPU start does: a reranker made of the LLM takes no memory first, no loop
    assert pipe._reranker is None and pipe._llm is None
    shared = pipe.reranker
    assert isinstance(shared, type(reranker)) and shared.llm is pipe.llm
    question = "At what temperature does water boil at sea level?"
    pipe.llm.complete([{"role": "user", "content": "Hello"}], stage="test", max_tokens=2)  # a live cache to move off
    # (the same to llama.cpp's rounding: which prompt prefix the KV cache held moves a summed score by up to ~0.5%)
    assert shared.score(question, [h.text for h in hits[:3]]) == pytest.approx(
        reranker.score(question, [h.text for h in hits[:3]]), rel=5e-3)
    assert [h.passage_id for h in shared.rerank(question, hits)] == [h.passage_id for h in out]
    # each passage's scoring is a recorded call, and a turn takes them out of the model's log (shared or not)
    assert [c.stage for c in pipe.llm.calls[-3:]] == ["rerank-likelihood"] * 3
    taken = pipe.take_calls(0)
    assert [c.stage for c in taken].count("rerank-likelihood") == 6 and pipe.llm.calls == []
    own = Pipeline(settings, reranker=reranker)  # a reranker with a model of its own
    assert [c.stage for c in own.take_calls(0)] == ["rerank-likelihood"] * 6 and reranker.llm.calls == []


@needs_minilm
def test_the_bi_encoder_embeds_each_passage_once_and_scores_as_without_its_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real MiniLM as a re-scorer: a passage met before is not embedded again, the scores are those of a re-scorer
    with no memory, and the memory keeps only the most recently met ``MEMORY`` passages."""
    from local_rag.rerank import bi_encoder, load_reranker

    config = RerankerConfig(backend="bi-encoder", model="all-MiniLM-L6-v2", device="cpu")
    texts = ["Honey bees store honey for the winter.", "Volcanoes erupt when gas is trapped in magma.",
             "Sourdough is leavened by wild yeast.", "Spring tides come at new and full moon."]
    reranker = load_reranker(config, MODELS)
    embedded: list[str] = []
    embed = reranker.embedder.embed
    monkeypatch.setattr(reranker.embedder, "embed", lambda xs, kind="passage", **kw: (
        embedded.extend(xs if kind == "passage" else []), embed(xs, kind, **kw))[1])
    first = reranker.score("how do bees survive winter?", texts[:3])
    second = reranker.score("when are tides largest?", [texts[3], texts[1], texts[3]])
    assert embedded == texts  # each passage embedded once, the repeated one too
    fresh = load_reranker(config, MODELS)
    assert np.allclose(second, fresh.score("when are tides largest?", [texts[3], texts[1], texts[3]]), atol=1e-5)
    assert np.allclose(first, fresh.score("how do bees survive winter?", texts[:3]), atol=1e-5)
    assert reranker.score("anything", []) == []
    monkeypatch.setattr(bi_encoder, "MEMORY", 2)
    reranker.score("bees?", [texts[0]])  # met last: kept with the one met before it
    assert list(reranker.memory) == [texts[1], texts[0]]

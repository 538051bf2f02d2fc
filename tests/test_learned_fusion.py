"""Learned fusion (issue 23): features, a real scikit-learn model trained in the test, the hybrid retriever using it
over a real bm25s + FAISS index with the real MiniLM, and the fallbacks."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import numpy as np
import pytest

from local_rag.errors import BadInputError, ModelError
from local_rag.records import Conversation, Hit, Query, Turn
from local_rag.retrieve.learned import (
    PER_LIST,
    candidate_features,
    feature_names,
    load_fusion,
    read_fusion,
    save_fusion,
)
from local_rag.retrieve.queries import conversation_queries, conversation_texts
from local_rag.settings import Settings
from local_rag.train.fusion import LabelledTurn, collect_lists, cross_validate, fit, list_keys, ndcg5, ranked, rrf_run

from .conftest import needs_minilm


def _col(key_index: int, name: str) -> int:
    return key_index * len(PER_LIST) + PER_LIST.index(name)


def test_candidate_features_hand_computed():
    lists = {
        "bm25:lastturn": [Hit("a", 8.0, doc_id="A"), Hit("b", 4.0, doc_id="B"), Hit("c", 2.0, doc_id="A")],
        "dense:lastturn": [Hit("b", 0.9, doc_id="B"), Hit("d", 0.5, doc_id="A")],
        "bm25:ignored": [Hit("zz", 99.0)],
    }
    keys = ["bm25:lastturn", "dense:lastturn", "dense:lastanswer"]
    cands = candidate_features(lists, keys, depth=10)
    assert cands.ids == ["a", "b", "c", "d"]  # sorted union; a list the model does not read adds nothing
    f = {pid: cands.features[i] for i, pid in enumerate(cands.ids)}
    assert f["c"][_col(0, "rr")] == pytest.approx(1 / 3) and f["c"][_col(0, "rrf")] == pytest.approx(1 / 63)
    assert f["b"][_col(0, "score")] == pytest.approx(0.5)  # BM25 score as a share of the list's best
    assert f["d"][_col(0, "rr")] == 0 and f["d"][_col(0, "doc_rr")] == pytest.approx(1.0)  # its document leads BM25
    assert f["c"][_col(1, "doc_rr")] == pytest.approx(1 / 2)  # document A is second in the dense list
    assert f["a"][_col(1, "score")] == pytest.approx(0.45)  # not in the dense list: below its last score
    assert f["b"][_col(1, "score")] == pytest.approx(0.9)  # dense lists keep the cosine
    assert all(row[_col(0, "listed")] == 1 and row[_col(2, "listed")] == 0 for row in cands.features)
    assert not cands.features[:, _col(2, "rr") : _col(2, "listed") + 1].any()  # no previous answer: zeros
    assert feature_names(keys)[_col(1, "doc_rr")] == "dense:lastturn.doc_rr"
    assert candidate_features(lists, keys, depth=1).ids == ["a", "b"]  # depth cuts each list


def _turns(n_conversations: int, seed: int = 0) -> list[LabelledTurn]:
    """Turns whose gold passage the previous answer's dense list puts first and the last turn's lists bury."""
    rng = random.Random(seed)
    turns = []
    for c in range(n_conversations):
        for t in range(1, 4):
            pids = [f"p{c}-{t}-{i}" for i in range(12)]
            gold = pids[rng.randrange(12)]
            decoys = [p for p in pids if p != gold]
            rng.shuffle(decoys)
            buried = [*decoys[:9], gold, *decoys[9:]]  # both last-turn lists agree on decoys, the gold 10th
            lists = {
                "bm25:lastturn": [Hit(p, 10.0 - i, doc_id=p) for i, p in enumerate(buried)],
                "dense:lastturn": [Hit(p, 0.8 - 0.01 * i, doc_id=p) for i, p in enumerate(buried)],
                "dense:lastanswer": [Hit(p, 0.7 - 0.01 * i, doc_id=p) for i, p in enumerate([gold, *decoys])],
            }
            turns.append(LabelledTurn(f"conv{c}<::>{t}", "test", lists, {gold: 1}))
    return turns


def test_a_trained_model_learns_which_list_to_trust(tmp_path: Path):
    turns = _turns(12)
    keys = list_keys(["bm25", "dense"], ["lastturn", "lastanswer"])
    cv = cross_validate(turns, keys, depth=20, grid=(0.001, 0.1), folds=3)
    assert cv["folds"] == 3 and cv["by_penalty"][str(cv["best_penalty"])]["ndcg_cut_5"] > 0.95  # out of fold, by conversation
    model, info = fit(turns, keys, 20, cv["best_penalty"])
    assert info["turns"] == 36 and info["positives"] == 36 and np.isfinite(model.weights).all()
    held_out = _turns(4, seed=1)
    assert ndcg5(ranked(model, held_out), held_out)["ndcg_cut_5"] == pytest.approx(1.0)
    assert ndcg5(rrf_run(held_out, keys, Settings()), held_out)["ndcg_cut_5"] < 0.8  # RRF gives every list the same say
    save_fusion(tmp_path / "f", model.meta)
    again = read_fusion(tmp_path / "f")
    assert np.allclose(again.weights, model.weights)
    assert again.modes == ["lastturn", "lastanswer"]
    fused = again.fuse(held_out[0].lists, top_k=3)
    assert fused[0].passage_id == next(iter(held_out[0].gold)) and fused[0].source == "learned"
    assert [h.rank for h in fused] == [1, 2, 3] and "dense:lastanswer" in fused[0].scores


def test_unreadable_or_mismatched_fusion_models_are_refused(tmp_path: Path):
    with pytest.raises(ModelError, match="cannot be read"):
        read_fusion(tmp_path / "missing")
    model, _ = fit(_turns(3), list_keys(["bm25"], ["lastturn"]), 20, 0.01)
    save_fusion(tmp_path / "f", {**model.meta, "features": ["something else"]})
    with pytest.raises(ModelError, match="another feature layout"):
        read_fusion(tmp_path / "f")
    save_fusion(tmp_path / "g", {**model.meta, "weights": [1.0]})
    with pytest.raises(ModelError, match="do not match"):
        read_fusion(tmp_path / "g")
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "fusion.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError, match="cannot be read"):
        read_fusion(tmp_path / "h")
    with pytest.raises(ModelError, match="names no model"):
        load_fusion("", tmp_path)


def test_lists_are_cached_and_a_rerun_retrieves_nothing(tmp_path: Path):
    calls = []

    def search_lists(batch: list[list[Query]]) -> list[dict[str, list[Hit]]]:
        calls.append(len(batch))
        return [{"bm25:lastturn": [Hit(q[0].text, 1.0, doc_id="d")]} for q in batch]

    turns = [(f"c<::>{i}", "govt", [Query(f"q{i}")], {f"q{i}": 1}) for i in range(5)]
    first = collect_lists(search_lists, turns, tmp_path / "lists.jsonl", key="k1", batch=2)
    assert calls == [2, 2, 1] and first[3].lists["bm25:lastturn"][0].passage_id == "q3"
    again = collect_lists(search_lists, turns, tmp_path / "lists.jsonl", key="k1", batch=2)
    def shape(turns: list[LabelledTurn]) -> list[dict[str, list[tuple[str, float, str]]]]:
        return [{k: [(h.passage_id, h.score, h.doc_id) for h in v] for k, v in t.lists.items()} for t in turns]

    assert calls == [2, 2, 1] and shape(again) == shape(first)
    collect_lists(search_lists, turns, tmp_path / "lists.jsonl", key="other settings", batch=5)
    assert calls == [2, 2, 1, 5]  # another key: the cache is not trusted


def test_conversation_modes():
    first = Conversation([Turn("user", "what is a dog?")])
    assert conversation_texts(first, "lasttwo") == [] and conversation_texts(first, "lastanswer") == []
    assert [q.mode for q in conversation_queries(first, ["lastturn", "lasttwo", "lastanswer"])] == ["lastturn"]
    later = Conversation([Turn("user", "what is a dog?"), Turn("agent", "A dog is a mammal. " * 300), Turn("user", "do they bark?")])
    queries = conversation_queries(later, ["lastturn", "lasttwo", "lastanswer"])
    assert [q.mode for q in queries] == ["lastturn", "lasttwo", "lastanswer"]
    assert queries[1].text == "what is a dog?\ndo they bark?" and len(queries[2].text) == 2000
    with pytest.raises(BadInputError, match="not computed"):
        conversation_texts(later, "rewrite")


@pytest.fixture(scope="module")
def trained_on_real_lists(minilm_settings: Settings, minilm, tmp_path_factory: pytest.TempPathFactory):
    """A fusion model fitted on the lists of a real hybrid retriever (bm25s + FAISS + MiniLM) over the test corpus."""
    from local_rag.index import build_index, open_index
    from local_rag.retrieve import HybridRetriever

    from .conftest import CORPUS, write_jsonl

    settings = minilm_settings.model_copy(deep=True)
    settings.index = "learned"
    build_index(settings, write_jsonl(tmp_path_factory.mktemp("c") / "c.jsonl", CORPUS), embedder=minilm, progress=False)
    hybrid = HybridRetriever(open_index(settings, model_checksum=minilm.checksum), settings, minilm)
    asked = [("how do cats spend the day", "d1-1"), ("which function scores documents by term frequency", "d3-0"),
             ("merging ranked lists", "d5-0"), ("dense vector similarity library", "d4-0"), ("animals that bark", "d2-0"),
             ("small carnivorous pets hunting mice", "d1-0")] * 2
    keys = list_keys(["bm25", "dense"], ["lastturn"])
    lists = hybrid.lists([[Query(q)] for q, _ in asked], depth=6)
    turns = [LabelledTurn(f"c{i}<::>1", "x", per, {gold: 1}) for i, ((_, gold), per) in enumerate(zip(asked, lists, strict=True))]
    model, _ = fit(turns, keys, 6, 0.01)
    folder = tmp_path_factory.mktemp("models") / "tiny-fusion"
    save_fusion(folder, model.meta)
    return settings, folder


@needs_minilm
def test_the_hybrid_retriever_fuses_with_a_trained_model(trained_on_real_lists, minilm):
    from local_rag.index import open_index
    from local_rag.retrieve import HybridRetriever

    settings, folder = trained_on_real_lists
    settings = settings.model_copy(deep=True)
    settings.fusion.method, settings.fusion.model = "learned", str(folder)
    hybrid = HybridRetriever(open_index(settings, model_checksum=minilm.checksum), settings, minilm)
    assert hybrid.learned is not None
    hits = hybrid.search([Query("how long does a cat sleep")], top_k=3)
    assert hits[0].passage_id == "d1-1" and {h.source for h in hits} == {"learned"}
    batched = hybrid.search_batch([[Query("how long does a cat sleep")], [Query("bm25 ranking function")]], top_k=3)
    assert [(h.passage_id, h.score) for h in batched[0]] == [(h.passage_id, h.score) for h in hits]
    assert np.isfinite([h.score for h in batched[1]]).all()


@needs_minilm
def test_a_trained_fusion_model_skips_feedback_with_a_warning(trained_on_real_lists, minilm, caplog):
    """retrieval.feedback under a trained fusion model: the model reads only its own lists, so the feedback round is
    not run (a warning says so) and the hits are the model's alone."""
    from local_rag.index import open_index
    from local_rag.retrieve import HybridRetriever

    settings, folder = trained_on_real_lists
    settings = settings.model_copy(deep=True)
    settings.fusion.method, settings.fusion.model = "learned", str(folder)
    plain = HybridRetriever(open_index(settings, model_checksum=minilm.checksum), settings, minilm)
    settings.retrieval.feedback.passages = 2
    with caplog.at_level(logging.WARNING, logger="local_rag.retrieve"):
        hybrid = HybridRetriever(open_index(settings, model_checksum=minilm.checksum), settings, minilm)
    assert "retrieval.feedback is skipped" in caplog.text
    query = [Query("how long does a cat sleep")]
    assert [(h.passage_id, h.score) for h in hybrid.search(query, top_k=3)] == [(h.passage_id, h.score) for h in plain.search(query, top_k=3)]
    assert not any(key.endswith(":feedback") for key in hybrid.last_timings)


@needs_minilm
def test_a_missing_fusion_model_falls_back_to_rrf_or_stops(trained_on_real_lists, minilm, caplog):
    from local_rag.index import open_index
    from local_rag.retrieve import HybridRetriever

    settings, _ = trained_on_real_lists
    settings = settings.model_copy(deep=True)
    settings.fusion.method, settings.fusion.model = "learned", "no-such-fusion"
    folder = open_index(settings, model_checksum=minilm.checksum)
    with caplog.at_level(logging.WARNING, logger="local_rag.retrieve"):
        hybrid = HybridRetriever(folder, settings, minilm)
    assert hybrid.learned is None and "reciprocal rank fusion instead" in caplog.text
    assert {h.source for h in hybrid.search([Query("cats")], top_k=3)} == {"rrf"}
    settings.fusion.fallback = "error"
    with pytest.raises(ModelError, match="no-such-fusion"):
        HybridRetriever(folder, settings, minilm)

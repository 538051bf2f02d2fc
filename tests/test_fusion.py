from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from local_rag.records import Hit
from local_rag.retrieve.fusion import fuse, list_weight, max_merge, rrf


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(pid, score) for pid, score in pairs]


def test_rrf_hand_computed():
    lists = {"bm25:lastturn": hits(("a", 9), ("b", 5), ("c", 1)), "dense:lastturn": hits(("b", 0.9), ("d", 0.5))}
    fused = rrf(lists, k=60)
    expected = {"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 63, "d": 1 / 62}
    assert [h.passage_id for h in fused] == ["b", "a", "d", "c"]
    for h in fused:
        assert h.score == pytest.approx(expected[h.passage_id])
    assert fused[0].scores == {"bm25:lastturn": 5, "dense:lastturn": 0.9}
    assert [h.rank for h in fused] == [1, 2, 3, 4]


def test_rrf_weights_by_key_retriever_and_mode():
    assert list_weight("bm25:rewrite", {"bm25:rewrite": 3, "bm25": 2, "rewrite": 1.5}) == 3
    assert list_weight("bm25:lastturn", {"bm25": 2, "lastturn": 1.5}) == 2
    assert list_weight("dense:lastturn", {"bm25": 2, "lastturn": 1.5}) == 1.5
    assert list_weight("dense:x", {}) == 1.0
    lists = {"bm25:q": hits(("a", 2)), "dense:q": hits(("b", 2))}
    assert rrf(lists, weights={"dense": 2.0})[0].passage_id == "b"


def _lists(draw_ids: list[list[str]]) -> dict[str, list[Hit]]:
    return {f"r{i}:m": [Hit(pid, float(len(ids) - j)) for j, pid in enumerate(ids)] for i, ids in enumerate(draw_ids)}


@given(st.lists(st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=8), min_size=1, max_size=5), st.randoms())
@settings(max_examples=200, deadline=None)
def test_fusion_is_independent_of_input_order(id_lists: list[list[str]], rnd: random.Random):
    lists = _lists(id_lists)
    keys = list(lists)
    rnd.shuffle(keys)
    shuffled = {k: lists[k] for k in keys}
    for method in ("rrf", "max"):
        a = fuse(lists, method, top_k=20)
        b = fuse(shuffled, method, top_k=20)
        assert [(h.passage_id, h.score) for h in a] == [(h.passage_id, h.score) for h in b]


def test_max_merge_normalizes_each_list():
    lists = {"bm25:a": hits(("x", 100), ("y", 50), ("z", 0)), "bm25:b": hits(("y", 2), ("z", 1))}
    fused = max_merge(lists, top_k=5)
    scores = {h.passage_id: h.score for h in fused}
    assert scores == {"x": 1.0, "y": 1.0, "z": 0.0}
    assert [h.passage_id for h in fused] == ["x", "y", "z"]  # ties broken by passage id


def test_unknown_fusion_method():
    with pytest.raises(ValueError, match="valid: max, rrf"):
        fuse({}, "borda")

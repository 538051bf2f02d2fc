"""Fixed subsets: sha1 order of the ids, the same on every run; stratified shares."""

from __future__ import annotations

import hashlib

from local_rag.subset import by_sha1, first_by_sha1, stratified


def test_sha1_order_and_first_ids() -> None:
    ids = [f"task-{i}" for i in range(20)]
    expected = sorted(ids, key=lambda i: hashlib.sha1(i.encode()).hexdigest())
    assert by_sha1(ids, key=lambda i: i) == expected
    assert first_by_sha1(ids, 5) == set(expected[:5])
    assert first_by_sha1(ids, None) == set(ids) and first_by_sha1(ids, 50) == set(ids)
    assert by_sha1(ids, key=lambda i: i, seed=1) != expected  # a seed gives another fixed order


def test_stratified_keeps_shares_and_original_order() -> None:
    tasks = [{"task_id": f"t{i}", "kind": "a" if i < 30 else "b"} for i in range(40)]
    chosen = stratified(tasks, 8, lambda t: t["kind"])
    assert [t["kind"] for t in chosen].count("a") == 6 and len(chosen) == 8
    assert chosen == [t for t in tasks if t in chosen]  # original order
    assert chosen == stratified(list(reversed(tasks)), 8, lambda t: t["kind"])[::-1]  # same tasks whatever the order
    assert stratified(tasks, 100, lambda t: t["kind"]) == tasks


def test_pick_keeps_a_split_then_takes_the_seeded_order() -> None:
    from local_rag.subset import pick

    tasks = [{"task_id": f"c{i % 5}<::>{i}"} for i in range(30)]
    test_split = {"c1", "c3"}
    chosen = pick(tasks, 4, seed=7, conversations=test_split)
    assert len(chosen) == 4 and all(t["task_id"].split("<::>")[0] in test_split for t in chosen)
    assert chosen == pick(list(reversed(tasks)), 4, seed=7, conversations=test_split)  # whatever the input order
    assert chosen == by_sha1([t for t in tasks if t["task_id"][:2] in test_split], seed=7)[:4]
    assert pick(tasks) == by_sha1(tasks)  # no n: all, in sha1 order

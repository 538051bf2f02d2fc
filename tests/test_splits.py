"""The MTRAG train/test split filter: exactly the listed conversations, for retrieval items and generation tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from local_rag.errors import BadInputError
from local_rag.evaluation.retrieval import items_from_task_files
from local_rag.evaluation.splits import conversation_of, keep_split, load_split, task_in_split
from tests.conftest import MTRAG, needs_mtrag


def test_load_split_and_filter(tmp_path: Path) -> None:
    (tmp_path / "splits").mkdir()
    (tmp_path / "splits" / "mtrag_test_conversations.txt").write_text("aaa\n\nbbb\n", encoding="utf-8")
    ids = load_split(tmp_path, "test")
    assert ids == {"aaa", "bbb"}
    items = ["aaa<::>1", "ccc<::>1", "bbb<::>4", "aaab<::>2"]
    assert keep_split(items, ids, lambda t: t) == ["aaa<::>1", "bbb<::>4"]
    assert task_in_split({"conversation_id": "bbb", "task_id": "x"}, ids)
    assert not task_in_split({"task_id": "ccc<::>2"}, ids)
    with pytest.raises(BadInputError, match="split file not found"):
        load_split(tmp_path, "train")
    with pytest.raises(BadInputError, match="unknown split"):
        load_split(tmp_path, "dev")


@needs_mtrag
def test_real_split_selects_exactly_the_listed_conversations() -> None:
    test, train = load_split(MTRAG, "test"), load_split(MTRAG, "train")
    assert not test & train and len(test) == 32 and len(train) == 78
    tasks = [json.loads(line) for line in (MTRAG / "generation_tasks" / "mtrag_tasks.jsonl").open(encoding="utf-8")]
    kept = [t for t in tasks if task_in_split(t, test)]
    assert {t["conversation_id"] for t in kept} == test and len(kept) == 249
    for domain in ("clapnq", "cloud", "fiqa", "govt"):
        items, _ = items_from_task_files(MTRAG / "retrieval_tasks", domain, ["lastturn"])
        kept_items = keep_split(items, test, lambda i: i.id)
        assert {conversation_of(i.id) for i in kept_items} <= test
        assert len(kept_items) + len(keep_split(items, train, lambda i: i.id)) == len(items)

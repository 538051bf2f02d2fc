"""scripts/bench_peer.py's settings overrides (`--set`), which pick the speed levers for both sides of the peer
benchmark; the benchmark itself needs .venv-peer (LlamaIndex) and the Qwen GGUF, so it runs by hand (docs/peer.md)."""

from __future__ import annotations

import pytest

from local_rag.bench.peer import parse_sets
from local_rag.settings import deep_merge, load_settings
from tests.conftest import MTRAG, make_settings, needs_minilm, needs_mtrag


def test_sets_become_nested_overrides_that_the_settings_accept() -> None:
    overrides = parse_sets(["llm.model=qwen2.5-coder-1.5b-instruct-q4_k_m", "evidence.budget_tokens=300",
                            "rewrite.skip_standalone=false"])
    assert overrides == {"llm": {"model": "qwen2.5-coder-1.5b-instruct-q4_k_m"}, "evidence": {"budget_tokens": 300},
                         "rewrite": {"skip_standalone": False}}
    settings = load_settings("cpu-fast", overrides=deep_merge(overrides, {"models_dir": "models"}))
    assert settings.llm.model == "qwen2.5-coder-1.5b-instruct-q4_k_m"  # the profile's 0.5B replaced
    assert settings.evidence.compress and settings.evidence.budget_tokens == 300  # the rest of the profile kept
    assert not settings.rewrite.skip_standalone
    assert settings.generate.prompt == "answer_history_first"


@pytest.mark.parametrize("item", ["llm.model", "=x", "llm..model=x"])
def test_a_malformed_set_is_refused(item: str) -> None:
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_sets([item])


def test_variants_name_rows_with_their_own_settings() -> None:
    from local_rag.bench.peer import parse_variants

    assert parse_variants(["ours-e700:evidence.budget_tokens=700", "ours-e700:generate.max_words=120",
                           "ours-nowarm:pipeline.warm=false"]) == {
        "ours-e700": {"evidence": {"budget_tokens": 700}, "generate": {"max_words": 120}},
        "ours-nowarm": {"pipeline": {"warm": False}}}


@pytest.mark.parametrize("item", ["evidence.budget_tokens=700", "peer-x:evidence.budget_tokens=700",
                                  "ours-rewrite:evidence.budget_tokens=700", "ours-x:budget"])
def test_a_malformed_variant_is_refused(item: str) -> None:
    from local_rag.bench.peer import parse_variants

    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_variants([item])


def test_our_rows_warm_between_turns_and_a_variant_row_runs_its_own_settings(indexed) -> None:  # noqa: ANN001
    """Our side of the peer benchmark with the real SmolLM2: each turn is warmed first (outside its time, as a chat
    does), and a --variant row answers with its settings on top of the run's."""
    from local_rag.bench.peer import Ours

    from .llm_fixtures import MODELS, SMOLLM, llama_cpp_or_skip, model_or_skip

    llama_cpp_or_skip()
    model_or_skip(SMOLLM)
    settings, retriever = indexed
    settings = settings.model_copy(deep=True)
    settings.models_dir = str(MODELS)
    settings.llm = settings.llm.model_copy(update={"model": SMOLLM, "n_ctx": 2048, "temperature": 0.0, "seed": 0,
                                                   "n_threads": 1, "n_threads_batch": 1, "prompt_lookup": 10})
    settings.generate.max_tokens = 16
    settings.generate.prompt = "answer_history_first"
    ours = Ours.__new__(Ours)  # the index of the fixture instead of one built from a corpus file
    ours.settings, ours.retriever, ours.pipelines = settings, retriever, {}
    ours.add_row("ours", rewrite=False)
    ours.add_row("ours-e100", rewrite=True, overrides={"evidence": {"budget_tokens": 100}})
    assert ours.pipelines["ours-e100"].settings.evidence.budget_tokens == 100
    assert ours.pipelines["ours"].settings.evidence.budget_tokens == settings.evidence.budget_tokens
    task = {"task_id": "t<::>2", "input": [{"speaker": "user", "text": "How long do cats sleep?"},
                                          {"speaker": "agent", "text": "Cats sleep 12 to 16 hours a day."},
                                          {"speaker": "user", "text": "And dogs?"}]}
    row = ours.run("ours", task)
    assert row["warm_tokens"] > 50 and row["warm_s"] > 0 and row["answer"] and row["wall_s"] > 0
    # prompt lookup: llama.cpp counts the verification batches as prompt tokens, so the figures are our own records
    assert row["decode_tokens"] >= 1 and "llama_counters" in row and row["accepted_tokens"] <= row["drafted_tokens"]


@needs_mtrag
def test_the_peer_turns_can_come_from_the_test_conversations_only() -> None:
    from local_rag.bench.peer import pick_tasks
    from local_rag.evaluation.splits import load_split, task_in_split
    from local_rag.mtrag import load_qrels

    qrels = load_qrels(MTRAG / "retrieval_tasks" / "govt" / "qrels" / "dev.tsv")
    tasks_file = MTRAG / "generation_tasks" / "mtrag_tasks.jsonl"
    test = load_split(MTRAG, "test")
    picked = pick_tasks(tasks_file, "govt", qrels, 100, 0, conversations=test)
    assert len(picked) == 56 and all(task_in_split(t, test) for t in picked)  # every answerable govt test turn
    assert picked[:5] == pick_tasks(tasks_file, "govt", qrels, 4, 0, conversations=test)  # same seeded order
    assert any(not task_in_split(t, test) for t in pick_tasks(tasks_file, "govt", qrels, 24, 0))  # the old draw


@needs_minilm
def test_both_sides_index_the_same_passages_of_a_corpus_with_empty_ones(tmp_path) -> None:  # noqa: ANN001
    """The MTRAG cloud pool holds three passages with empty text: the side by side skips them on both sides (it
    stopped at the first one before), and says how many it skipped."""
    import json

    from local_rag.bench.peer import Ours, read_corpus

    corpus = tmp_path / "pool.jsonl"
    records = [{"_id": "a-0-0", "title": "", "text": "\n", "url": ""},
               {"_id": "b-0-0", "title": "Cats", "text": "Cats sleep twelve to sixteen hours a day.", "url": "u"},
               {"_id": "c-0-0", "text": "Dogs sleep about half of the day."}]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert read_corpus(corpus) == [{"_id": "b-0-0", "text": records[1]["text"], "title": "Cats", "url": "u"},
                                   {"_id": "c-0-0", "text": records[2]["text"], "title": "", "url": ""}]
    ours = Ours(make_settings(tmp_path), corpus, tmp_path / "work")  # real MiniLM, bm25s and FAISS
    assert ours.index["passages"] == 2 and ours.index["skipped"] == 1

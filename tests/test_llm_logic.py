"""Pure logic of the LLM stages with deterministic fakes: id validation, sliding windows, fallbacks, budgets."""

from __future__ import annotations

import json
import logging
import random

import pytest

from local_rag.errors import BadInputError, SettingsError
from local_rag.llm.base import repair_json
from local_rag.llm.budget import fit_passages, fit_turns, truncate
from local_rag.llm.judge import RelevanceJudge, parse_judgements
from local_rag.llm.llamacpp import pick_gpu_layers, pick_threads
from local_rag.llm.loops import cut_loop
from local_rag.llm.prompts import list_prompts, load_prompt
from local_rag.llm.rerank import ListwiseReranker, sliding_windows, validate_order
from local_rag.llm.rewrite import REWRITE_MODES, clean_query, rewrite
from local_rag.llm.stages import STAGES, make_stage
from local_rag.records import Conversation, Hit, Turn
from local_rag.settings import JudgeConfig, LLMRerankConfig, RewriteConfig, load_settings
from tests.llm_fixtures import ScriptedLLM, order_by_keyword, shown_ids

CONV = Conversation([
    Turn("user", "When was the Eiffel Tower built?"),
    Turn("agent", "It was built from 1887 to 1889 for the World's Fair in Paris."),
    Turn("user", "how tall is it?"),
], "c1")


def hits(n: int, relevant: set[int] = frozenset()) -> list[Hit]:  # type: ignore[assignment]
    return [Hit(f"p{i}", 1.0 - i / 100, i + 1, text=("GOLD " if i in relevant else "") + f"passage number {i}")
            for i in range(n)]


# --- ids, windows, JSON repair -------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "n", "prior", "expected"), [
    ([2, 1, 3], 3, None, [2, 1, 3]),
    ([2, 2, 1], 3, None, [2, 1, 3]),                   # duplicate removed, missing appended
    ([5, 0, -1, 2], 3, None, [2, 1, 3]),               # out of range dropped
    (["3", "x", True, 1.5], 3, None, [3, 1, 2]),       # digit strings accepted; bools, floats, junk dropped
    (None, 3, [3, 1, 2], [3, 1, 2]),                   # nothing usable: prior order
    ([1], 4, [4, 3, 2, 1], [1, 4, 3, 2]),              # missing in prior order
])
def test_validate_order(raw: object, n: int, prior: list[int] | None, expected: list[int]) -> None:
    assert validate_order(raw, n, prior) == expected


def test_validate_order_is_always_a_permutation() -> None:
    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(1, 20)
        raw = [rng.randint(-3, 25) for _ in range(rng.randint(0, 30))]
        assert sorted(validate_order(raw, n)) == list(range(1, n + 1))


@pytest.mark.parametrize(("n", "window", "step"), [(25, 10, 5), (20, 10, 5), (11, 10, 5), (100, 20, 10), (7, 4, 1)])
def test_sliding_windows_cover_everything_and_reach_the_top(n: int, window: int, step: int) -> None:
    spans = sliding_windows(n, window, step)
    assert spans[0][1] == n and spans[-1][0] == 0
    assert spans[0][1] - spans[0][0] == min(window, n)
    assert all(0 < end - start <= window for start, end in spans)  # the top window may be shorter (as RankGPT)
    assert all(b_end - a_end == -step or b_start == 0 for (_, a_end), (b_start, b_end) in zip(spans, spans[1:], strict=False))
    assert set().union(*(range(s, e) for s, e in spans)) == set(range(n))


def test_sliding_windows_edge_cases() -> None:
    assert sliding_windows(0, 10, 5) == []
    assert sliding_windows(3, 10, 5) == [(0, 3)]
    with pytest.raises(ValueError):
        sliding_windows(30, 10, 10)


def test_repair_json_keeps_complete_items() -> None:
    assert repair_json('{"order": [3, 1, 2,') == {"order": [3, 1, 2]}
    assert repair_json('{"keywords": ["a", "b", "c') == {"keywords": ["a", "b"]}
    assert repair_json('{"query": "cut') is None
    assert repair_json("") is None


# --- rewriting ------------------------------------------------------------------------------------------------

def test_rewrite_modes_return_queries() -> None:
    def reply(messages: list, schema: dict | None) -> str:
        props = (schema or {}).get("properties", {})
        if "query" in props:
            return '{"query": "How tall is the Eiffel Tower?"}'
        if "keywords" in props:
            return '{"keywords": ["Eiffel Tower", "height", "Eiffel Tower"]}'
        if "queries" in props:
            assert props["queries"]["maxItems"] == 3
            return '{"queries": ["Eiffel Tower height", "Eiffel Tower height", "Eiffel Tower metres"]}'
        return "The Eiffel Tower is 330 metres tall."

    llm = ScriptedLLM(reply)
    queries = rewrite(CONV, llm, ["rewrite", "keywords", "multi", "hyde"], RewriteConfig(n_queries=3))
    assert [(q.mode, q.text) for q in queries] == [
        ("rewrite", "How tall is the Eiffel Tower?"),
        ("keywords", "Eiffel Tower height"),
        ("multi", "Eiffel Tower height"),
        ("multi", "Eiffel Tower metres"),
        ("hyde", "The Eiffel Tower is 330 metres tall."),
    ]
    assert [c.stage for c in llm.calls] == ["rewrite", "keywords", "multi", "hyde"]
    assert sum(q.weight for q in queries if q.mode == "multi") == pytest.approx(1.0)
    # the few-shot example precedes the conversation, which ends with the last question
    assert llm.seen[0][1]["role"] == "user" and "Eiffel" in llm.seen[0][2]["content"]
    assert llm.seen[0][-1]["content"].rstrip().endswith("how tall is it?")


@pytest.mark.parametrize("garbage", ["", "not json", '{"query": ""}', '{"query": "!!!"}', '{"other": 1}',
                                     '{"query": "Conversation: User: hi"}', '{"query": "' + "x" * 500 + '"}'])
def test_garbage_rewrite_falls_back_to_the_last_turn(garbage: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        queries = rewrite(CONV, ScriptedLLM(garbage), ["rewrite", "keywords"])
    assert [q.text for q in queries] == ["how tall is it?", "how tall is it?"]
    assert [q.mode for q in queries] == ["rewrite", "keywords"]
    assert caplog.records  # never silent


def test_first_turn_is_not_rewritten() -> None:
    llm = ScriptedLLM('{"query": "never used"}')
    queries = rewrite(Conversation([Turn("user", "What is BM25?")]), llm, ["rewrite"])
    assert queries[0].text == "What is BM25?" and llm.calls == []


@pytest.mark.parametrize("conv", [Conversation([]), Conversation([Turn("user", "  "), Turn("agent", "hi")])])
def test_empty_conversation_is_refused(conv: Conversation) -> None:
    with pytest.raises(BadInputError):
        rewrite(conv, ScriptedLLM("{}"), ["rewrite"])


def test_unknown_modes_and_stages_are_refused_with_the_valid_names() -> None:
    with pytest.raises(SettingsError, match="valid: rewrite, keywords, multi, hyde"):
        rewrite(CONV, ScriptedLLM("{}"), ["rewrite", "paraphrase"])
    with pytest.raises(SettingsError, match="valid: rewrite, llm-rerank, judge"):
        STAGES.get("answer")
    settings = load_settings("cpu-test", overrides={"rewrite": {"modes": ["nope"]}})
    with pytest.raises(SettingsError, match="unknown rewrite mode 'nope'"):
        make_stage("rewrite", ScriptedLLM("{}"), settings)
    assert REWRITE_MODES.names() == ["rewrite", "keywords", "multi", "hyde"]


def test_clean_query() -> None:
    assert clean_query('  "How  tall?" ', "fb", "rewrite") == "How tall?"
    assert clean_query(None, "fb", "rewrite") == "fb"


def test_history_is_trimmed_to_the_budget_and_the_cut_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    long = Conversation([Turn("user" if i % 2 == 0 else "agent", f"turn {i} " + "word " * 200) for i in range(9)]
                        + [Turn("user", "and the last question?")])
    llm = ScriptedLLM('{"query": "ok query"}')
    with caplog.at_level(logging.INFO, logger="local_rag.llm.budget"):
        rewrite(long, llm, ["rewrite"], RewriteConfig(history_tokens=500, agent_tokens=50))
    prompt = llm.seen[0][-1]["content"]
    assert "and the last question?" in prompt and "turn 0 " not in prompt
    assert any("dropped the" in r.getMessage() for r in caplog.records)
    assert any("shortened" in r.getMessage() for r in caplog.records)


# --- budgets ------------------------------------------------------------------------------------------------

def count(text: str) -> int:
    return len(text.split())


def test_fit_turns_keeps_the_last_user_turn() -> None:
    turns = [Turn("user", "a " * 50), Turn("agent", "b " * 50), Turn("user", "c " * 300)]
    kept, cuts = fit_turns(turns, 100, count)
    assert len(kept) == 1 and kept[0].text.startswith("c") and count(kept[0].text) <= 100
    assert cuts and len(cuts.notes) == 2


def test_turns_dropped_to_the_history_cap_are_a_note_not_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """Session 48: a chat past a few turns printed "generate: token budget: dropped the 4 oldest of 10 turns" at
    every turn: the configured history cap is by design, so it is logged at INFO; a cut the context window forces
    stays a warning."""
    turns = [Turn("user" if i % 2 == 0 else "agent", "w " * 40) for i in range(10)]
    with caplog.at_level(logging.INFO, logger="local_rag.llm.budget"):
        fit_turns(turns, 100, count, stage="generate", level=logging.INFO)
        fit_turns(turns, 100, count, stage="rewrite")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, "generate: token budget: dropped the 8 oldest of 10 turns"),
        (logging.WARNING, "rewrite: token budget: dropped the 8 oldest of 10 turns"),
    ]


def test_fit_passages_cuts_but_keeps_every_passage() -> None:
    texts = ["w " * 300 for _ in range(10)]
    fitted, cuts = fit_passages(texts, 400, count, max_each=100)
    assert len(fitted) == 10 and sum(count(t) for t in fitted) <= 400 + 10
    assert cuts
    same, none = fit_passages(["short text"], 400, count, max_each=100)
    assert same == ["short text"] and not none


def test_truncate() -> None:
    assert truncate("one two three", 10, count) == "one two three"
    assert count(truncate("word " * 100, 10, count)) <= 11  # + the ellipsis mark


# --- listwise reranking -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shuffle", [True, False])
def test_rerank_moves_relevant_passages_to_the_top_through_the_windows(shuffle: bool) -> None:
    candidates = hits(25, relevant={3, 17, 24})
    llm = ScriptedLLM(order_by_keyword("GOLD"))
    out = ListwiseReranker(llm, LLMRerankConfig(candidates=20, window=10, step=5, shuffle=shuffle)).rerank(
        "q", candidates)
    assert [h.passage_id for h in out[:2]] == ["p3", "p17"]        # 24 is past `candidates`: not reranked
    assert [h.passage_id for h in out[20:]] == [f"p{i}" for i in range(20, 25)]
    assert sorted(h.passage_id for h in out) == sorted(h.passage_id for h in candidates)
    assert [h.rank for h in out] == list(range(1, 26))
    assert all(a.score > b.score for a, b in zip(out, out[1:], strict=False))
    assert out[0].scores["fused"] == candidates[3].score
    assert len(llm.calls) == 3 and all(c.stage == "rerank" for c in llm.calls)
    assert candidates[0].rank == 1  # input untouched


def test_rerank_question_comes_after_the_passages_and_ids_are_shuffled() -> None:
    llm = ScriptedLLM('{"order": []}')
    ListwiseReranker(llm, LLMRerankConfig(candidates=10, window=10, step=5)).rerank("the question", hits(10))
    content = llm.seen[0][-1]["content"]
    assert content.index("[1]") < content.index("Question: the question")
    shown = shown_ids(llm.seen[0])
    assert [shown[i].split()[-1] for i in sorted(shown)] != [str(i) for i in range(10)]


def test_rerank_with_a_useless_reply_keeps_the_prior_order() -> None:
    out = ListwiseReranker(ScriptedLLM("garbage"), LLMRerankConfig(candidates=10, window=5, step=2)).rerank(
        "q", hits(10))
    assert [h.passage_id for h in out] == [f"p{i}" for i in range(10)]


def test_rerank_reply_that_echoes_the_shuffled_ids_keeps_the_retrieval_order() -> None:
    # measured: Qwen2.5-Coder-1.5B answers {"order": [1, 2, ..., 10]} to most windows; with shuffled ids that is a
    # random permutation, so it is treated as no ranking
    reranker = ListwiseReranker(ScriptedLLM('{"order": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}'),
                                LLMRerankConfig(candidates=10, window=10, step=5))
    out = reranker.rerank("q", hits(10))
    assert [h.passage_id for h in out] == [f"p{i}" for i in range(10)] and reranker.echoed == 1


# --- relevance judging --------------------------------------------------------------------------------------

def judge_reply(scores: dict[str, int]) -> ScriptedLLM:
    def reply(messages: list, schema: dict | None) -> str:
        ids = shown_ids(messages)
        return json.dumps({"judgments": [
            {"id": i, "score": next((s for k, s in scores.items() if k in t), 0), "reason": "r"} for i, t in ids.items()
        ]})

    return ScriptedLLM(reply)


def test_judge_filters_and_orders_within_levels() -> None:
    candidates = hits(8)
    scores = {"number 1": 1, "number 2": 2, "number 4": 2, "number 6": 1}
    llm = judge_reply(scores)
    out = RelevanceJudge(llm, JudgeConfig(candidates=7, batch_size=3, min_score=1)).filter("q", candidates)
    assert [h.passage_id for h in out] == ["p2", "p4", "p1", "p6", "p7"]  # p7 is past `candidates`: kept, unjudged
    assert [h.scores.get("judge") for h in out] == [2.0, 2.0, 1.0, 1.0, None]
    assert len(llm.calls) == 3  # batches of 3, 3, 1


def test_judge_keeps_passages_the_llm_skipped(caplog: pytest.LogCaptureFixture) -> None:
    batch = hits(3)
    with caplog.at_level(logging.WARNING):
        judged = parse_judgements({"judgments": [{"id": 2, "score": 0, "reason": "no"}, {"id": 9, "score": 2}]}, batch)
    assert [(j.score, j.judged) for j in judged] == [(1, False), (0, True), (1, False)]
    assert caplog.records
    assert [j.score for j in parse_judgements("garbage", batch)] == [1, 1, 1]


# --- machine choices and prompts ----------------------------------------------------------------------------

def test_pick_threads() -> None:
    assert pick_threads(0, 0, cores=2) == (2, 2)
    assert pick_threads(0, 0, cores=16) == (16, 16)
    assert pick_threads(3, 5, cores=2) == (3, 5)


def test_pick_gpu_layers() -> None:
    gb = 1 << 30
    assert pick_gpu_layers(-1, True, 4 * gb, 28, 10 * gb) == -1
    assert pick_gpu_layers(-1, False, 4 * gb, 28, 10 * gb) == 0       # CPU build
    assert pick_gpu_layers(-1, True, 4 * gb, 28, None) == 0           # no GPU
    assert 0 < pick_gpu_layers(-1, True, 8 * gb, 28, 5 * gb) < 28     # partial offload
    assert pick_gpu_layers(0, True, 4 * gb, 28, 10 * gb) == 0
    assert pick_gpu_layers(10, True, 4 * gb, 28, 10 * gb) == 10
    # the KV cache at the real context counts: weights fit alone, not with a 32k-token cache beside them
    assert pick_gpu_layers(-1, True, 4 * gb, 28, 5 * gb) == -1
    assert 0 < pick_gpu_layers(-1, True, 4 * gb, 28, 5 * gb, kv_bytes=2 * gb) < 28


def test_every_prompt_loads_and_renders() -> None:
    assert {"rewrite", "keywords", "multi", "hyde", "rerank", "judge"} <= set(list_prompts())
    import string

    for name in list_prompts():
        prompt = load_prompt(name)
        fields = {f: "x" for _, f, _, _ in string.Formatter().parse(prompt.user) if f}
        messages = prompt.messages(**fields)
        assert messages[0]["role"] == "system" and messages[-1]["role"] == "user"
        assert prompt.schema is None or prompt.schema["type"] == "object"
    assert len(load_prompt("rewrite").examples) == 1
    with pytest.raises(SettingsError, match="valid prompts"):
        load_prompt("nope")


def test_missing_llama_cpp_names_the_install_script(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import sys

    from local_rag.errors import MissingDependencyError
    from local_rag.llm import load_llm
    from local_rag.settings import LLMConfig
    from tests.llm_fixtures import write_tiny_gguf

    model = write_tiny_gguf(tmp_path / "tiny.gguf")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(MissingDependencyError, match="install_llama_cpp.sh"):
        load_llm(LLMConfig(model=str(model)), tmp_path)


# Task C answers of the 1.5B generator to one govt task: it numbers its grounds [1], [2]... and falls into a loop
KEPT = ("The grounds for lodging an appeal include: [1] the trial court's order was not filed on time, [2] there is "
        "not an appealable order, [5] the appeal is not timely filed,")
LOOP = KEPT + "".join(f" [{n}] the appeal is not timely filed," for n in range(6, 9)) + " [9] the ap"  # session 11


def test_a_loop_is_kept_once_even_when_it_numbers_its_copies() -> None:
    assert cut_loop(LOOP, 3) == KEPT
    assert cut_loop(LOOP.replace("[", "(").replace("]", ")"), 3) is None  # (6), (7) are text, and they differ
    assert cut_loop(KEPT + " [6] the appeal is not timely filed,", 3) is None  # two short copies ([5] and [6])
    assert cut_loop(LOOP, 5) == KEPT  # four copies of 33 characters are two of 66: a long block needs two
    assert cut_loop(LOOP, 0) is None and cut_loop("", 3) is None


def test_a_long_loop_is_found_at_its_second_copy() -> None:
    # session 12, the same task: a cycle of three clauses (about 300 characters), cut by max_tokens before a third copy
    head = "[5] the case was not appealed within the time limit,"
    clauses = [f" [{n}] the case was not appealed because the court did not have the {what} to hear the case,"
               for n, what in enumerate(["resources", "expertise", "time"] * 2, start=6)]
    text = head + "".join(clauses) + " [12] the case was not"
    assert cut_loop(text, 3) == head + "".join(clauses[:3])
    assert cut_loop(head + "".join(clauses[:5]), 3) is None  # not yet two whole copies


def test_a_numbered_list_that_repeats_an_item_is_a_loop() -> None:
    items = "".join(f"{n}. Accommodation at a hotel or resort with a reservation\n" for n in range(5, 8))
    assert cut_loop("Options:\n" + items + "8. Accomm", 3) == "Options:\n5. Accommodation at a hotel or resort with a reservation"


def test_a_short_block_with_a_word_is_a_loop_at_its_eighth_copy() -> None:
    # session 37: SmolLM2 under cpu-test, to max_tokens; the block (13 characters) is under LOOP_CHARS' floor
    text = "A passage is " + "a passage is " * 12 + "a pas"
    assert cut_loop(text, 3) == "A passage is a"
    assert cut_loop("A passage is " + "a passage is " * 6, 3) is None  # seven copies: not yet
    assert cut_loop("ha ha " * 40, 3) is None  # a block under 8 characters never counts


@pytest.mark.parametrize("text", [
    "| a | b | c |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",  # a short rule
    "| a | b |\n" + "|:-------" * 12 + "|",  # an alignment row of 10 characters a column: no word in it
    "Q1 2020 revenue: $5.1 billion\nQ2 2020 revenue: $5.3 billion\nQ3 2020 revenue: $5.6 billion\n",
    "Wait" + "." * 200,
])
def test_tables_and_figures_are_not_loops(text: str) -> None:
    assert cut_loop(text, 3) is None


@pytest.mark.parametrize("gpus, order", [([{"free": 8 << 30}], ["retriever", "llm"]), ([], ["llm"])])
def test_on_a_gpu_the_encoders_load_before_the_llm(monkeypatch: pytest.MonkeyPatch, tmp_path, gpus, order) -> None:
    """llama.cpp sizes its GPU layers on the free VRAM it sees: the embedder and FAISS must have taken theirs."""
    import local_rag.device
    import local_rag.llm
    import local_rag.retrieve.stack
    from local_rag.pipeline import Pipeline
    from tests.conftest import make_settings

    loaded: list[str] = []
    monkeypatch.setattr(local_rag.device, "nvml_gpus", lambda: gpus)
    monkeypatch.setattr(local_rag.retrieve.stack, "open_searcher", lambda settings: loaded.append("retriever") or "R")
    monkeypatch.setattr(local_rag.llm, "load_llm", lambda config, models_dir: loaded.append("llm") or "L")
    pipeline = Pipeline(make_settings(tmp_path))
    assert pipeline.llm == "L" and loaded == order

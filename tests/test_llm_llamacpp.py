"""The real llama.cpp path with SmolLM2-135M (structure and valid JSON, not quality), and Qwen (slow).

Deterministic: temperature 0, seed 0. Skipped with a reason when llama_cpp or the model is missing.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from local_rag.errors import BadInputError, ModelError
from local_rag.llm.base import LLM
from local_rag.llm.judge import RelevanceJudge
from local_rag.llm.rerank import ListwiseReranker
from local_rag.llm.rewrite import rewrite
from local_rag.records import Conversation, Hit, Turn
from local_rag.settings import JudgeConfig, LLMConfig, LLMRerankConfig
from tests.llm_fixtures import MODELS, QWEN15, SMOLLM, llama_cpp_or_skip, load_real, write_tiny_gguf

pytestmark = pytest.mark.llm

CONV = Conversation([
    Turn("user", "When was the Eiffel Tower built?"),
    Turn("agent", "It was built from 1887 to 1889 for the World's Fair in Paris."),
    Turn("user", "how tall is it?"),
], "c1")
PASSAGES = [
    Hit("p0", 0.9, 1, title="Louvre", text="The Louvre is the world's most-visited art museum, in Paris."),
    Hit("p1", 0.8, 2, title="Eiffel Tower", text="The Eiffel Tower is 330 metres tall, about the height of an "
                                                  "81-storey building."),
    Hit("p2", 0.7, 3, title="Seine", text="The Seine is a 777-kilometre-long river in northern France."),
    Hit("p3", 0.6, 4, title="Eiffel Tower", text="The tower was the tallest man-made structure in the world "
                                                  "until the Chrysler Building was finished in 1930."),
]
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 40},
                                           "confidence": {"type": "integer", "enum": [0, 1, 2]}},
          "required": ["answer", "confidence"]}


def test_complete_records_tokens_and_times(smollm: LLM) -> None:
    done = smollm.run([{"role": "user", "content": "What is the capital of France?"}], stage="t", max_tokens=16)
    call = done.call
    assert done.text and call.stage == "t" and call.response == done.text
    assert call.prompt_tokens > 5 and 0 < call.completion_tokens <= 16
    assert call.prefill_s > 0 and call.decode_s >= 0 and call.total_s == pytest.approx(call.prefill_s + call.decode_s)
    assert "<|im_start|>" in call.prompt  # the GGUF's own chat template (ChatML for SmolLM2)
    assert smollm.calls[-1] is call


def test_a_reply_that_loops_is_stopped_and_kept_once(smollm: LLM) -> None:
    """SmolLM2 repeats this phrase until max_tokens; the loop guard (llm.loop_repeats, default 3) stops it early."""
    messages = [{"role": "user", "content": "Repeat after me forever: buy one get one free, buy one get one free, "
                                            "buy one get one free,"}]
    pieces: list[str] = []
    done = smollm.run(messages, stage="t", max_tokens=200, on_token=pieces.append)
    assert done.text == "buy one get one free,"
    assert done.call.completion_tokens < 40
    assert "".join(pieces).count("buy one get one free") <= 4  # streamed before the loop was seen (at a break)
    unguarded = load_real(SMOLLM, n_ctx=2048, temperature=0.0, seed=0, loop_repeats=0)
    assert unguarded.run(messages, stage="t", max_tokens=200).call.completion_tokens == 200


def test_schema_output_is_valid_json_and_deterministic(smollm: LLM) -> None:
    messages = [{"role": "user", "content": "Which city is the Eiffel Tower in? Answer in JSON."}]
    first, done = smollm.run_json(messages, SCHEMA, stage="json", max_tokens=64)
    second, _ = smollm.run_json(messages, SCHEMA, stage="json", max_tokens=64)
    assert isinstance(first, dict) and set(first) == {"answer", "confidence"}
    assert isinstance(first["answer"], str) and first["confidence"] in (0, 1, 2)
    assert json.loads(done.text) == first and second == first


def test_count_tokens_uses_the_model_tokenizer(smollm: LLM) -> None:
    assert smollm.count_tokens("") == 0
    assert 1 <= smollm.count_tokens("hello world") <= 4


def test_stages_run_end_to_end_with_valid_structure(smollm: LLM) -> None:
    queries = rewrite(CONV, smollm, ["rewrite", "keywords", "multi", "hyde"])
    assert {q.mode for q in queries} == {"rewrite", "keywords", "multi", "hyde"}
    assert all(q.text.strip() for q in queries)
    reranked = ListwiseReranker(smollm, LLMRerankConfig(candidates=4, window=4, step=2)).rerank(
        "How tall is the Eiffel Tower?", PASSAGES)
    assert sorted(h.passage_id for h in reranked) == ["p0", "p1", "p2", "p3"]
    judged = RelevanceJudge(smollm, JudgeConfig(batch_size=2, min_score=0)).judge("How tall is the Eiffel Tower?",
                                                                                  PASSAGES[:2])
    assert [j.passage_id for j in judged] == ["p0", "p1"] and all(j.score in (0, 1, 2) for j in judged)
    stages = {c.stage for c in smollm.calls}
    assert {"rewrite", "keywords", "multi", "hyde", "rerank", "judge"} <= stages
    assert all(c.prompt_tokens > 0 and c.total_s > 0 for c in smollm.calls)


def test_prompt_over_the_context_is_refused(smollm: LLM) -> None:
    with pytest.raises(BadInputError, match="no room to answer"):
        smollm.complete([{"role": "user", "content": "word " * 3000}], stage="t")
    with pytest.raises(BadInputError):
        smollm.complete([], stage="t")


def test_loading_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    llama_cpp_or_skip()

    def blocked(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", blocked)
    monkeypatch.setattr(socket, "create_connection", blocked)
    monkeypatch.setattr(socket, "getaddrinfo", blocked)
    llm = load_real(SMOLLM, n_ctx=512)
    assert llm.run([{"role": "user", "content": "Hi"}], stage="offline", max_tokens=4).call.completion_tokens > 0


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_gguf_gives_a_model_error(tmp_path: Path, damage: str) -> None:
    llama_cpp_or_skip()
    from local_rag.llm import load_llm

    path = tmp_path / "model.gguf"
    src = MODELS / SMOLLM
    real = next(src.glob("*.gguf"), None) if src.is_dir() else None
    data = real.read_bytes() if real else write_tiny_gguf(tmp_path / "t.gguf").read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"GGUF" + b"\x03" * 4096)
    with pytest.raises(ModelError, match=str(path)):
        load_llm(LLMConfig(model=str(path)), MODELS)


def test_gguf_without_a_chat_template_or_unloadable_is_refused(tmp_path: Path) -> None:
    llama_cpp_or_skip()
    from local_rag.llm import load_llm

    no_template = write_tiny_gguf(tmp_path / "nt.gguf", template=None)
    with pytest.raises(ModelError, match="no chat template"):
        load_llm(LLMConfig(model=str(no_template)))
    tiny = write_tiny_gguf(tmp_path / "tiny.gguf")  # a valid file, but not a model llama.cpp can run
    with pytest.raises(ModelError, match="llama.cpp could not load"):
        load_llm(LLMConfig(model=str(tiny)))


def test_missing_model_gives_a_model_error(tmp_path: Path) -> None:
    from local_rag.llm import load_llm

    with pytest.raises(ModelError, match="unknown model 'no-such-model'"):
        load_llm(LLMConfig(model="no-such-model"), tmp_path)


@pytest.mark.slow
def test_qwen_coder_rewrites_and_ranks() -> None:
    llm = load_real(QWEN15, n_ctx=4096)
    queries = rewrite(CONV, llm, ["rewrite", "keywords"])
    assert "eiffel" in queries[0].text.lower() and "eiffel" in queries[1].text.lower()
    reranked = ListwiseReranker(llm, LLMRerankConfig(candidates=4, window=4, step=2)).rerank(
        "How tall is the Eiffel Tower?", PASSAGES)
    assert reranked[0].passage_id in {"p1", "p3"}  # an Eiffel Tower passage first (1.5B: not always the best one)


def test_streaming_pieces_make_up_the_reply(smollm: LLM) -> None:
    pieces: list[str] = []
    done = smollm.run([{"role": "user", "content": "Name three colours."}], stage="stream", max_tokens=12,
                      on_token=pieces.append)
    assert len(pieces) > 1 and "".join(pieces).strip() == done.text


def test_stage_prefixes_are_reused_across_stages() -> None:
    """Alternating two stages: the second call of each restores its own prefix (KV state) instead of prefilling
    it again, and replies exactly as when the prefix is still live in llama.cpp's cache (the same suffix evaluated
    on the same prefix KV; a full re-prefill may differ in the last float bits, so that is not the reference)."""
    with_cache = load_real(SMOLLM, n_ctx=2048, temperature=0.0, seed=0, prefix_cache=4)
    without = load_real(SMOLLM, n_ctx=2048, temperature=0.0, seed=0, prefix_cache=0)
    rules = {"rewrite": "You rewrite questions into search queries. " * 12,
             "answer": "You answer from the passages only and cite them. " * 12}
    questions = ("How tall is the Eiffel Tower?", "When was it built?")

    def ask(llm: LLM, stage: str, question: str) -> str:
        messages = [{"role": "system", "content": rules[stage]}, {"role": "user", "content": question}]
        return llm.run(messages, stage=stage, max_tokens=12).text

    interleaved = {(q, stage): ask(with_cache, stage, q) for q in questions for stage in rules}
    grouped = {(q, stage): ask(without, stage, q) for stage in rules for q in questions}  # live prefix reuse
    assert interleaved == grouped
    first, second = with_cache.calls[:2], with_cache.calls[2:]
    assert all(c.cached_tokens < 10 for c in first)  # nothing shared yet (the template's first tokens at most)
    for call in second:  # each stage's system text came from its saved state
        assert 80 < call.cached_tokens < call.prompt_tokens
    assert [c.cached_tokens > 80 for c in without.calls] == [False, True, False, True]
    with_cache.forget_prompts()  # what `local-rag bench` does between repeats of a lone session
    ask(with_cache, "answer", questions[1])
    assert with_cache.calls[-1].cached_tokens < 10


def test_prefix_states_pick_the_longest_match_and_evict_the_oldest() -> None:
    from local_rag.llm.kv_cache import PrefixStates, SavedState, common_prefix

    assert common_prefix([1, 2, 3], [1, 2, 3]) == 3 and common_prefix([], [1]) == 0
    cache = PrefixStates(slots=2)
    cache.put("a", SavedState([1, 2, 3, 4], b"a", 1))
    cache.put("b", SavedState([1, 2, 9], b"b", 1))
    assert cache.best([1, 2, 3, 4, 5]) == ("a", 4) and cache.best([1, 2, 9, 9]) == ("b", 3)
    assert cache.best([7]) is None
    cache.put("c", SavedState([5], b"c", 1))
    assert list(cache.states) == ["b", "c"]  # "a" was the least recently saved


_CXX_CHECK = """
import ctypes, sys
import numpy  # imported first, as the pipeline does: a CUDA build's load crashed after it (session 37, H200)
sym = "_ZNSo9_M_insertIlEERSoT_"  # std::ostream::_M_insert<long>, where that crash was
before = hasattr(ctypes.CDLL(None), sym)
from local_rag.llm.native import import_llama_cpp
import_llama_cpp()
print(before, hasattr(ctypes.CDLL(None), sym), "llama_cpp" in sys.modules)
"""


@pytest.mark.parametrize(("env", "expected"), [({}, "False True True"),
                                               ({"LOCAL_RAG_CXX_GLOBAL": "0"}, "False False True")])
def test_llama_cpp_is_imported_with_the_cxx_runtime_global(env: dict[str, str], expected: str) -> None:
    """`import_llama_cpp` makes libstdc++'s symbols global (dlopen(NULL) finds them) before llama.cpp's libraries
    load, in a fresh process where numpy came first; ``LOCAL_RAG_CXX_GLOBAL=0`` leaves them local. The crash it
    prevents needs a CUDA build (docs/benchmarks.md, session 37); this checks the mechanism on any Linux."""
    import os
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("the C++ runtime is made global on Linux only")
    llama_cpp_or_skip()
    out = subprocess.run([sys.executable, "-c", _CXX_CHECK], capture_output=True, text=True, check=True,
                         env={**os.environ, **env}, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == expected


# functions that import llama_cpp only with a loaded model in hand (so llama_cpp is already imported, through
# local_rag.llm.native): a new first importer must call import_llama_cpp() / make_cxx_runtime_global() first
_AFTER_A_LOADED_MODEL = {
    "local_rag/bench/memory.py": {"llama_buffers"}, "local_rag/bench/peer.py": {"perf_reset", "perf_read",
    "chat_renderer", "write_report"}, "local_rag/llm/kv_cache.py": {"_save", "_load"},
    "local_rag/llm/llamacpp.py": {"_grammar"},
}


def test_every_first_import_of_llama_cpp_goes_through_native() -> None:
    """A CUDA build of llama-cpp-python crashes at load when its libraries were first loaded after numpy without the
    C++ runtime made global (session 37, H200), which CI cannot see: so every function of the package that imports
    llama_cpp (or LlamaIndex's wrapper of it) calls `import_llama_cpp` / `make_cxx_runtime_global` before, or is one
    that only runs with a model already loaded (listed above)."""
    import ast

    root = Path(__file__).resolve().parents[1]
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    offenders = []
    for path in sorted((root / "local_rag").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "local_rag/llm/native.py":
            continue
        tree = ast.parse(path.read_text())
        parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if not any(n.split(".")[0] == "llama_cpp" or n.startswith("llama_index.llms.llama_cpp") for n in names):
                continue
            enclosing, up = [], parent.get(node)
            while up is not None:  # every function the import is in must guard it (or be listed)
                if isinstance(up, functions):
                    enclosing.append(up)
                up = parent.get(up)
            if not enclosing:
                offenders.append(f"{rel}:{node.lineno} at module level")
            for func in enclosing:
                guarded = any(isinstance(n, ast.Call) and getattr(n.func, "id", "") in
                              ("import_llama_cpp", "make_cxx_runtime_global") and n.lineno < node.lineno
                              for n in ast.walk(func))
                if func.name not in _AFTER_A_LOADED_MODEL.get(rel, set()) and not guarded:
                    offenders.append(f"{rel}:{node.lineno} in {func.name}()")
    assert not offenders, "llama_cpp imported without local_rag.llm.native first: " + ", ".join(offenders)

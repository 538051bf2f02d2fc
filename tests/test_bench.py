"""``local-rag bench``: a real tiny index (bm25s + FAISS over `HashEmbedder` vectors), the pipeline with a scripted
LLM (and the real SmolLM2 for the llama.cpp figures); the report's structure, files and numbers are checked, never
its speed (speed claims come from the committed reports in docs/benchmarks/)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from local_rag.bench.bandwidth import cpu_bandwidth, decode_bound
from local_rag.bench.conversations import Session, default_sessions, read_sessions, task_sessions
from local_rag.bench.memory import MemorySampler
from local_rag.bench.report import markdown, write_report
from local_rag.bench.runner import clear_query_caches, llm_stats, stage_intervals
from local_rag.bench.suite import run_bench
from local_rag.index import build_index, open_index
from local_rag.records import LLMCall
from local_rag.retrieve.hybrid import HybridRetriever
from local_rag.settings import Settings, load_settings
from tests.conftest import HashEmbedder
from tests.llm_fixtures import ScriptedLLM


def reply(messages, schema):  # type: ignore[no-untyped-def]
    if schema is not None:  # the rewrite stage
        return '{"query": "how many hours does a cat sleep"}'
    return "Cats sleep twelve to sixteen hours a day [1]."


SESSIONS = [
    Session("cats", [], ["tell me about cats", "how long do they sleep?"]),
    Session("bm25", [], ["what is BM25?"]),
]


@pytest.fixture
def parts(fake_settings: Settings, hash_embedder: HashEmbedder, corpus_file: Path):
    build_index(fake_settings, corpus_file, embedder=hash_embedder, progress=False)
    return fake_settings, HybridRetriever(open_index(fake_settings), fake_settings, hash_embedder), corpus_file


def finite(x: object) -> bool:
    return isinstance(x, int | float) and math.isfinite(x)


def test_bench_report_structure_files_and_finite_numbers(parts, tmp_path: Path):
    settings, retriever, corpus = parts
    pytest.importorskip("matplotlib")
    report = run_bench(settings, SESSIONS, "test sessions", repeats=2, llm=ScriptedLLM(reply), retriever=retriever,
                       build_passages=5, build_corpus=corpus, command="test")
    s = report["summary"]
    assert s["turns"] == 2 * 3  # 3 user turns x 2 repeats; the warm-up turn is not counted
    assert report["backends_used"]["faiss"] == "cpu" and "embedder" in report["backends_used"]
    assert s["warmup_s"] is not None and s["warmup_s"] >= 0
    stages = s["stages"]
    assert {"rewrite", "retrieval", "retrieval.bm25", "retrieval.dense", "retrieval.fusion", "generate", "turn"} <= set(stages)
    for name, st in stages.items():
        assert st["n"] == 6, name
        assert all(finite(st[k]) and st[k] >= 0 for k in ("p50_s", "p95_s", "mean_s", "start_p50_s")), name
        assert st["p95_s"] >= st["p50_s"]
        assert finite(st["peak_rss_mb"]) and st["peak_rss_mb"] > 0, name
    # stages follow one another inside the turn
    assert stages["retrieval"]["start_p50_s"] >= stages["rewrite"]["start_p50_s"]
    assert stages["generate"]["start_p50_s"] >= stages["retrieval"]["start_p50_s"]
    assert stages["turn"]["p50_s"] >= stages["generate"]["p50_s"]
    # the scripted LLM streams its answer, so every turn has a time to first token
    assert s["ttft_from_turn_start"]["n"] == 6 and s["ttft_from_generation_start"]["p50_s"] >= 0
    assert s["ttft_from_turn_start"]["p50_s"] >= s["ttft_from_generation_start"]["p50_s"]
    llm = s["llm"]
    # only the follow-up turn is rewritten (a first turn is already standalone)
    assert llm["rewrite"]["calls"] == 2 and llm["generate"]["calls"] == 6 and llm["all"]["calls"] == 8
    assert finite(llm["generate"]["decode_tokens_per_s"])
    assert report["bandwidth"] == {"skipped": "the LLM is not a GGUF model on llama.cpp"}
    build = report["index_build"]
    assert build["passages"] == 5 and all(finite(build[k]) and build[k] > 0 for k in build if k.endswith("_per_s"))
    assert report["machine"]["cpu"] and "libraries" in report["machine"]
    assert report["headline"]["turn_p50_s"] == stages["turn"]["p50_s"]
    assert len(report["turns"]) == 6 and report["turns"][1]["turn"] == 1

    paths = write_report(report, tmp_path / "out", "bench-test")
    for key in ("json", "md", "stage waterfall", "memory by stage"):
        assert Path(paths[key]).stat().st_size > 0, key
    assert Path(paths["stage waterfall"]).read_bytes()[:4] == b"\x89PNG"
    loaded = json.loads(Path(paths["json"]).read_text())
    assert loaded["summary"]["stages"]["generate"]["n"] == 6
    md = Path(paths["md"]).read_text()
    assert "| generate | 6 |" in md and "dense (incl. query embedding)" in md and "bench-test-waterfall.png" in md


def test_bench_without_plot_writes_json_and_markdown_only(parts, tmp_path: Path):
    settings, retriever, _ = parts
    report = run_bench(settings, SESSIONS[1:], "one", repeats=1, warmup=False, llm=ScriptedLLM(reply),
                       retriever=retriever, build_passages=0, bandwidth=False)
    paths = write_report(report, tmp_path, "b", plot=False)
    assert set(paths) == {"json", "md"} and report["summary"]["warmup_s"] is None
    assert "index_build" not in report


def test_missing_matplotlib_is_a_clear_error(parts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import sys

    from local_rag.errors import MissingDependencyError

    settings, retriever, _ = parts
    report = run_bench(settings, SESSIONS[1:], "one", repeats=1, llm=ScriptedLLM(reply), retriever=retriever,
                       build_passages=0, bandwidth=False)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match="plot"):
        write_report(report, tmp_path, "b")


def test_query_cache_is_emptied_so_repeats_embed_again(parts):
    settings, retriever, _ = parts
    dense = retriever.retrievers["dense"]
    from local_rag.records import Query

    retriever.search([Query("cats")])
    assert dense._cache
    clear_query_caches(retriever)
    assert not dense._cache


def test_warmup_is_its_own_turn_and_a_lone_session_forgets_between_repeats(monkeypatch: pytest.MonkeyPatch):
    import local_rag.bench.runner as runner

    seen: list[str] = []

    def fake_answer(pipeline, conversation, sampler):  # type: ignore[no-untyped-def]
        seen.append(conversation.id)
        answer = type("A", (), {"text": "ok", "kind": "answer"})()
        return type("R", (), {"timings": {"generate": 0.0}, "llm_calls": [], "answer": answer})(), 0.0, 0.0, None

    class LLM:
        forgot = 0

        def forget_prompts(self):  # type: ignore[no-untyped-def]
            self.forgot += 1

    pipeline = type("P", (), {"_llm": LLM()})()
    monkeypatch.setattr(runner, "_answer", fake_answer)
    runner.run_sessions(pipeline, [Session("one", [], ["hi"])], repeats=3)
    assert seen == [runner.WARMUP.id, "one", "one", "one"] and pipeline._llm.forgot == 2
    seen.clear()
    runner.run_sessions(pipeline, SESSIONS, repeats=2)  # other sessions come between repeats: nothing forgotten
    assert seen[0] == runner.WARMUP.id and len(seen) == 7 and pipeline._llm.forgot == 2


def test_each_measured_turn_is_warmed_first_as_a_chat_does(monkeypatch: pytest.MonkeyPatch):
    """Before every measured turn (not the load turn) the pipeline warms the conversation before the user's message;
    its time is the turn's ``warm_s``, outside the turn; a pipeline that warms nothing records None."""
    import local_rag.bench.runner as runner

    def fake_answer(pipeline, conversation, sampler):  # type: ignore[no-untyped-def]
        answer = type("A", (), {"text": "ok", "kind": "answer"})()
        return type("R", (), {"timings": {"generate": 0.0}, "llm_calls": [], "answer": answer})(), 0.0, 1.0, 0.5

    warmed: list[list[str]] = []

    class Warming:
        _llm = None

        def warm(self, conversation):  # type: ignore[no-untyped-def]
            warmed.append([t.text for t in conversation.turns])
            return ["prefilled"]

    monkeypatch.setattr(runner, "_answer", fake_answer)
    run = runner.run_sessions(Warming(), [Session("s", [], ["first?", "second?"])], repeats=1)
    assert warmed == [[], ["first?", "ok"]]  # the conversation before each user turn, the user's message not in it
    assert all(t.warm_s is not None and t.to_json()["warm_s"] is not None for t in run.turns)
    summary = runner.summarize(run, load_settings("cpu-test"))
    assert summary["warm_between_turns"]["n"] == 2
    cold = runner.run_sessions(type("Cold", (), {"_llm": None, "warm": lambda self, c: []})(), [Session("s", [], ["q"])])
    assert [t.warm_s for t in cold.turns] == [None, None] and runner.summarize(cold, load_settings("cpu-test"))[
        "warm_between_turns"]["n"] == 0


def test_stage_intervals_follow_execution_order():
    timings = {"rewrite": 1.0, "retrieval": 0.5, "retrieval.bm25": 0.1, "retrieval.dense": 0.3, "retrieval.fusion": 0.1,
               "generate": 2.0, "total": 3.5}
    iv = stage_intervals(timings)
    assert iv["rewrite"] == (0.0, 1.0) and iv["retrieval"] == (1.0, 1.5) and iv["generate"] == (1.5, 3.5)
    assert iv["retrieval.bm25"] == (1.0, 1.1) and iv["retrieval.dense"] == pytest.approx((1.1, 1.4))
    assert "total" not in iv


def test_llm_stats_sum_tokens_over_seconds():
    calls = [LLMCall("rewrite", 100, 10, 0.5, 1.0, 1.5), LLMCall("generate", 300, 40, 1.0, 4.0, 5.0),
             LLMCall("generate", 100, 60, 1.0, 6.0, 7.0), LLMCall("rerank", 50, 5, 0.1, 0.5, 0.6)]
    s = llm_stats(calls)
    assert s["generate"]["decode_tokens_per_s"] == 10.0 and s["generate"]["prefill_tokens_per_s"] == 200.0
    assert s["llm-rerank"]["calls"] == 1 and s["all"]["completion_tokens"] == 115


def test_memory_sampler_sees_an_allocation():
    import numpy as np

    with MemorySampler(interval_s=0.002) as sampler:
        before = time.perf_counter()
        time.sleep(0.2)
        mid = time.perf_counter()
        block = np.ones(120 << 20, dtype=np.uint8)  # 120 MiB, touched
        time.sleep(0.3)  # room for the sampler thread on a loaded 2-core machine
        after = time.perf_counter()
        del block
    low, high = sampler.peaks(before, mid)["rss_mb"], sampler.peaks(mid, after)["rss_mb"]
    assert low is not None and high is not None and high - low > 90
    assert sampler.peaks(after + 10, after + 11)["rss_mb"] is not None  # no sample inside: the nearest one


def test_bandwidth_is_measured_and_bounds_decode():
    bw = cpu_bandwidth(threads=1, mib=32, repeats=2)
    assert bw["read_gbps"] > 0.1 and bw["copy_gbps"] > 0.1 and bw["bound_gbps"] == bw["read_gbps"]
    assert decode_bound(10**9, 0.0, 20.0, None) == pytest.approx(20.0)
    # half the bytes on a GPU 10x faster: 0.5/200 + 0.5/20 s per token
    assert decode_bound(10**9, 0.5, 20.0, 200.0) == pytest.approx(1 / (0.5 / 200 + 0.5 / 20))
    assert decode_bound(10**9, 1.0, 20.0, None) is None


def test_conversation_files(tmp_path: Path):
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps([{"speaker": "user", "text": "hi"}, {"speaker": "agent", "text": "hello"},
                                {"speaker": "user", "text": "what is bm25?"}]))
    (s,) = read_sessions(conv)
    assert [t.text for t in s.history] == ["hi", "hello"] and s.user_turns == ["what is bm25?"]
    tasks = tmp_path / "t.jsonl"
    rows = [{"task_id": f"t{i}", "domain": "clapnq", "input": [{"speaker": "user", "text": f"q{i}"}]} for i in range(5)]
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    picked = read_sessions(tasks, n=3)
    assert len(picked) == 3 and picked == task_sessions(rows, 3)  # fixed: the same 3, by sha1 of the id
    sessions, source = default_sessions("my-docs", tasks_file=tasks)
    assert "demo" in source and len(sessions[0].user_turns) >= 3
    sessions, source = default_sessions("mtrag-clapnq", n=2, tasks_file=tasks)
    assert len(sessions) == 2 and "clapnq" in source


@pytest.mark.llm
def test_bench_with_real_smollm_reports_llama_cpp_figures(parts, smollm, tmp_path: Path):
    settings, retriever, _ = parts
    settings = settings.model_copy(update={"pipeline": settings.pipeline.model_copy(update={"rewrite": False}),
                                           "generate": settings.generate.model_copy(update={"max_tokens": 24})})
    smollm.calls.clear()
    report = run_bench(settings, SESSIONS[1:], "one", repeats=1, warmup=False, llm=smollm, retriever=retriever,
                       build_passages=0)
    s = report["summary"]
    gen = s["llm"]["generate"]
    assert gen["calls"] == 1 and gen["prompt_tokens"] > 50 and finite(gen["prefill_tokens_per_s"])
    lc = s["memory"]["llama_cpp"]
    assert lc["model_bytes"] > 50e6 and lc["n_params"] > 100e6 and lc["n_gpu_layers"] == 0
    b = report["bandwidth"]
    assert b["bytes_read_per_token"] > 50e6 and b["cpu_bandwidth"]["read_gbps"] > 0
    if "generate" in b:  # the model may stop after one token, leaving no decode time
        assert 0 < b["generate"]["ratio"] < 2
    assert "Memory-bandwidth bound" in markdown(report)


@pytest.mark.slow
def test_bench_cli_on_the_demo_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The whole command: demo index (MiniLM), SmolLM2, the demo script once, files written."""
    from click.testing import CliRunner

    from local_rag.cli.main import cli
    from tests.conftest import minilm_present
    from tests.llm_fixtures import llama_cpp_or_skip, model_or_skip

    llama_cpp_or_skip()
    model_or_skip("smollm2-135m-instruct")
    if not minilm_present():
        pytest.skip("all-MiniLM-L6-v2 not imported")
    monkeypatch.setenv("LOCAL_RAG_INDEXES_DIR", str(tmp_path / "indexes"))
    monkeypatch.setenv("LOCAL_RAG_MODELS_DIR", str(Path(__file__).resolve().parents[1] / "models"))
    monkeypatch.setenv("LOCAL_RAG_GENERATE__MAX_TOKENS", "48")
    result = CliRunner().invoke(cli, ["bench", "--profile", "cpu-test", "--repeats", "1", "--build-passages", "10",
                                      "--out", str(tmp_path / "out"), "--name", "b", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["headline"]["turn_p50_s"] > 0 and Path(data["files"]["md"]).exists()
    report = json.loads(Path(data["files"]["json"]).read_text())
    assert report["summary"]["turns"] == 4 and report["bandwidth"]["cpu_bandwidth"]["read_gbps"] > 0


def test_silent_cpu_fallbacks_are_each_named():
    from local_rag.device import silent_fallbacks

    assert silent_fallbacks({"gpu_listed": False, "nvml": False, "llama_offload": False}) == []
    healthy = {"gpu_listed": True, "nvml": True, "nvcc": True, "torch_cuda_build": "12.4", "torch_cuda_available": True,
               "faiss_gpus": 1, "onnx_available": ["CUDAExecutionProvider", "CPUExecutionProvider"],
               "onnx_session": ["CUDAExecutionProvider", "CPUExecutionProvider"], "llama_offload": True}
    assert silent_fallbacks(healthy) == []
    broken = healthy | {"nvml": False, "nvcc": False, "llama_offload": False, "torch_cuda_build": None,
                        "faiss_gpus": 0, "onnx_session": ["CPUExecutionProvider"]}
    text = " | ".join(silent_fallbacks(broken))
    for needle in ("nvidia-ml-py", "nvcc was not on PATH", "torch is a CPU build", "faiss sees no GPU",
                   "session dropped it"):
        assert needle in text
    assert len(silent_fallbacks(broken)) == 5


def test_onnx_session_providers_are_read_back(caplog: pytest.LogCaptureFixture):
    from local_rag.device import session_providers

    class Session:  # what onnxruntime-gpu does without cuDNN: CUDA asked for, the CPU kept
        def get_providers(self) -> list[str]:
            return ["CPUExecutionProvider"]

    with caplog.at_level("WARNING"):
        assert session_providers(Session(), ["CUDAExecutionProvider", "CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    assert "dropped CUDAExecutionProvider" in caplog.text


@pytest.mark.skipif(not (Path(__file__).parents[1] / "models" / "all-MiniLM-L6-v2" / "model.safetensors").exists(),
                    reason="all-MiniLM-L6-v2 not imported (run `make test`)")
def test_encoder_bench_times_the_real_encoders_on_the_cpu(tmp_path: Path) -> None:
    """The figures `scripts/gpu_check.sh` records, on the CPU: real MiniLM, a real (untrained-head) cross-encoder."""
    st = pytest.importorskip("sentence_transformers")
    from local_rag.bench.encoders import doc_passages, encoder_bench

    models = Path(__file__).parents[1] / "models"
    st.CrossEncoder(str(models / "all-MiniLM-L6-v2"), num_labels=1, device="cpu").save(str(tmp_path / "ce"))
    passages, questions = doc_passages(5, size=300)
    assert len(passages) == 5 and all(len(p) == 300 for p in passages) and questions
    figures = encoder_bench(models, "all-MiniLM-L6-v2", tmp_path / "ce", ["cpu"], counts=(1, 3), max_lengths=(32,),
                            n_passages=8, n_queries=2)
    row = figures["devices"]["cpu"]
    assert row["embedder"]["passages_per_s_batch64"] > 0 and figures["queries"] == 2
    for stage in ("cross_encoder_32", "bi_encoder_32"):
        assert set(row[stage]) == {"1", "3"} and all(0 < v["p50_s"] <= v["p95_s"] for v in row[stage].values())


def test_reports_name_the_cpu_flags_that_explain_llm_speed() -> None:
    from local_rag.device import SIMD_FLAGS, amx_tiles_granted, cpu_flags, cpu_has_amx
    from local_rag.sysinfo import machine

    flags = cpu_flags()
    assert set(flags) <= set(SIMD_FLAGS) and machine()["cpu_flags"] == flags
    assert cpu_has_amx() == ("amx_bf16" in flags and amx_tiles_granted())
    if Path("/proc/cpuinfo").exists() and "avx2" in Path("/proc/cpuinfo").read_text(encoding="utf-8"):
        assert "avx2" in flags


@pytest.mark.slow
def test_bench_on_a_users_index_without_conversations_says_whose_questions_it_asks(tmp_path: Path):
    """Session 48: `bench --index notes` asked the demo's questions (about local-rag's documents) of the user's index
    without a word (the timings hold, the answers mean little): now a note says so and how to give one's own; and on
    a --sparse-only index it failed "has no dense index" where `ask` and `chat` search with BM25 alone: now it
    measures that, and says so."""
    from tests.llm_fixtures import llama_cpp_or_skip, model_or_skip
    from tests.test_cli import run

    llama_cpp_or_skip()
    model_or_skip("smollm2-135m-instruct")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# Rivers\n\nThe river gauge read high in April.\n")
    assert run("index", "build", "notes", "--index", "notes", "--sparse-only", cwd=tmp_path).returncode == 0
    result = run("bench", "--profile", "cpu-test", "--index", "notes", "--repeats", "1", "-n", "1", "--no-plot",
                 "--no-bandwidth", "--out", str(tmp_path / "out"), cwd=tmp_path,
                 env={"LOCAL_RAG_GENERATE__MAX_TOKENS": "24"})
    assert result.returncode == 0, result.stderr  # before: exit 3, "has no dense index: rebuild it"
    assert "note: index notes has no vectors (built with --sparse-only): measured with BM25 alone" in result.stderr
    assert "note: no --conversations: the demo's questions (about local-rag's own documents) are asked of index " \
           "notes" in result.stderr

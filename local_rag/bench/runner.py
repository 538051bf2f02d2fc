"""``local-rag bench``: a fixed set of conversations through the pipeline, per-stage latency and memory.

One warm-up turn loads every model and is excluded; it is a follow-up turn of its own (`WARMUP`), so that it fills
the LLM's per-stage prompt-prefix cache the way any earlier turn would, without caching a measured turn's whole
prompt. Then every session runs ``repeats`` times (with a single session, the LLM forgets its cached prompts before
each repeat, so a repeat is not answered from its own earlier prompt). Per turn the
pipeline's own ``TurnResult.timings`` give each stage's duration; stages run one after the other, so each stage's
interval is the turn start plus the durations before it (the gaps between stages are list slicing), and the memory
sampler's peak inside that interval is the stage's peak memory. Retrieval is split into its retrievers (``bm25``,
``dense`` with the query embedding, ``bge-sparse``) and fusion from the hybrid retriever's ``last_timings``. The
dense retriever's query-embedding cache is emptied before every turn, so repeats embed their queries again.

Before each measured turn the pipeline warms the next turn's prompt prefixes as a chat does while the user types
(`Pipeline.warm`, with ``pipeline.warm`` on, as in every profile); that time is recorded apart (``warm_s``), not in
the turn, so the turn and its time to first token are what a chat user waits for (``LOCAL_RAG_PIPELINE__WARM=false``
gives the cold turns of the benchmarks before session 40).

Example:
    >>> run = run_sessions(pipeline, sessions, repeats=2)  # doctest: +SKIP
    >>> summarize(run, pipeline.settings)["stages"]["generate"]["p50_s"]  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from local_rag.bench.conversations import Session
from local_rag.bench.memory import MemorySampler, llama_buffers, torch_peak_mb
from local_rag.records import Conversation, LLMCall, Turn
from local_rag.settings import Settings
from local_rag.stats import percentile

log = logging.getLogger("local_rag.bench")

# LLMCall.stage -> the pipeline stage that made it (rewrite modes are all "rewrite")
CALL_STAGE = {"generate": "generate", "rerank": "llm-rerank", "judge": "judge"}
SUB_LABELS = {"bm25": "sparse (bm25)", "bge-sparse": "sparse (bge-m3)", "dense": "dense (incl. query embedding)",
              "fusion": "fusion"}


@dataclass
class TurnRecord:
    session: str
    repeat: int
    turn: int
    wall_s: float
    timings: dict[str, float]
    intervals: dict[str, tuple[float, float]]  # stage -> (start, end) offsets from the turn start, seconds
    first_token_s: float | None
    calls: list[LLMCall]
    kind: str
    memory: dict[str, dict[str, float | None]] = field(default_factory=dict)  # stage -> peaks
    warm_s: float | None = None  # the warm-up before the turn (not in wall_s); None when nothing was warmed

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session, "repeat": self.repeat, "turn": self.turn, "wall_s": round(self.wall_s, 4),
            "kind": self.kind, "first_token_s": None if self.first_token_s is None else round(self.first_token_s, 4),
            "timings_s": {k: round(v, 4) for k, v in self.timings.items()},
            "intervals_s": {k: [round(a, 4), round(b, 4)] for k, (a, b) in self.intervals.items()},
            "memory": self.memory, "warm_s": None if self.warm_s is None else round(self.warm_s, 4),
            "llm_calls": [{k: v for k, v in c.to_json().items() if k not in ("prompt", "response")} for c in self.calls],
        }


@dataclass
class BenchRun:
    turns: list[TurnRecord]
    warmup_s: float | None
    sampler: MemorySampler
    llm: Any = None


def stage_intervals(timings: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Each stage's (start, end) offset in the turn, from the durations in execution order (dict order)."""
    out: dict[str, tuple[float, float]] = {}
    at = 0.0
    for name, seconds in timings.items():
        if "." in name or name == "total":
            continue
        out[name] = (at, at + seconds)
        if name == "retrieval":
            sub = at
            for key, sub_s in timings.items():
                if key.startswith("retrieval."):
                    out[key] = (sub, sub + sub_s)
                    sub += sub_s
        at += seconds
    return out


def clear_query_caches(retriever: Any) -> None:
    """Empty the dense retrievers' query-embedding caches, so every measured turn embeds its queries."""
    for sub in getattr(retriever, "retrievers", {}).values():
        cache = getattr(sub, "_cache", None)
        if isinstance(cache, dict):
            cache.clear()


def _answer(pipeline: Any, conversation: Conversation, sampler: MemorySampler) -> tuple[Any, float, float, float | None]:
    first: list[float] = []

    def on_token(piece: str) -> None:
        if not first:
            first.append(time.perf_counter())

    if getattr(pipeline, "_retriever", None) is not None:
        clear_query_caches(pipeline._retriever)
    sampler.sample()
    started = time.perf_counter()
    result = pipeline.answer(conversation, on_token=on_token)
    ended = time.perf_counter()
    sampler.sample()
    return result, started, ended, (first[0] - started) if first else None


def _warm(pipeline: Any, before: Conversation) -> float | None:
    """`Pipeline.warm` on the conversation before the next user turn, as a chat does between turns; its seconds, or
    None when nothing was warmed (``pipeline.warm`` off, or a pipeline without the method)."""
    warm = getattr(pipeline, "warm", None)
    if warm is None:
        return None
    started = time.perf_counter()
    warmed = warm(before)
    return time.perf_counter() - started if warmed else None


#: the warm-up: a follow-up turn (so both rewrite and generation run) that is in no benchmark set
WARMUP = Conversation([
    Turn("user", "What topics do these documents cover?"),
    Turn("agent", "They cover several topics."),
    Turn("user", "Tell me more about the first one."),
], id="local-rag-bench-warmup")


def run_sessions(pipeline: Any, sessions: list[Session], repeats: int = 2, warmup: bool = True,
                 sampler: MemorySampler | None = None, progress: Any = None) -> BenchRun:
    """Run every session ``repeats`` times after one warm-up turn; per-turn timings, intervals and memory."""
    sampler = sampler or MemorySampler()
    own = not sampler._thread
    if own:
        sampler.start()
    warmup_s = None
    try:
        if warmup and sessions:
            started = time.perf_counter()
            _answer(pipeline, WARMUP, sampler)
            warmup_s = time.perf_counter() - started
        raw: list[tuple[TurnRecord, float]] = []
        llm = getattr(pipeline, "_llm", None)
        for r in range(repeats):
            if len(sessions) == 1 and r > 0 and llm is not None:
                llm.forget_prompts()
            for s in sessions:
                turns = list(s.history)
                for i, text in enumerate(s.user_turns):
                    warm_s = _warm(pipeline, Conversation(list(turns), id=s.id))  # while the user would type
                    turns.append(Turn("user", text))
                    result, started, ended, ttft = _answer(pipeline, Conversation(list(turns), id=s.id), sampler)
                    turns.append(Turn("agent", result.answer.text))
                    rec = TurnRecord(s.id, r, i, ended - started, dict(result.timings), stage_intervals(result.timings),
                                     ttft, list(result.llm_calls), result.answer.kind, warm_s=warm_s)
                    raw.append((rec, started))
                    if progress is not None:
                        progress(rec)
    finally:
        if own:
            sampler.stop()
    for rec, started in raw:
        spans = {**rec.intervals, "turn": (0.0, rec.wall_s)}
        rec.memory = {k: sampler.peaks(started + a, started + b) for k, (a, b) in spans.items()}
    return BenchRun([rec for rec, _ in raw], warmup_s, sampler, getattr(pipeline, "_llm", None))


def _pct(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"n": 0, "p50_s": None, "p95_s": None, "mean_s": None}
    return {"n": len(values), "p50_s": round(percentile(values, 0.5), 4), "p95_s": round(percentile(values, 0.95), 4),
            "mean_s": round(sum(values) / len(values), 4)}


def _peak(turns: list[TurnRecord], stage: str, key: str) -> float | None:
    values = [t.memory.get(stage, {}).get(key) for t in turns]
    known = [v for v in values if v is not None]
    return max(known) if known else None


def llm_stats(calls: list[LLMCall]) -> dict[str, dict[str, Any]]:
    """Per pipeline stage: calls, tokens (prompt, of which taken from the KV prefix cache, completion), prefill
    tokens/s over the tokens really prefilled and decode tokens/s (sums of tokens over sums of seconds), and the
    model's time to first token (prefill) p50."""
    groups: dict[str, list[LLMCall]] = {}
    for c in calls:
        groups.setdefault(CALL_STAGE.get(c.stage, "rewrite"), []).append(c)
    if calls:
        groups["all"] = list(calls)
    out = {}
    for stage, cs in groups.items():
        prompt, completion = sum(c.prompt_tokens for c in cs), sum(c.completion_tokens for c in cs)
        prefill, decode = sum(c.prefill_s for c in cs), sum(c.decode_s for c in cs)
        cached = sum(getattr(c, "cached_tokens", 0) for c in cs)
        out[stage] = {
            "calls": len(cs), "prompt_tokens": prompt, "cached_tokens": cached, "completion_tokens": completion,
            # over the tokens really prefilled: a prefix restored from the KV cache costs (almost) nothing
            "prefill_tokens_per_s": round((prompt - cached) / prefill, 1) if prefill > 0 else None,
            "decode_tokens_per_s": round(completion / decode, 2) if decode > 0 else None,
            "prefill_p50_s": round(percentile([c.prefill_s for c in cs], 0.5), 4),
        }
    return out


def summarize(run: BenchRun, settings: Settings) -> dict[str, Any]:
    """Per-stage latency p50/p95 and peak memory, TTFT, LLM token rates, from a `BenchRun`."""
    turns = run.turns
    names: list[str] = []
    for t in turns:
        names += [k for k in t.intervals if k not in names]
    stages: dict[str, Any] = {}
    for name in [*names, "turn"]:
        values = [t.wall_s if name == "turn" else t.timings[name] for t in turns if name == "turn" or name in t.timings]
        label = SUB_LABELS.get(name.removeprefix("retrieval."), name) if name.startswith("retrieval.") else name
        starts = [t.intervals[name][0] for t in turns if name in t.intervals]
        stages[name] = {
            "label": label, **_pct(values),
            "start_p50_s": round(percentile(starts, 0.5), 4) if starts else 0.0,
            "start_mean_s": round(sum(starts) / len(starts), 4) if starts else 0.0,
            "peak_rss_mb": _peak(turns, name, "rss_mb"), "peak_gpu_mb": _peak(turns, name, "gpu_mb"),
            "peak_torch_mb": _peak(turns, name, "torch_mb"),
        }
    calls = [c for t in turns for c in t.calls]
    ttft_turn = [t.first_token_s for t in turns if t.first_token_s is not None]
    ttft_gen = [t.first_token_s - t.intervals["generate"][0] for t in turns
                if t.first_token_s is not None and "generate" in t.intervals]
    kinds: dict[str, int] = {}
    for t in turns:
        kinds[t.kind] = kinds.get(t.kind, 0) + 1
    return {
        "turns": len(turns), "answer_kinds": kinds,
        "warmup_s": None if run.warmup_s is None else round(run.warmup_s, 2),
        "stages": stages,
        "ttft_from_turn_start": _pct(ttft_turn), "ttft_from_generation_start": _pct(ttft_gen),
        "warm_between_turns": _pct([t.warm_s for t in turns if t.warm_s is not None]),
        "llm": llm_stats(calls),
        "memory": {
            "peak_rss_mb": _peak(turns, "turn", "rss_mb"), "peak_gpu_process_mb": _peak(turns, "turn", "gpu_mb"),
            "torch_max_allocated_mb": torch_peak_mb(), "nvml": run.sampler.gpu,
            "samples": len(run.sampler.samples), "sample_interval_s": run.sampler.interval_s,
            "llama_cpp": llama_buffers(run.llm),
        },
    }

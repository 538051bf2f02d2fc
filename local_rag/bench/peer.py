"""local-rag side by side with a LlamaIndex pipeline on the same models, corpus and MTRAG conversations
(``scripts/bench_peer.py``).

Run it with the benchmark-only environment (LlamaIndex is not a dependency of local-rag):

    bash scripts/peer_env.sh
    flock /tmp/cpu-heavy.lock .venv-peer/bin/python scripts/bench_peer.py --profile cpu-qwen --tasks 10

Both sides index the same corpus (default: the MTRAG govt pool, 447 passages) in the same run: ours with
`build_index` (token windows of the embedder's tokenizer, bm25s + FAISS Flat), the peer with LlamaIndex's
`SentenceSplitter` (same window size/overlap, counted with the same tokenizer), `VectorStoreIndex` (in-memory
vector store) and `BM25Retriever` (bm25s), both persisted to a temporary folder. Same dense model (the profile's
embedder folder), same GGUF through llama.cpp with the same n_ctx, threads, batch, seed, temperature 0 and answer
token limit, same candidates per list, RRF (k=60) fusion on both sides, no reranking on either side (no trained
cross-encoder is available offline on CPU), top-5 passages into a grounded answer prompt. Rows:

- ``peer``: LlamaIndex ``ContextChatEngine`` (retrieval on the last user turn; earlier turns as chat history).
- ``ours``: local-rag ``Pipeline`` with rewriting off: retrieval on the last user turn, history in the prompt.
- ``ours-rewrite``: local-rag's default (the LLM rewrites the turn into a standalone query first).
- ``ours-lean`` (``--rows``): ``ours`` with only the top ``--lean-passages`` (default 3) passages in the prompt; our
  ranking is better than the peer's (nDCG@5), so fewer passages carry as much evidence at a smaller prefill.
- ``peer-condense`` (``--rows``): LlamaIndex ``CondensePlusContextChatEngine`` (the LLM condenses the turn first).

Tasks are interleaved (each task runs on every row before the next, the row order rotating), after one excluded
warm-up turn per row. Per row: retrieval p50/p95, full-turn p50/p95, decode tok/s (llama.cpp's own counters, read
the same way on both sides; under prompt lookup, which llama.cpp counts as prompt batches, our own per-call
records), nDCG@5/R@5 against the official qrels and ROUGE-L against the reference answers. Our rows warm up before
each turn, outside its time, as a chat does between turns (``pipeline.warm``; a ``--variant`` row with
``pipeline.warm=false`` is timed from cold, like the peer). Writes docs/benchmarks/peer.{json,md}.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PEER_MODULES = ("llama_index.core", "llama_index.retrievers.bm25", "llama_index.embeddings.huggingface",
                "llama_index.llms.llama_cpp", "llama_cpp", "rouge_score")
ROWS = ("peer", "ours", "ours-rewrite", "ours-lean", "peer-condense")
EXIT_MISSING = 5  # local-rag's exit code for a missing optional dependency


def require_peer_env() -> None:
    """Stop with a clear message unless this interpreter holds the peer framework (i.e. it is .venv-peer)."""
    missing = []
    for name in PEER_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(name)
    if missing:
        sys.stderr.write(
            f"bench_peer.py: {sys.executable} lacks {', '.join(missing)}. This benchmark runs only in the peer "
            "environment: `bash scripts/peer_env.sh`, then `.venv-peer/bin/python scripts/bench_peer.py ...`\n"
        )
        sys.exit(EXIT_MISSING)


def parse_variants(items: list[str]) -> dict[str, dict[str, Any]]:
    """``["ours-e700:evidence.budget_tokens=700"]`` as ``{row name: settings overrides}``; a name given twice gathers
    its settings. A variant row is ``ours-rewrite`` (the profile's own pipeline) with its settings on top.

    Example:
        >>> parse_variants(["ours-e700:evidence.budget_tokens=700", "ours-e700:generate.max_words=120"])
        {'ours-e700': {'evidence': {'budget_tokens': 700}, 'generate': {'max_words': 120}}}

    Raises:
        ValueError: no ``NAME:``, a name that is not ``ours-...`` or is a fixed row, or a bad ``KEY=VALUE``.
    """
    from local_rag.settings import deep_merge

    variants: dict[str, dict[str, Any]] = {}
    for item in items:
        name, sep, setting = item.partition(":")
        name = name.strip()
        if not sep or not name.startswith("ours-") or name in ROWS:
            raise ValueError(f"--variant {item!r}: expected NAME:KEY=VALUE with a new row NAME that starts with 'ours-'")
        variants[name] = deep_merge(variants.get(name, {}), parse_sets([setting]))
    return variants


def parse_sets(items: list[str]) -> dict[str, Any]:
    """``["llm.model=x", "generate.passages=3"]`` as nested settings overrides (each value read as YAML).

    Example:
        >>> parse_sets(["llm.model=qwen", "generate.passages=3", "evidence.compress=true"])
        {'llm': {'model': 'qwen'}, 'generate': {'passages': 3}, 'evidence': {'compress': True}}

    Raises:
        ValueError: an item without ``=`` or with an empty key.
    """
    import yaml

    from local_rag.settings import dotted

    values: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or any(not part for part in key.strip().split(".")):
            raise ValueError(f"--set {item!r}: expected KEY=VALUE with a dotted settings key")
        values[key.strip()] = yaml.safe_load(value)
    return dotted(values)


# ------------------------------------------------------------------------------------------------ tasks
def pick_tasks(path: Path, domain: str, qrels: dict[str, dict[str, int]], n: int, seed: int,
               conversations: set[str] | None = None) -> list[dict[str, Any]]:
    """``n + 1`` answerable tasks of ``domain`` with qrels and a reference answer, ordered by a seeded hash (all of them
    when fewer); the first is the warm-up. With ``conversations`` (a split), only their tasks."""
    from local_rag.evaluation.generation.official import answerability, targets_of
    from local_rag.mtrag import load_generation_tasks, task_domain
    from local_rag.subset import pick

    pool = [t for t in load_generation_tasks(path) if task_domain(t) == domain and t["task_id"] in qrels
            and answerability(t) in ("ANSWERABLE", "PARTIAL") and targets_of(t)]
    return pick(pool, n + 1, seed=seed, conversations=conversations)


def read_corpus(path: Path) -> list[dict[str, Any]]:
    """The corpus as the peer indexes it: the passages our reader keeps with --skip-bad (the MTRAG cloud pool holds
    three with empty text), so that both sides index the same ones."""
    from local_rag.corpus import read_corpus as read_passages

    return [{"_id": p.id, "text": p.text, "title": p.title, "url": p.url} for p in read_passages(path, skip_bad=True)]


# ------------------------------------------------------------------------------------------------ llama.cpp
def perf_reset(llama: Any) -> None:
    import llama_cpp

    llama_cpp.llama_perf_context_reset(llama._ctx.ctx)


def perf_read(llama: Any) -> dict[str, float]:
    """llama.cpp's own counters since the last reset: prompt tokens evaluated (after prefix-cache reuse) and
    decoded tokens, with their times. Read identically for both sides."""
    import llama_cpp

    data = llama_cpp.llama_perf_context(llama._ctx.ctx)
    return {"prefill_tokens": int(data.n_p_eval), "prefill_s": data.t_p_eval_ms / 1000,
            "decode_tokens": int(data.n_eval), "decode_s": data.t_eval_ms / 1000}


# ------------------------------------------------------------------------------------------------ our side
class Ours:
    """local-rag: an index built in a temporary folder, one `Pipeline` (with its own LLM instance) per row."""

    def __init__(self, settings: Any, corpus: Path, work: Path) -> None:
        from local_rag.embed import load_embedder
        from local_rag.index import build_index
        from local_rag.retrieve.stack import open_retriever

        self.settings = settings.model_copy(update={"indexes_dir": work, "index": "ours"}, deep=True)
        started = time.perf_counter()
        embedder = load_embedder(self.settings.embedder, self.settings.models_dir)
        self.model_load_s = time.perf_counter() - started
        started = time.perf_counter()
        manifest = build_index(self.settings, corpus, embedder=embedder, skip_bad=True, progress=False)
        self.retriever = open_retriever(self.settings, embedder)
        self.build_s = time.perf_counter() - started
        self.index = {"passages": manifest.passages, "chunks": manifest.chunks, "skipped": manifest.skipped,
                      "stats": manifest.stats}
        self.pipelines: dict[str, Any] = {}

    def add_row(self, name: str, rewrite: bool, passages: int | None = None, overrides: dict[str, Any] | None = None) -> None:
        from local_rag.llm import load_llm
        from local_rag.pipeline import Pipeline
        from local_rag.settings import Settings, deep_merge

        settings = self.settings.model_copy(deep=True)
        if overrides:  # a --variant row: its own settings on top of the run's
            settings = Settings.model_validate(deep_merge(settings.model_dump(), overrides))
        settings.pipeline.rewrite = rewrite
        if passages:
            settings.generate.passages = passages
        settings.pipeline.cross_encoder = settings.pipeline.llm_rerank = settings.pipeline.judge = False
        self.pipelines[name] = Pipeline(settings, retriever=self.retriever, llm=load_llm(settings.llm, settings.models_dir))

    @property
    def any_llm(self) -> Any:
        return next(iter(self.pipelines.values())).llm

    def run(self, name: str, task: dict[str, Any]) -> dict[str, Any]:
        from local_rag.mtrag import parse_conversation
        from local_rag.records import Conversation

        pipeline = self.pipelines[name]
        conversation = parse_conversation(task["input"], where=task["task_id"])
        # between turns, as a chat and the server do while the user reads and types (`Pipeline.warm`, on with
        # ``pipeline.warm``): the prompt prefixes of this turn prefilled, outside the turn's time
        warmed = pipeline.warm(Conversation(conversation.turns[:-1], conversation.id))
        perf_reset(pipeline.llm._llama)
        started = time.perf_counter()
        result = pipeline.answer(conversation)
        wall = time.perf_counter() - started
        calls = result.llm_calls
        return {"answer": result.answer.text, "kind": result.answer.kind, "wall_s": wall,
                "retrieval_s": result.timings["retrieval"], "passages": [h.passage_id for h in result.passages],
                "queries": [q.text for q in result.queries], "llm_calls": len(calls),
                "warm_s": round(sum(w.seconds for w in warmed if w.stage != "load"), 3),
                "warm_tokens": sum(w.tokens for w in warmed),
                # with prompt lookup, llama.cpp counts each draft's verification batch as prompt tokens: the figures
                # come from our own per-call records (prompt tokens not taken from the KV cache, tokens generated)
                **({"prefill_tokens": sum(c.prompt_tokens - c.cached_tokens for c in calls),
                    "prefill_s": sum(c.prefill_s for c in calls),
                    "decode_tokens": sum(c.completion_tokens for c in calls), "decode_s": sum(c.decode_s for c in calls),
                    "drafted_tokens": sum(c.drafted_tokens for c in calls),
                    "accepted_tokens": sum(c.accepted_tokens for c in calls),
                    "llama_counters": perf_read(pipeline.llm._llama)}
                   if getattr(pipeline.llm, "prompt_lookup", 0) else perf_read(pipeline.llm._llama))}


# ------------------------------------------------------------------------------------------------ the peer
PEER_SYSTEM = (
    "You are a careful assistant that answers questions about a document collection.\n"
    "Rules:\n"
    "1. Use ONLY facts stated in the context. The conversation history only tells you what the user means; it is "
    "not a source of facts.\n"
    "2. If the context does not contain the answer, reply with exactly this sentence and nothing else: {idk}\n"
    "3. Answer in at most {max_words} words, in plain prose."
)


class Peer:
    """LlamaIndex: the same corpus, chunk windows, embedder folder, GGUF and llama.cpp parameters as ours."""

    def __init__(self, settings: Any, corpus: Path, work: Path, llama_params: dict[str, Any]) -> None:
        import Stemmer
        from llama_index.core import Document, Settings, StorageContext, VectorStoreIndex
        from llama_index.core.node_parser import SentenceSplitter
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
        from llama_index.retrievers.bm25 import BM25Retriever
        from tokenizers import Tokenizer

        from local_rag.modelstore.manifest import resolve_model

        self.settings = settings
        self.llama_params = llama_params
        folder, _ = resolve_model(settings.embedder.model, settings.models_dir)
        started = time.perf_counter()
        embed = HuggingFaceEmbedding(model_name=str(folder), device="cpu" if not _cuda() else "cuda",
                                     embed_batch_size=settings.embedder.batch_size, normalize=True)
        Settings.embed_model = embed
        self.model_load_s = time.perf_counter() - started
        tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
        tokenizer.no_truncation()  # the file truncates at 128 tokens: count whole texts, as our chunker does
        tokenizer.no_padding()

        started = time.perf_counter()
        skip = ["passage_id", "url"]
        documents = [Document(text=p["text"], id_=p["_id"], metadata={"title": p.get("title", ""), "passage_id": p["_id"],
                                                                        "url": p.get("url", "")},
                              excluded_embed_metadata_keys=skip, excluded_llm_metadata_keys=skip)
                     for p in read_corpus(corpus)]
        splitter = SentenceSplitter(chunk_size=settings.chunker.size, chunk_overlap=settings.chunker.overlap,
                                    tokenizer=lambda text: tokenizer.encode(text, add_special_tokens=False).ids)
        nodes = splitter.get_nodes_from_documents(documents)
        storage = StorageContext.from_defaults()
        self.index = VectorStoreIndex(nodes, storage_context=storage, embed_model=embed)
        candidates = settings.retrieval.candidates
        self.bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=candidates,
                                                stemmer=Stemmer.Stemmer("english"), language="english")
        storage.persist(persist_dir=str(work / "peer"))
        self.bm25.persist(str(work / "peer" / "bm25"))
        self.build_s = time.perf_counter() - started
        self.index_info = {"passages": len(documents), "chunks": len(nodes)}
        self.engines: dict[str, Any] = {}
        self.retrievers: dict[str, Any] = {}

    def _llm(self) -> Any:
        from local_rag.llm.native import make_cxx_runtime_global

        make_cxx_runtime_global()  # before llama_index imports llama_cpp (a CUDA build's load crashed without it)
        from llama_index.llms.llama_cpp import LlamaCPP

        from local_rag.modelstore.gguf_check import resolve_gguf

        p = self.llama_params
        holder: dict[str, Any] = {}

        def messages_to_prompt(messages: Any) -> str:
            rows = [{"role": m.role.value, "content": m.content or ""} for m in messages]
            return holder["render"](rows)

        llm = LlamaCPP(
            model_path=str(resolve_gguf(self.settings.llm.model, self.settings.models_dir)),
            temperature=self.settings.llm.temperature, max_new_tokens=self.settings.generate.max_tokens,
            context_window=p["n_ctx"],
            generate_kwargs={"top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.0, "seed": p["seed"]},
            model_kwargs={k: p[k] for k in ("n_threads", "n_threads_batch", "n_batch", "n_gpu_layers", "seed", "flash_attn")},
            messages_to_prompt=messages_to_prompt,
            completion_to_prompt=lambda text: holder["render"]([{"role": "user", "content": text}]),
            verbose=False,
        )
        holder["render"] = chat_renderer(llm._model)
        return llm

    def add_row(self, name: str) -> None:
        from llama_index.core.chat_engine import CondensePlusContextChatEngine, ContextChatEngine
        from llama_index.core.memory import ChatMemoryBuffer
        from llama_index.core.retrievers import QueryFusionRetriever

        llm = self._llm()
        candidates = self.settings.retrieval.candidates
        fusion = QueryFusionRetriever(
            [self.index.as_retriever(similarity_top_k=candidates), self.bm25], llm=llm, mode="reciprocal_rerank",
            similarity_top_k=self.settings.generate.passages, num_queries=1, use_async=False,
        )
        timed = timed_retriever(fusion)
        system = PEER_SYSTEM.format(idk=self.settings.generate.idk_answer, max_words=self.settings.generate.max_words)
        # history capped at our generate.history_tokens, as ours (LlamaIndex counts tiktoken tokens, ours the model's)
        memory = ChatMemoryBuffer.from_defaults(token_limit=self.settings.generate.history_tokens, llm=llm)
        engine_class = CondensePlusContextChatEngine if name == "peer-condense" else ContextChatEngine
        engine = engine_class.from_defaults(timed, llm=llm, memory=memory, system_prompt=system)
        self.engines[name] = (engine, llm)
        self.retrievers[name] = timed

    def run(self, name: str, task: dict[str, Any]) -> dict[str, Any]:
        from llama_index.core.llms import ChatMessage, MessageRole

        engine, llm = self.engines[name]
        turns = task["input"]
        history = [ChatMessage(role=MessageRole.USER if t["speaker"] == "user" else MessageRole.ASSISTANT,
                               content=t["text"]) for t in turns[:-1]]
        engine.reset()
        perf_reset(llm._model)
        calls_before = LLM_CALLS.count
        started = time.perf_counter()
        response = engine.chat(turns[-1]["text"], chat_history=history)
        wall = time.perf_counter() - started
        timed = self.retrievers[name]
        passages: list[str] = []
        for n in response.source_nodes:
            pid = n.node.metadata.get("passage_id", n.node.ref_doc_id)
            if pid not in passages:
                passages.append(pid)
        from local_rag.llm.generate import is_decline

        text = str(response.response).strip()
        kind = "decline" if is_decline(text, self.settings.generate.idk_answer) else "answer"
        return {"answer": text, "kind": kind, "wall_s": wall,
                "retrieval_s": timed.last_s, "passages": passages, "queries": [timed.last_query],
                "chunks": len(response.source_nodes), "llm_calls": LLM_CALLS.count - calls_before,
                **perf_read(llm._model)}


class _CallCounter:
    count = 0


LLM_CALLS = _CallCounter()


def count_llm_calls() -> None:
    """Count the peer's LLM completions through LlamaIndex's instrumentation (a refine loop makes several)."""
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.instrumentation.events.llm import LLMCompletionEndEvent

    class Counter(BaseEventHandler):
        @classmethod
        def class_name(cls) -> str:
            return "BenchPeerCallCounter"

        def handle(self, event: Any, **kwargs: Any) -> None:
            if isinstance(event, LLMCompletionEndEvent):
                LLM_CALLS.count += 1

    get_dispatcher().add_event_handler(Counter())


def timed_retriever(inner: Any) -> Any:
    """A LlamaIndex retriever that delegates to ``inner`` and keeps the time and query of its last call."""
    from llama_index.core.retrievers import BaseRetriever

    class TimedRetriever(BaseRetriever):
        def __init__(self) -> None:
            super().__init__()
            self.last_s = 0.0
            self.last_query = ""

        def _retrieve(self, query_bundle: Any) -> Any:
            started = time.perf_counter()
            nodes = inner.retrieve(query_bundle)
            self.last_s = time.perf_counter() - started
            self.last_query = query_bundle.query_str
            return nodes

    return TimedRetriever()


def chat_renderer(llama: Any) -> Any:
    """The GGUF's own chat template, rendered as local-rag renders it (llama-cpp-python's Jinja formatter)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise SystemExit("bench_peer.py: the GGUF has no chat template")
    model = llama._model
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter = Jinja2ChatFormatter(template=template, eos_token=model.token_get_text(eos) if eos != -1 else "",
                                    bos_token=model.token_get_text(bos) if bos != -1 else "")
    return lambda messages: formatter(messages=messages).prompt


def _cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


# ------------------------------------------------------------------------------------------------ figures
def summarize(rows: list[dict[str, Any]], qrels: dict[str, dict[str, int]]) -> dict[str, Any]:
    from local_rag.evaluation.metrics import mean_metrics, score_run
    from local_rag.stats import percentile

    run = {r["task_id"]: {pid: 1.0 / i for i, pid in enumerate(r["passages"], 1)} for r in rows}
    metrics = mean_metrics(score_run(run, {r["task_id"]: qrels[r["task_id"]] for r in rows}))
    walls, retr = [r["wall_s"] for r in rows], [r["retrieval_s"] * 1000 for r in rows]
    decode_tokens, decode_s = sum(r["decode_tokens"] for r in rows), sum(r["decode_s"] for r in rows)
    prefill_tokens, prefill_s = sum(r["prefill_tokens"] for r in rows), sum(r["prefill_s"] for r in rows)
    return {
        "turns": len(rows),
        "retrieval_p50_ms": round(percentile(retr, 0.5), 1), "retrieval_p95_ms": round(percentile(retr, 0.95), 1),
        "turn_p50_s": round(percentile(walls, 0.5), 2), "turn_p95_s": round(percentile(walls, 0.95), 2),
        "turn_mean_s": round(statistics.fmean(walls), 2),
        "decode_tok_s": round(decode_tokens / decode_s, 2) if decode_s else 0.0,
        "prefill_tok_s": round(prefill_tokens / prefill_s, 1) if prefill_s else 0.0,
        "prefill_tokens_mean": round(prefill_tokens / len(rows), 1),
        "decode_tokens_mean": round(decode_tokens / len(rows), 1),
        "llm_calls_mean": round(statistics.fmean(r["llm_calls"] for r in rows), 2),
        "ndcg_5": round(metrics.get("ndcg_cut_5", 0.0), 4), "recall_5": round(metrics.get("recall_5", 0.0), 4),
        "distinct_passages_mean": round(statistics.fmean(len(r["passages"]) for r in rows), 2),
        "rouge_l": round(statistics.fmean(r["rouge_l"] for r in rows), 4),
        "idk_share": round(sum(r["kind"] in ("idk", "decline") for r in rows) / len(rows), 3),
        **({"warm_p50_s": round(percentile([r["warm_s"] for r in rows], 0.5), 2),
            "warm_tokens_mean": round(statistics.fmean(r["warm_tokens"] for r in rows), 1)}
           if any(r.get("warm_tokens") for r in rows) else {}),
    }


def ratios(ours: dict[str, Any], peer: dict[str, Any]) -> dict[str, float | None]:
    """ours ÷ peer for each time and rate (a time ratio below 1, or a rate ratio above 1, favours ours)."""
    keys = ("retrieval_p50_ms", "retrieval_p95_ms", "turn_p50_s", "turn_p95_s", "turn_mean_s", "decode_tok_s")
    return {k: round(ours[k] / peer[k], 3) if peer.get(k) else None for k in keys}


def markdown(report: dict[str, Any]) -> str:
    s = report["summary"]
    cols = ["retrieval_p50_ms", "retrieval_p95_ms", "turn_p50_s", "turn_p95_s", "decode_tok_s", "prefill_tokens_mean",
            "decode_tokens_mean", "llm_calls_mean", "distinct_passages_mean", "ndcg_5", "recall_5", "rouge_l", "idk_share",
            "warm_p50_s"]
    lines = [f"<!-- generated by {report['command']} -->",
             f"### local-rag vs {report['peer']['framework']} ({report['llm']}, {report['embedder']}, "
             f"{report['corpus']['passages']} passages, {s[next(iter(s))]['turns']} MTRAG {report['domain']} turns)", "",
             *([] if report.get("complete", True) else
               [f"**Incomplete run: {report.get('tasks_done')} of {report.get('tasks_asked')} tasks done.**", ""]),
             f"Machine: {report['machine']['cpu']}, {report['machine']['cores']} cores, GPUs: {report['machine']['gpus'] or 'none'}; "
             f"load average (1/5/15 min) at the start {report['machine']['load_average']['start']}, at the end "
             f"{report['machine']['load_average']['now']}.", "",
             f"Settings: profile `{report['profile']}`" + "".join(f", `--set {item}`" for item in report.get("sets", [])) + ".", "",
             "| row | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    lines += [f"| {row} | " + " | ".join(str(v.get(c, "")) for c in cols) + " |" for row, v in s.items()]
    lines += ["", "| index build (s) | " + " | ".join(f"{k}: {v}" for k, v in report["build_s"].items()) + " |", "",
              "Ratios, ours ÷ peer (time below 1 = ours faster; decode tok/s above 1 = ours faster):", ""]
    lines += [f"- {name}: " + ", ".join(f"{k} {v}" for k, v in r.items()) for name, r in report["ratios"].items()]
    return "\n".join(lines) + "\n"


def write_report(args: argparse.Namespace, rows_wanted: list[str], settings: Any, params: dict[str, Any], ours: Ours,
                 peer: Peer, qrels: dict[str, dict[str, int]], results: dict[str, list[dict[str, Any]]],
                 tasks: list[dict[str, Any]], warmup: str) -> str:
    """Write docs/benchmarks/peer.{json,md} from the turns done so far (after every task: a cut-off run leaves its
    figures, marked incomplete). Returns the markdown."""
    import llama_cpp
    import llama_index.core

    from local_rag import __version__
    from local_rag.sysinfo import machine, peak_rss_mb

    done = min(len(rs) for rs in results.values())
    results = {row: rs[:done] for row, rs in results.items()}
    summary = {row: summarize(rs, qrels) for row, rs in results.items()}
    peer_main = "peer" if "peer" in summary else next(r for r in summary if r.startswith("peer"))
    report_ratios = {f"{row} ÷ {peer_main}": ratios(summary[row], summary[peer_main]) for row in summary if row.startswith("ours")}
    if "ours-rewrite" in summary and "peer-condense" in summary:
        report_ratios["ours-rewrite ÷ peer-condense"] = ratios(summary["ours-rewrite"], summary["peer-condense"])
    command = (f".venv-peer/bin/python scripts/bench_peer.py --profile {args.profile} --domain {args.domain} "
               f"--tasks {args.tasks} --seed {args.seed} --rows {','.join(rows_wanted)}"
               + (f" --split {args.split}" if getattr(args, "split", None) else "")
               + (f" --lean-passages {args.lean_passages}" if "ours-lean" in rows_wanted else "")
               + "".join(f" --set {item}" for item in getattr(args, "sets", []))
               + "".join(f" --variant {item}" for item in getattr(args, "variant_items", []))
               + (f" --out {args.out}" if args.out.name != "benchmarks" else ""))
    report = {
        "command": command, "complete": done == len(tasks), "tasks_done": done, "tasks_asked": len(tasks),
        "machine": machine() | {"load_average": {"start": getattr(args, "load_start", None),
                                                 "now": [round(x, 2) for x in os.getloadavg()]}},
        "profile": args.profile, "sets": getattr(args, "sets", []), "overrides": getattr(args, "overrides", {}),
        "variants": getattr(args, "variants", {}),
        "domain": args.domain,
        "llm": settings.llm.model, "embedder": settings.embedder.model, "llama_cpp_params": params,
        "versions": {"local-rag": __version__, "llama-index-core": llama_index.core.__version__,
                     "llama-cpp-python": llama_cpp.__version__},
        "corpus": {"path": str(args.corpus), "passages": ours.index["passages"],
                   "skipped": ours.index["skipped"], "ours_chunks": ours.index["chunks"], "peer_chunks": peer.index_info["chunks"]},
        "build_s": {"ours": round(ours.build_s, 1), "peer": round(peer.build_s, 1)},
        "model_load_s": {"ours_embedder": round(ours.model_load_s, 1), "peer_embedder": round(peer.model_load_s, 1)},
        "peer": {"framework": "LlamaIndex", "system_prompt": PEER_SYSTEM, "differences": DIFFERENCES},
        "summary": summary, "ratios": report_ratios, "peak_rss_mb": round(peak_rss_mb(), 1),
        "tasks": [t["task_id"] for t in tasks[:done]], "warmup_task": warmup, "turns": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "peer.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    text = markdown(report)
    (args.out / "peer.md").write_text(text)
    return text


# ------------------------------------------------------------------------------------------------ main
def bench_peer(args: argparse.Namespace, rows_wanted: list[str], models_dir: Path) -> str:
    """Run the rows of ``rows_wanted`` (see the module's text) with the options of scripts/bench_peer.py; writes
    ``<args.out>/peer.{json,md}`` after each task and returns the Markdown report."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # this benchmark never downloads; a missing model must fail, not fetch
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    require_peer_env()
    args.load_start = [round(x, 2) for x in os.getloadavg()]
    from local_rag.evaluation.generation.algorithmic import rouge_l
    from local_rag.evaluation.generation.official import targets_of
    from local_rag.evaluation.splits import load_split
    from local_rag.mtrag import default_mtrag_dir, load_qrels
    from local_rag.settings import deep_merge, load_settings

    mtrag = default_mtrag_dir()
    settings = load_settings(args.profile, overrides=deep_merge(getattr(args, "overrides", {}), {"models_dir": str(models_dir)}))
    corpus = args.corpus = args.corpus or mtrag / "corpora" / "pool" / f"{args.domain}.jsonl"
    qrels = load_qrels(mtrag / "retrieval_tasks" / args.domain / "qrels" / "dev.tsv")
    split = getattr(args, "split", None)
    tasks = pick_tasks(mtrag / "generation_tasks" / "mtrag_tasks.jsonl", args.domain, qrels, args.tasks, args.seed,
                       conversations=load_split(mtrag, split) if split else None)
    warmup, tasks = tasks[0], tasks[1:]
    work = Path(tempfile.mkdtemp(prefix="bench-peer-"))
    try:
        print(f"building both indexes over {corpus} ...", flush=True)
        ours = Ours(settings, corpus, work)
        variants = getattr(args, "variants", {})
        for row in rows_wanted:
            if row.startswith("ours"):
                ours.add_row(row, rewrite=row == "ours-rewrite" or row in variants,
                              passages=args.lean_passages if row == "ours-lean" else None, overrides=variants.get(row))
        if not ours.pipelines:
            ours.add_row("_params", rewrite=False)  # only to read the llama.cpp parameters our side picks
        llm = ours.any_llm
        params = {"n_ctx": llm.n_ctx, "n_threads": llm.n_threads, "n_threads_batch": llm.n_threads_batch,
                  "n_batch": min(settings.llm.n_batch, llm.n_ctx), "n_gpu_layers": llm.n_gpu_layers, "seed": settings.llm.seed,
                  "flash_attn": settings.llm.flash_attn}
        ours.pipelines.pop("_params", None)
        count_llm_calls()
        peer = Peer(settings, corpus, work, params)
        for row in rows_wanted:
            if row.startswith("peer"):
                peer.add_row(row)
        print(f"built: ours {ours.build_s:.1f}s, peer {peer.build_s:.1f}s; llama.cpp {params}", flush=True)

        def run(row: str, task: dict[str, Any]) -> dict[str, Any]:
            return (peer if row.startswith("peer") else ours).run(row, task)

        for row in rows_wanted:
            run(row, warmup)
        results: dict[str, list[dict[str, Any]]] = {row: [] for row in rows_wanted}
        for i, task in enumerate(tasks):
            order = rows_wanted[i % len(rows_wanted):] + rows_wanted[: i % len(rows_wanted)]
            for row in order:
                r = run(row, task)
                r["task_id"] = task["task_id"]
                r["rouge_l"] = max(rouge_l(r["answer"], t) for t in targets_of(task))
                results[row].append(r)
                print(f"[{i + 1}/{len(tasks)}] {row:13} {r['wall_s']:6.1f}s retrieval {r['retrieval_s'] * 1000:6.1f}ms "
                      f"decode {r['decode_tokens']} tok rougeL {r['rouge_l']:.3f}", flush=True)
            write_report(args, rows_wanted, settings, params, ours, peer, qrels, results, tasks, warmup["task_id"])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    return write_report(args, rows_wanted, settings, params, ours, peer, qrels, results, tasks, warmup["task_id"])


DIFFERENCES = [
    "Units: ours retrieves passages (a passage scores as its best chunk), the peer retrieves chunks (nodes); the peer's "
    "top-5 may hold several chunks of one passage (distinct_passages_mean), scored once per passage.",
    "BM25: ours bm25s k1=0.9 b=0.4 (local-rag's default) on title+chunk; the peer bm25s with BM25Retriever's defaults "
    "(k1=1.5 b=0.75) on the node text with its metadata (title).",
    "Fusion: both RRF k=60 over the same 100 candidates per list; ours weights BM25 0.5 (the profile's setting), "
    "LlamaIndex's RRF has no weights.",
    "Dense: ours FAISS Flat inner product on normalised MiniLM vectors, the peer LlamaIndex's in-memory vector store "
    "(cosine); same model folder, same batch size.",
    "Chunks: both 256-token windows with 64 overlap counted with the MiniLM tokenizer; ours cuts exact token windows, "
    "LlamaIndex's SentenceSplitter prefers sentence boundaries and counts the title metadata in the window.",
    "Prompt: ours answer.yaml (rules, one worked example, numbered passages cut to 300 tokens, history cut to 600 "
    "tokens, citations checked); the peer its ContextChatEngine layout (context in the system message, history as "
    "chat messages) with the same grounding rules, IDK sentence and word limit, minus the citation and clarifying "
    "rules that it does not post-process. Same GGUF chat template, max tokens, temperature 0, seed, threads, batch.",
    "Rerank: none on either side (no trained cross-encoder is available offline on this CPU machine).",
    "Warm-up: our rows prefill the turn's prompt prefixes (each stage's instructions and the conversation so far) "
    "before the timed turn, as local-rag's chat and server do while the user reads and types (pipeline.warm); the "
    "peer has no such step. A row with pipeline.warm=false is timed from cold.",
]

"""The conversational pipeline: rewrite -> multi-query hybrid retrieval -> cross-encoder -> LLM listwise rerank
and relevance filter -> decision (answer, decline, clarify, chitchat) -> grounded generation. Which stages run, and with which models, comes from the settings
(``pipeline``, ``reranker``, ``llm``...); each stage is loaded once, lazily.

Example:
    >>> pipeline = Pipeline(load_settings("cpu-test", overrides={"index": "demo"}))  # doctest: +SKIP
    >>> turn = pipeline.answer(Conversation([Turn("user", "How are lists fused?")]))  # doctest: +SKIP
    >>> turn.answer.text, turn.timings  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from local_rag.llm.generate import Answer, Generator
from local_rag.records import Conversation, Decision, Hit, LLMCall, Query
from local_rag.retrieve.queries import conversation_queries
from local_rag.settings import Settings

log = logging.getLogger("local_rag.pipeline")


@dataclass
class TurnResult:
    """Everything one turn produced: the answer, the queries, the passages at each step, timings, LLM calls."""

    answer: Answer
    queries: list[Query]
    retrieved: list[Hit]
    passages: list[Hit]
    timings: dict[str, float] = field(default_factory=dict)
    llm_calls: list[LLMCall] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)  # agentic: think / search / information / answer; pipeline: skip, compress
    decision: Decision | None = None  # the decision stage's choice (local_rag.decide)
    support: dict[str, Any] | None = None  # the support check of the answer's sentences (local_rag.decide.support)

    def to_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer.text,
            "kind": self.answer.kind,
            "citations": [c.__dict__ for c in self.answer.citations],
            "invalid_citations": self.answer.invalid_citations,
            "queries": [{"mode": q.mode, "text": q.text} for q in self.queries],
            "passages": [h.to_json() for h in self.passages],
            "retrieved": [{"passage_id": h.passage_id, "score": h.score, "scores": h.scores} for h in self.retrieved],
            "timings_s": self.timings,
            "llm_calls": [{k: v for k, v in c.to_json().items() if k not in ("prompt", "response")} for c in self.llm_calls],
            **({"trace": self.trace} if self.trace else {}),
            **({"decision": self.decision.to_json()} if self.decision else {}),
            **({"support": self.support} if self.support else {}),
        }


class Pipeline:
    """One object composed of the stage interfaces; stages load on first use."""

    def __init__(self, settings: Settings, retriever: Any = None, llm: Any = None, reranker: Any = None,
                 rewrites: Callable[[Conversation], dict[str, list[str]]] | None = None) -> None:
        """``rewrites``: ``conversation -> {mode: [texts]}`` in place of calling the rewriter, e.g. a cached
        `local_rag.llm.pipeline.LLMQueries` (evaluation runs share rewrites through it)."""
        self.settings = settings
        self._rewrites = rewrites
        self._retriever = retriever
        self._llm = llm
        self._reranker = reranker
        self._decider: Any = None
        self._support: Any = False  # False: not loaded yet; None: no trained model
        self._calls_before = 0
        self._stages: dict[str, Any] = {}
        self.skipped: list[dict[str, Any]] = []  # this turn's trace entries: stages skipped, evidence compressed

    # ------------------------------------------------------------ lazily loaded stages
    @property
    def retriever(self) -> Any:
        if self._retriever is None:
            from local_rag.retrieve.stack import open_retriever

            self._retriever = open_retriever(self.settings)
        return self._retriever

    @property
    def llm(self) -> Any:
        if self._llm is None:
            from local_rag.device import nvml_gpus
            from local_rag.llm import load_llm

            if nvml_gpus():
                self._load_encoders_first()
            self._llm = load_llm(self.settings.llm, self.settings.models_dir)
        return self._llm

    def _load_encoders_first(self) -> None:
        """On a GPU the encoders and the FAISS index take their memory before the LLM, so the LLM's layer count is
        chosen from what is really left (``local-rag plan`` plans in the same order)."""
        from local_rag.errors import LocalRagError

        try:
            _ = self.retriever
            if self.settings.pipeline.cross_encoder:
                _ = self.reranker
        except LocalRagError:
            pass  # no index or encoder here: the stage that needs it reports that when it runs

    @property
    def reranker(self) -> Any:
        """The cross-encoder; ``None`` when its model is missing and ``reranker.fallback`` is ``skip`` (warned once)."""
        if self._reranker is None:
            from local_rag.errors import ModelError
            from local_rag.rerank import load_reranker

            try:
                self._reranker = load_reranker(self.settings.reranker, self.settings.models_dir)
            except ModelError as exc:
                if self.settings.reranker.fallback != "skip":
                    raise
                log.warning("cross-encoder %s unavailable (%s); continuing without it", self.settings.reranker.model, exc)
                self._reranker = False
        return self._reranker or None

    def _embedder(self) -> Any:
        from local_rag.embed import load_embedder

        return load_embedder(self.settings.embedder, self.settings.models_dir)

    @property
    def decider(self) -> Any:
        if self._decider is None:
            from local_rag.decide import load_decider

            self._decider = load_decider(self.settings, retriever=self._retriever)
        return self._decider

    def _stage(self, name: str) -> Any:
        if name not in self._stages:
            s = self.settings
            if name == "generate":
                self._stages[name] = Generator(self.llm, s.generate)
            elif name == "llm-rerank":
                from local_rag.llm.rerank import ListwiseReranker

                self._stages[name] = ListwiseReranker(self.llm, s.llm_rerank, seed=s.llm.seed)
            elif name == "judge":
                from local_rag.llm.judge import RelevanceJudge

                self._stages[name] = RelevanceJudge(self.llm, s.judge)
            elif name == "compress":
                from local_rag.evidence.compress import Compressor

                self._stages[name] = Compressor(s.evidence, self.retriever, lambda: self.reranker, self._embedder)
        return self._stages[name]

    # ------------------------------------------------------------ one turn
    @property
    def depth(self) -> int:
        """How many hits a turn retrieves: enough for every stage after retrieval that may be on."""
        cfg = self.settings
        return max(cfg.retrieval.top_k, cfg.reranker.candidates, cfg.llm_rerank.candidates, cfg.judge.candidates)

    def queries(self, conversation: Conversation) -> list[Query]:
        """The query variants: the settings' plain modes plus the LLM rewrite modes when rewriting is on."""
        cfg = self.settings
        given: dict[str, list[str]] = {}
        modes = list(cfg.retrieval.query_modes)
        if cfg.pipeline.rewrite:
            from local_rag.llm.standalone import skip_rewrite

            llm_modes = list(cfg.rewrite.modes)
            if cfg.rewrite.skip_standalone and skip_rewrite(conversation, llm_modes):  # the turn is its own rewrite
                given["rewrite"] = [conversation.last_user_turn.strip()]
                llm_modes.remove("rewrite")
                self.skipped.append({"type": "skip", "stage": "rewrite", "text": "rewrite: the turn reads as standalone"})
            if llm_modes and self._rewrites is not None:
                given = {**self._rewrites(conversation), **given}
            elif llm_modes:
                from local_rag.llm.rewrite import rewrite

                for q in rewrite(conversation, self.llm, llm_modes, cfg.rewrite):
                    given.setdefault(q.mode, []).append(q.text)
            modes += [m for m in given if m not in modes]
        return conversation_queries(conversation, modes, given)

    def answer(self, conversation: Conversation, on_token: Callable[[str], None] | None = None,
               on_status: Callable[[str], None] | None = None) -> TurnResult:
        """Answer the last user turn of ``conversation``. ``on_status`` gets short progress lines before the answer
        streams ("Searching…", "3 sources: …"): what a chat user sees first."""
        from local_rag.llm.pipeline import question_of

        cfg = self.settings
        timings: dict[str, float] = {}
        calls_before = self._calls_before = len(self._llm.calls) if self._llm is not None else 0
        self.skipped = []
        status = on_status or (lambda text: None)

        started = time.perf_counter()
        conversation, decision = self.decider.before_retrieval(conversation)
        if decision is not None:  # small talk: no retrieval
            return self.decided(decision, conversation, [], [], [], {"decide": time.perf_counter() - started})

        status("Searching…")
        started = time.perf_counter()
        queries = self.queries(conversation)
        timings["rewrite"] = time.perf_counter() - started if cfg.pipeline.rewrite else 0.0

        started = time.perf_counter()
        retrieved = self.retriever.search(queries, top_k=self.depth)
        timings["retrieval"] = time.perf_counter() - started
        timings.update({f"retrieval.{k}": v for k, v in getattr(self.retriever, "last_timings", {}).items()})

        hits = [h for h in retrieved if dense_score(h) is None or dense_score(h) >= cfg.pipeline.min_dense_score]  # type: ignore[operator]
        question = question_of(queries)
        for name, enabled in (("cross-encoder", cfg.pipeline.cross_encoder), ("llm-rerank", cfg.pipeline.llm_rerank), ("judge", cfg.pipeline.judge)):
            if not enabled or not hits:
                continue
            started = time.perf_counter()
            if name == "cross-encoder":
                if self.reranker is None:
                    continue
                hits = self.reranker.rerank(question, hits)
            elif name == "llm-rerank":
                hits = self._stage(name).rerank(question, hits)
            else:
                hits = self._stage(name).filter(question, hits)
            timings[name] = time.perf_counter() - started

        passages = hits[: cfg.generate.passages]
        status(sources_line(passages))
        started = time.perf_counter()
        decision = self.decider.decide(conversation, hits)
        timings["decide"] = time.perf_counter() - started
        if decision.kind != "answer":
            return self.decided(decision, conversation, queries, retrieved, hits, timings)
        evidence = passages
        if cfg.evidence.compress and passages:
            started = time.perf_counter()
            selection = self._stage("compress").select(question, passages, self.llm.count_tokens)
            evidence = selection.hits
            timings["compress"] = time.perf_counter() - started
            self.skipped.append(selection.note())
        started = time.perf_counter()
        if evidence:
            answer = self._stage("generate").answer(conversation, evidence, on_token=on_token)
        else:
            answer = Generator.idk(cfg.generate)
            self.skipped.append({"type": "skip", "stage": "generate", "text": "generate: no passage left, the fixed answer"})
        timings["generate"] = time.perf_counter() - started
        support = None
        if cfg.support.mode != "off" and answer.kind == "answer" and evidence:
            started = time.perf_counter()
            answer, support = self.checked(answer, evidence)  # the passages as the generator saw them
            timings["support"] = time.perf_counter() - started
        timings["total"] = sum(v for k, v in timings.items() if "." not in k)
        calls = self._llm.calls[calls_before:] if self._llm is not None else []
        return TurnResult(answer, queries, retrieved, passages, timings, list(calls), list(self.skipped), decision=decision,
                          support=support)


    def checked(self, answer: Answer, passages: list[Hit]) -> tuple[Answer, dict[str, Any] | None]:
        """The answer after the support check (`local_rag.decide.support`): citations moved to the passage that
        supports a sentence, unsupported sentences flagged or dropped; the answer itself when no model is trained."""
        from local_rag.llm.generate import Citation, check_citations

        if self._support is False:
            from local_rag.decide.support import load_support_checker

            self._support = load_support_checker(self.settings, self._retriever)
        if self._support is None:
            return answer, None
        text, report = self._support.check(answer.text, passages)
        if not text.strip():  # nothing the passages support: decline
            return Generator.idk(self.settings.generate), report.to_json()
        text, numbers, _ = check_citations(text, len(passages))
        citations = [Citation(n, passages[n - 1].passage_id, passages[n - 1].title, passages[n - 1].url) for n in numbers]
        return Answer(text, "answer", citations, answer.invalid_citations, passages, answer.raw, answer.call), report.to_json()

    def decided(self, decision: Decision, conversation: Conversation, queries: list[Query], retrieved: list[Hit],
                hits: list[Hit], timings: dict[str, float]) -> TurnResult:
        """The turn when the decision stage answers it without the generator (decline, clarify, chitchat)."""
        from local_rag.decide import reply_text

        passages = hits[: self.settings.generate.passages]
        answer = Answer(reply_text(decision, conversation, hits, self.settings), decision.kind, passages=passages)
        timings["total"] = sum(v for k, v in timings.items() if "." not in k)
        calls = self._llm.calls[self._calls_before :] if self._llm is not None else []
        skip = {"type": "skip", "stage": "generate", "text": f"generate: decided {decision.kind} without the LLM"}
        return TurnResult(answer, queries, retrieved, passages, timings, list(calls), [*self.skipped, skip], decision=decision)


def sources_line(passages: list[Hit]) -> str:
    """The status line shown before an answer streams, e.g. ``3 sources: Bees; Honey; Wax``."""
    if not passages:
        return "No source found"
    titles = list(dict.fromkeys(h.title for h in passages if h.title))[:3]
    n = len(passages)
    return f"{n} source{'s' if n != 1 else ''}" + (f": {'; '.join(titles)}" if titles else "")


def dense_score(hit: Hit) -> float | None:
    """The best dense cosine a hit got from any query (None when no dense list found it)."""
    values = [v for k, v in hit.scores.items() if k.startswith("dense:")]
    if hit.source == "dense" and not values:
        values = [hit.score]
    return max(values) if values else None

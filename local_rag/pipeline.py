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
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal  # Any: the support report's JSON (TurnResult.support)

from local_rag.llm.generate import Generator, check_citations
from local_rag.records import Answer, Citation, Conversation, Decision, Hit, LLMCall, Query, TraceStep, Turn, TurnResult
from local_rag.retrieve.queries import conversation_queries
from local_rag.retrieve.scope import Scope
from local_rag.settings import GenerateConfig, Settings

if TYPE_CHECKING:
    from local_rag.decide.draft import DraftGate
    from local_rag.decide.model import Decider
    from local_rag.decide.support import SupportChecker
    from local_rag.embed.base import Embedder
    from local_rag.evidence.compress import Compressor
    from local_rag.llm.base import LLM, Message
    from local_rag.llm.judge import RelevanceJudge
    from local_rag.llm.rerank import ListwiseReranker
    from local_rag.llm.warm import Warmed, Warmer
    from local_rag.rerank.base import Reranker
    from local_rag.retrieve.base import Searcher

log = logging.getLogger("local_rag.pipeline")


class Pipeline:
    """One object composed of the stage interfaces; stages load on first use."""

    def __init__(self, settings: Settings, retriever: Searcher | None = None, llm: LLM | None = None,
                 reranker: Reranker | None = None,
                 rewrites: Callable[[Conversation], dict[str, list[str]]] | None = None) -> None:
        """``rewrites``: ``conversation -> {mode: [texts]}`` in place of calling the rewriter, e.g. a cached
        `local_rag.llm.pipeline.LLMQueries` (evaluation runs share rewrites through it)."""
        self.settings = settings
        self._rewrites = rewrites
        self._retriever = retriever
        self._llm = llm
        self._reranker: Reranker | Literal[False] | None = reranker  # False: its model is missing (fallback: skip)
        self._decider: Decider | None = None
        self._support: SupportChecker | Literal[False] | None = False  # False: not loaded yet; None: no trained model
        self._gate: DraftGate | Literal[False] | None = False  # the draft gate; False: not loaded yet; None: none
        self._calls_before = 0
        self._warmer: Warmer | None = None
        self._warmed: list[Warmed] = []  # what `warm` prefilled since the last turn: the next turn's trace shows it
        self._loaded = False  # `load_stages` done
        self._stages_ready = threading.Event()  # clear while a warm-up's thread loads the stages (`wait_loaded`)
        self._stages_ready.set()
        self._index_stamp: tuple[tuple[int, int], ...] | None = None  # the indexes this pipeline opened itself, as then
        self._reopening = threading.Lock()  # a server's search and its turn may both look for a new index at once
        self.skipped: list[TraceStep] = []  # this turn's trace entries: stages skipped, evidence compressed

    # ------------------------------------------------------------ lazily loaded stages
    @property
    def retriever(self) -> Searcher:
        if self._retriever is None:
            from local_rag.retrieve.stack import open_searcher

            self._index_stamp = self._stamp()
            self._retriever = open_searcher(self.settings)
        return self._retriever

    def refresh_index(self) -> bool:
        """Reopen the index when a writer swapped a new one in since this pipeline opened it (`index sync --watch`
        beside `serve` or `chat`; before, they answered from the documents as they were at start until restarted),
        with the embedder already loaded; the stages built on the old one (decision stage, support check, evidence
        compressor) are built again when next used. One stat a turn; an index the caller gave is left alone."""
        if self._index_stamp is None or self._retriever is None:
            return False
        with self._reopening:
            return self._reopen()

    def _stamp(self) -> tuple[tuple[int, int], ...] | None:
        """What changes when a writer swaps a new index in (`local_rag.index.folder.index_stamp`), of the index and of
        those searched with it (``retrieval.also``); None while one is mid-swap."""
        from local_rag.index.folder import index_stamp

        names = [self.settings.index, *self.settings.retrieval.also]
        stamps = [index_stamp(self.settings.indexes_dir / name) for name in dict.fromkeys(names)]
        return None if any(s is None for s in stamps) else tuple(s for s in stamps if s is not None)

    def _reopen(self) -> bool:
        stamp = self._stamp()
        if stamp is None or stamp == self._index_stamp:
            return False  # unchanged, or mid-swap: the next turn looks again
        from local_rag.errors import IndexError_
        from local_rag.index.manifest import IndexManifest
        from local_rag.retrieve.stack import open_searcher

        embedder = getattr(self._retriever, "embedder", None)
        try:
            dense = IndexManifest.load(self.settings.index_dir).dense
        except IndexError_:
            dense = None  # opening it below says what is wrong
        if embedder is not None and dense is not None and dense.get("model_checksum") != embedder.checksum:
            embedder = None  # built again with other files of the model (re-imported, adapted): load them, as a restart would
        self._swap(open_searcher(self.settings, embedder), stamp)
        log.warning("note: index %s changed on disk: reopened", self.settings.index)
        return True

    def _swap(self, retriever: Searcher, stamp: tuple[tuple[int, int], ...] | None) -> None:
        """Search with ``retriever`` from now on (opened when the indexes were at ``stamp``); the stages built on the
        one before (decision stage, support check, evidence compressor) are built again when next used."""
        self._retriever = retriever
        self._index_stamp = stamp
        self._decider, self._support, self._gate = None, False, False
        self.__dict__.pop("compressor", None)

    def search_also(self, names: Sequence[str]) -> None:
        """Search the indexes ``names`` with the settings' index from the next turn on (chat's ``/also``; none: the
        index alone), opened now with the embedder already loaded: a missing or badly named index is said at once,
        and the pipeline is left as it was.

        Raises:
            BadInputError: a name that is not an index name. IndexError_: no such index.
        """
        from pydantic import ValidationError

        from local_rag.errors import BadInputError
        from local_rag.retrieve.stack import open_searcher

        try:
            wanted = type(self.settings.retrieval).model_validate(
                {**self.settings.retrieval.model_dump(), "also": [n for n in names if n != self.settings.index]})
        except ValidationError as exc:
            raise BadInputError(str(exc.errors()[0].get("msg", exc)).removeprefix("Value error, ")) from exc
        settings = self.settings.model_copy(update={"retrieval": wanted})
        retriever = open_searcher(settings, getattr(self.retriever, "embedder", None))
        with self._reopening:
            self.settings.retrieval.also = wanted.also
            self._swap(retriever, self._stamp())

    @property
    def llm(self) -> LLM:
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
        from local_rag.rerank.likelihood import shares_llm

        try:
            _ = self.retriever
            if self.settings.pipeline.cross_encoder and not shares_llm(self.settings.reranker, self.settings.llm):
                _ = self.reranker  # (a reranker that scores with the LLM itself takes no memory of its own)
        except LocalRagError:
            pass  # no index or encoder here: the stage that needs it reports that when it runs

    @property
    def reranker(self) -> Reranker | None:
        """The cross-encoder; ``None`` when its model is missing and ``reranker.fallback`` is ``skip`` (warned once).
        A `likelihood` reranker whose model is the LLM's scores with the loaded LLM (`rerank.likelihood.shares_llm`)."""
        if self._reranker is None:
            from local_rag.errors import ModelError
            from local_rag.rerank import load_reranker
            from local_rag.rerank.likelihood import LikelihoodReranker, shares_llm

            try:
                if shares_llm(self.settings.reranker, self.settings.llm):
                    self._reranker = LikelihoodReranker(self.settings.reranker, self.settings.models_dir, llm=self.llm)
                else:
                    self._reranker = load_reranker(self.settings.reranker, self.settings.models_dir)
            except ModelError as exc:
                if self.settings.reranker.fallback != "skip":
                    raise
                log.warning("cross-encoder %s unavailable (%s); continuing without it", self.settings.reranker.model, exc)
                self._reranker = False
        return self._reranker or None

    def _embedder(self) -> Embedder:
        from local_rag.embed import load_embedder

        return load_embedder(self.settings.embedder, self.settings.models_dir)

    @property
    def decider(self) -> Decider:
        if self._decider is None:
            from local_rag.decide import load_decider

            self._decider = load_decider(self.settings, retriever=self._retriever)
        return self._decider

    @cached_property
    def generator(self) -> Generator:
        return Generator(self.llm, self.settings.generate)

    @cached_property
    def llm_reranker(self) -> ListwiseReranker:
        from local_rag.llm.rerank import ListwiseReranker

        return ListwiseReranker(self.llm, self.settings.llm_rerank, seed=self.settings.llm.seed)

    @cached_property
    def judge(self) -> RelevanceJudge:
        from local_rag.llm.judge import RelevanceJudge

        return RelevanceJudge(self.llm, self.settings.judge)

    @cached_property
    def compressor(self) -> Compressor:
        from local_rag.evidence.compress import Compressor

        return Compressor(self.settings.evidence, self.retriever, lambda: self.reranker, self._embedder)

    # ------------------------------------------------------------ between turns
    def warm(self, conversation: Conversation, cancelled: Callable[[], bool] | None = None) -> list[Warmed]:
        """Prefill the prompt prefixes of the turn after ``conversation`` (empty, or ending with the agent's reply):
        each LLM stage's system text and the conversation so far (`local_rag.llm.warm`). Nothing when
        ``pipeline.warm`` is off."""
        if not self.settings.pipeline.warm:
            return []
        from local_rag.llm.warm import Warmed, next_prompts, warm

        loaded = []
        if not self._loaded:  # a chat's start: the first turn would load these
            started = time.perf_counter()
            try:
                self.load_stages()
            finally:
                self._stages_ready.set()
            loaded = [Warmed("load", 0, time.perf_counter() - started)]
        self._warmed = loaded + warm(next_prompts(conversation, self.llm, self.settings, self.generator), self.llm, cancelled)
        return self._warmed

    def load_stages(self) -> None:
        """Load what a turn needs: the index and its embedder (one search), the decision stage and the LLM."""
        self._loaded = True
        self.retriever.search([Query("warm-up", "lastturn")], top_k=1)
        _ = self.decider
        _ = self.llm

    def warm_later(self, conversation: Conversation) -> None:
        """`warm` on a background thread, stopped when the next turn starts (`answer`) or by `stop_warming`."""
        if not self.settings.pipeline.warm:
            return
        from local_rag.llm.warm import Warmer

        frozen = Conversation(list(conversation.turns), conversation.id)
        self.stop_warming()
        if not self._loaded:
            self._stages_ready.clear()  # before the thread starts: `wait_loaded` cannot miss it
        self._warmer = Warmer(lambda cancelled: self.warm(frozen, cancelled))
        self._warmer.start()

    def wait_loaded(self) -> None:
        """Wait while a warm-up's thread loads the stages: llama.cpp sends the process's stdout and stderr to
        /dev/null while it loads a model, so what is printed meanwhile (a chat command's reply) would be lost."""
        self._stages_ready.wait()

    def stop_warming(self) -> list[Warmed]:
        """Stop a background warm-up and wait for it (the model is never used by two threads); what it prefilled."""
        warmer, self._warmer = self._warmer, None
        warmed = warmer.stop() if warmer is not None else []
        self._stages_ready.set()  # the thread is done: nothing loads now
        return warmed

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

    def dated(self, conversation: Conversation) -> Conversation:
        """``conversation`` with the days its last user turn's relative dates name written into it ("yesterday" ->
        "yesterday (Sun 29 Nov 2026)", `local_rag.dates`), for an index of a folder's documents; a trace step says
        so. Unchanged for MTRAG's and BEIR's records, or with ``pipeline.dates`` off."""
        from local_rag.dates import dated_turn

        changed = dated_turn(conversation, self.settings)
        if changed is not conversation:
            self.skipped.append({"type": "dates", "stage": "rewrite", "text": changed.last_user_turn})
        return changed

    def scope(self, *groups: Iterable[str], what: str = "--only") -> Scope:
        """The documents a turn searches: ``retrieval.only`` of the settings, narrowed by each group of patterns in
        turn (`Scope`; a server's collection, then a request's own), checked against the index now.

        Raises:
            BadInputError: a pattern matches no document of the index (``what``: how the user gave it).
        """
        scope = Scope.of(self.settings.retrieval.only)
        for patterns in groups:
            scope = scope.narrow(patterns)
        if scope and (check := getattr(self.retriever, "scoped", None)) is not None:
            check(scope, what)
        return scope

    def scope_note(self, scope: Scope) -> TraceStep | None:
        """The trace step of a scoped turn: how many documents it searched, and by which patterns."""
        resolved = getattr(self.retriever, "scoped", lambda s: None)(scope) if scope else None
        if resolved is None:
            return None
        return {"type": "scope", "stage": "retrieval", "documents": len(resolved.documents),
                "text": f"searched {len(resolved.documents)} document(s): {scope.describe()}"}

    def passages(self, texts: Sequence[str], top_k: int, scope: Scope | None = None, rerank: bool = True) -> list[Hit]:
        """Retrieval alone, for a tool that writes its own answer (the server's vector store search, the MCP
        server's ``search``): the passages for ``texts`` (query variants, fused), best first, at most ``top_k``, of
        ``scope``'s documents (default: the settings' ``retrieval.only``), with relative dates written as the documents
        write days and, when the pipeline runs it and ``rerank``, the cross-encoder. No LLM call; an index a sync
        swapped in is reopened first, as a turn does.

        Raises:
            BadInputError: a pattern of ``scope`` matches no document.
        """
        from local_rag.dates import dated_turn

        self.refresh_index()
        scope = scope if scope is not None else self.scope()
        queries = [Query(text=dated_turn(Conversation([Turn("user", t)]), self.settings).last_user_turn)
                   for t in dict.fromkeys(t.strip() for t in texts if t.strip())]
        if not queries:
            return []
        reranker = self.reranker if rerank and self.settings.pipeline.cross_encoder else None
        depth = max(top_k, self.settings.reranker.candidates if reranker is not None else 0)
        hits = self.retriever.search(queries, top_k=depth, scope=scope)
        if reranker is not None:
            hits = reranker.rerank(queries[0].text, hits)
        return hits[:top_k]

    def answer(self, conversation: Conversation, on_token: Callable[[str], None] | None = None,
               on_status: Callable[[str], None] | None = None, scope: Scope | None = None) -> TurnResult:
        """Answer the last user turn of ``conversation``. ``on_status`` gets short progress lines before the answer
        streams ("Searching…", "3 sources: …"): what a chat user sees first. ``scope``: the documents searched
        (default: `scope`, the settings' ``retrieval.only``)."""
        from local_rag.llm.pipeline import question_of

        self.stop_warming()
        self.refresh_index()
        cfg = self.settings
        timings: dict[str, float] = {}
        calls_before = self._calls_before = len(self._llm.calls) if self._llm is not None else 0
        self.skipped = [w.trace() for w in self._warmed]
        self._warmed = []
        status = on_status or (lambda text: None)

        started = time.perf_counter()
        conversation, decision = self.decider.before_retrieval(conversation)
        if decision is not None:  # small talk: no retrieval
            return self.decided(decision, conversation, [], [], [], {"decide": time.perf_counter() - started})
        conversation = self.dated(conversation)

        scope = self.scope() if scope is None else scope
        if (note := self.scope_note(scope)) is not None:
            self.skipped.append(note)
        searched = note.get("documents", 0) if note is not None else None
        status("Searching…" if searched is None else f"Searching {searched} document{'s' if searched != 1 else ''}…")
        started = time.perf_counter()
        queries = self.queries(conversation)
        timings["rewrite"] = time.perf_counter() - started if cfg.pipeline.rewrite else 0.0

        started = time.perf_counter()
        retrieved = self.retriever.search(queries, top_k=self.depth, scope=scope)
        timings["retrieval"] = time.perf_counter() - started
        timings.update({f"retrieval.{k}": v for k, v in getattr(self.retriever, "last_timings", {}).items()})

        hits = [h for h in retrieved if dense_score(h) is None or dense_score(h) >= cfg.pipeline.min_dense_score]  # type: ignore[operator]
        question = question_of(queries)
        for name, enabled in (("cross-encoder", cfg.pipeline.cross_encoder), ("llm-rerank", cfg.pipeline.llm_rerank), ("judge", cfg.pipeline.judge)):
            if not enabled or not hits:
                continue
            started = time.perf_counter()
            if name == "cross-encoder":
                if (reranker := self.reranker) is None:
                    continue
                hits = reranker.rerank(question, hits)
            elif name == "llm-rerank":
                hits = self.llm_reranker.rerank(question, hits)
            else:
                hits = self.judge.filter(question, hits)
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
            selection = self.compressor.select(question, passages, self.llm.count_tokens)
            evidence = selection.hits
            timings["compress"] = time.perf_counter() - started
            self.skipped.append(selection.note())
        started = time.perf_counter()
        if evidence:
            answer = self.generator.answer(conversation, evidence, on_token=on_token)
        else:
            answer = Generator.idk(cfg.generate)
            self.skipped.append({"type": "skip", "stage": "generate", "text": "generate: no passage left, the fixed answer"})
        timings["generate"] = time.perf_counter() - started
        if answer.gate == "idk" and answer.idk_score is not None:  # the IDK gate declined before writing
            scores = {**decision.scores, "idk": answer.idk_score}
            decision = Decision("decline", round(math.exp(answer.idk_score), 4), scores, reason="generator P(IDK)",
                                latency_s=decision.latency_s)
            self.skipped.append({"type": "gate", "stage": "idk", "text": (
                f"generator: declines before writing (log P(IDK) {answer.idk_score:.2f} > {cfg.generate.idk_gate})")})
        if answer.kind == "answer" and passages and (gate := self.draft_gate) is not None:
            started = time.perf_counter()
            declined, p = gate.check(answer.text, passages, decision.scores.get("decline"))
            timings["draft-gate"] = time.perf_counter() - started
            if declined:
                decision = Decision("decline", round(p, 4), {**decision.scores, "draft": round(p, 4)}, reason="draft gate",
                                    latency_s=decision.latency_s + timings["draft-gate"])
                answer = Answer(cfg.generate.idk_answer, "decline", passages=passages, raw=answer.raw, call=answer.call)
                self.skipped.append({"type": "gate", "stage": "draft",
                                     "text": f"draft gate: the passages do not support the draft (P(decline) {p:.2f})"})
        support = None
        if cfg.support.mode != "off" and answer.kind == "answer" and evidence:
            started = time.perf_counter()
            answer, support = self.checked(answer, evidence)  # the passages as the generator saw them
            timings["support"] = time.perf_counter() - started
        timings["total"] = sum(v for k, v in timings.items() if "." not in k)
        return TurnResult(answer, queries, retrieved, passages, timings, self.take_calls(calls_before), list(self.skipped),
                          decision=decision, support=support)

    def client_task(self, messages: list[Message], on_token: Callable[[str], None] | None = None,
                    max_tokens: int = 200) -> TurnResult:
        """A client's own background task (a chat title, tags, follow-up questions: `server.protocol.client_task`)
        answered by the model alone, with the client's messages as they are: no retrieval, no grounding prompt, no
        citations. Kind ``chitchat`` (a reply that searched nothing); the trace says why."""
        self.stop_warming()
        before = len(self.llm.calls)
        started = time.perf_counter()
        done = self.llm.run(messages, stage="client-task", max_tokens=max_tokens, on_token=on_token)
        seconds = time.perf_counter() - started
        skip: TraceStep = {"type": "skip", "stage": "retrieval", "text": "a client's own task: answered by the model "
                           "alone, without retrieval"}
        return TurnResult(Answer(done.text.strip(), "chitchat", raw=done.text, call=done.call), [], [], [],
                          {"client_task": seconds, "total": seconds}, self.take_calls(before), [skip])

    def take_calls(self, before: int) -> list[LLMCall]:
        """The turn's LLM calls, taken out of the models' logs: the pipeline LLM's since ``before`` and those of a
        likelihood reranker's own model (one that is not the pipeline's LLM). Each turn's calls live in its
        `TurnResult`, so a long-lived pipeline (chat, server) keeps none of past turns' prompts in memory."""
        from local_rag.rerank.likelihood import LikelihoodReranker

        calls: list[LLMCall] = []
        if self._llm is not None:
            calls += self._llm.calls[before:]
            del self._llm.calls[before:]
        if isinstance(self._reranker, LikelihoodReranker) and self._reranker.llm is not self._llm:
            calls += self._reranker.llm.calls
            self._reranker.llm.calls.clear()
        return calls


    @property
    def draft_gate(self) -> DraftGate | None:
        """The draft gate (`local_rag.decide.draft`), loaded on first use; None when ``decide.draft_model`` is ''
        or its model (or the support model it reads) is missing."""
        if self._gate is False:
            self._gate = None
            if self.settings.decide.enabled and self.settings.decide.draft_model:
                from local_rag.decide.draft import load_draft_gate
                from local_rag.decide.support import load_support_checker

                self._gate = load_draft_gate(self.settings, lambda: load_support_checker(self.settings, self._retriever))
        return self._gate

    def checked(self, answer: Answer, passages: list[Hit]) -> tuple[Answer, dict[str, Any] | None]:
        """The answer after the support check (`local_rag.decide.support`): citations moved to the passage that
        supports a sentence, unsupported sentences flagged or dropped; the answer itself when no model is trained."""
        if self._support is False:
            from local_rag.decide.support import load_support_checker

            self._support = load_support_checker(self.settings, self._retriever)
        if self._support is None:
            return answer, None
        return support_checked(self._support, answer, passages, self.settings.generate)

    def decided(self, decision: Decision, conversation: Conversation, queries: list[Query], retrieved: list[Hit],
                hits: list[Hit], timings: dict[str, float]) -> TurnResult:
        """The turn when the decision stage answers it without the generator (decline, clarify, chitchat)."""
        from local_rag.decide import reply_text

        passages = hits[: self.settings.generate.passages]
        answer = Answer(reply_text(decision, conversation, hits, self.settings), decision.kind, passages=passages)
        timings["total"] = sum(v for k, v in timings.items() if "." not in k)
        skip: TraceStep = {"type": "skip", "stage": "generate", "text": f"generate: decided {decision.kind} without the LLM"}
        return TurnResult(answer, queries, retrieved, passages, timings, self.take_calls(self._calls_before),
                          [*self.skipped, skip], decision=decision)


def support_checked(checker: SupportChecker, answer: Answer, passages: list[Hit],
                    generate: GenerateConfig) -> tuple[Answer, dict[str, Any]]:
    """``answer`` after ``checker`` (`SupportChecker.check` against the ``passages`` the generator saw) and the
    check's report: citations renumbered to the given passages; the fixed IDK answer when no sentence is left. Used by
    the pipeline and by ``local-rag eval recheck`` on committed answers."""
    text, report = checker.check(answer.text, passages)
    if not text.strip():  # nothing the passages support: decline
        return Generator.idk(generate), report.to_json()
    text, numbers, _ = check_citations(text, len(passages))
    citations = [Citation.of(n, passages[n - 1]) for n in numbers]  # with its page or section, as `ask` shows it
    return Answer(text, "answer", citations, answer.invalid_citations, passages, answer.raw, answer.call), report.to_json()


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

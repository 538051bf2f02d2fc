"""Scoring one prediction record: RB_alg, the IDK label, RL_F, RB_llm, the conditioned scores.

`GenerationScorer.score` returns the record with ``metrics`` in the official output shape (each metric a list:
``RougeL_stemFalse``, ``BertscoreR``, ``BertKPrec`` per passage, ``RB_agg``, ``idk_eval``, ``RL_F``, ``RB_llm``
and the conditioned ``RB_agg_idk``, ``RL_F_idk``, ``RB_llm_idk``) and a ``local_rag`` block: answerability, domain,
turn, the claims and verdicts behind RL_F, the RB_llm rating, the per-task harmonic mean and the seconds each step
took. Models load on first use: the BERTScore encoder, and the judge model (``gen_eval.judge``, apart from the
generator) only when a task needs it.

Example:
    >>> scorer = GenerationScorer.from_settings(load_settings("cpu-qwen"))  # doctest: +SKIP
    >>> scored = scorer.score(record)  # doctest: +SKIP
    >>> scored["metrics"]["RB_agg_idk"]  # doctest: +SKIP
    [0.41]
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Protocol

from local_rag.evaluation.generation.algorithmic import BertScore, algorithmic_metrics, choose_encoder, harmonic_mean
from local_rag.evaluation.generation.clarify import ClarificationDetector
from local_rag.evaluation.generation.conditioning import CONDITIONED, UNDERSPECIFIED, condition, decided
from local_rag.evaluation.generation.idk import DEFAULT_IDK_SENTENCE, IdkDetector, LLMIdkJudge
from local_rag.evaluation.generation.judges import Faithfulness, ReferenceJudge, judge_documents
from local_rag.evaluation.generation.official import (
    answerability,
    contexts_of,
    domain_of,
    messages_of,
    prediction_text,
    targets_of,
    turn_number,
)
from local_rag.llm.base import LLM
from local_rag.mtrag import parse_conversation
from local_rag.settings import GenEvalConfig, Settings


class IdkJudge(Protocol):
    name: str

    def label(self, answer: str, question: str = "") -> float: ...


def conversation_lines(record: dict[str, Any]) -> tuple[str, str, str]:
    """``(conversation, history, question)`` as the official judges show them: ``speaker: text`` lines; the history
    is everything before the last user turn."""
    conversation = parse_conversation(messages_of(record), where=f"task {record.get('task_id')}")
    lines = [f"{t.speaker}: {' '.join(t.text.split())}" for t in conversation.turns]
    last = max(i for i, t in enumerate(conversation.turns) if t.speaker == "user")
    return "\n".join(lines), "\n".join(lines[:last]), " ".join(conversation.turns[last].text.split())


class GenerationScorer:
    """Scores prediction records. See the module docstring."""

    def __init__(
        self,
        config: GenEvalConfig,
        models_dir: str | Path = "models",
        *,
        bert: BertScore | None = None,
        judge_llm: LLM | None = None,
        idk_judge: IdkJudge | None = None,
    ) -> None:
        self.config = config
        self.models_dir = Path(models_dir)
        self._bert = bert
        self._llm = judge_llm
        self._idk = idk_judge
        self._faithfulness: Faithfulness | None = None
        self._reference: ReferenceJudge | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> GenerationScorer:
        """The scorer of ``settings.gen_eval``; the IDK sentence defaults to the generator's fixed answer."""
        config = settings.gen_eval
        if not config.idk_sentence:
            generate = getattr(settings, "generate", None)  # the pipeline's settings (issue 4)
            sentence = str(getattr(generate, "idk_answer", "") or DEFAULT_IDK_SENTENCE)
            config = config.model_copy(update={"idk_sentence": sentence})
        return cls(config, settings.models_dir)

    @property
    def bert(self) -> BertScore:
        if self._bert is None:
            cfg = self.config
            self._bert = BertScore(choose_encoder(cfg.bertscore_model, cfg.bertscore_layers, self.models_dir),
                                   cfg.bertscore_batch_size)
        return self._bert

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            from local_rag.llm import load_llm

            self._llm = load_llm(self.config.judge, self.models_dir)
        return self._llm

    @property
    def idk(self) -> IdkJudge:
        if self._idk is None:
            if self.config.idk_judge == "llm":
                self._idk = LLMIdkJudge(self.llm, self.config.idk_sentence)
            else:
                self._idk = IdkDetector(self.config.idk_sentence)
        return self._idk

    def describe(self) -> dict[str, Any]:
        """What the scores were made with (for reports); loads the BERTScore encoder."""
        encoder = self.bert.encoder
        judge = getattr(self._llm, "model_name", None) or self.config.judge.model
        return {
            "bertscore": encoder.describe(),
            "bertscore_model": encoder.name,
            "bertscore_layer": encoder.layer,
            "comparable": encoder.comparable,
            "idk_judge": self.config.idk_judge,
            "idk_sentence": self.config.idk_sentence,
            "llm_judges": self.config.llm_judges,
            "judge_model": judge if self.config.llm_judges or self.config.idk_judge == "llm" else None,
            "skip_decided": self.config.skip_decided,
        }

    def score(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record with ``metrics`` and ``local_rag`` (see the module docstring); the input is not changed."""
        timings: dict[str, float] = {}
        started = time.perf_counter()
        text = prediction_text(record)
        targets = targets_of(record)
        passages = [str(c.get("text", "")) for c in contexts_of(record)]
        label = answerability(record)
        metrics: dict[str, list[Any]] = dict(algorithmic_metrics(text, targets, passages, self.bert))
        timings["rb_alg_s"] = time.perf_counter() - started

        conversation, history, question = conversation_lines(record)
        t = time.perf_counter()
        idk = float(self.idk.label(text, conversation))
        timings["idk_s"] = time.perf_counter() - t
        metrics["idk_eval"] = [idk]
        if label == UNDERSPECIFIED:  # MTRAG-UN: handled when the reply asks which thing is meant
            metrics["clarify_eval"] = [ClarificationDetector().label(text)]

        info: dict[str, Any] = {"answerability": label, "domain": domain_of(record), "turn": turn_number(record)}
        judged = self.config.llm_judges and not (self.config.skip_decided and decided(label, idk))
        rl_f = rb_llm = None
        calls_before = len(self._llm.calls) if self._llm is not None else 0
        if judged:
            t = time.perf_counter()
            if self._faithfulness is None:
                self._faithfulness = Faithfulness(self.llm, self.config.max_claims, self.config.passage_tokens)
            # one rendering of the documents for both judges: their prompts share it as a prefix (KV cache reuse)
            documents = judge_documents(self.llm, passages, self.config.passage_tokens)
            faith = self._faithfulness.score(conversation, text, passages, documents)
            rl_f = faith.value
            info["RL_F_claims"], info["RL_F_verdicts"] = faith.claims, faith.verdicts
            timings["rl_f_s"] = time.perf_counter() - t
            t = time.perf_counter()
            if self._reference is None:
                self._reference = ReferenceJudge(self.llm, self.config.passage_tokens)
            graded = self._reference.score(history, question, targets[0] if targets else "", text, passages,
                                           documents)
            rb_llm = graded.value
            info["RB_llm_rating"] = graded.rating
            timings["rb_llm_s"] = time.perf_counter() - t
        metrics["RL_F"] = [rl_f]
        metrics["RB_llm"] = [rb_llm]
        condition_all(metrics, label, idk, self.config.llm_judges, (metrics.get("clarify_eval") or [None])[0])
        info["judged"] = judged
        info["hm_idk"] = harmonic_mean([metrics[n][0] for n in CONDITIONED.values()])
        if self._llm is not None:
            calls = self._llm.calls[calls_before:]
            info["llm_calls"] = len(calls)
            info["llm_tokens"] = {"prompt": sum(c.prompt_tokens for c in calls),
                                  "completion": sum(c.completion_tokens for c in calls)}
        timings["total_s"] = time.perf_counter() - started
        info["timings"] = {k: round(v, 3) for k, v in timings.items()}
        out = dict(record)
        out["metrics"] = metrics
        out["local_rag"] = info
        return out

    def relabel(self, scored: dict[str, Any]) -> dict[str, Any] | None:
        """A scored record brought up to the current IDK rules, so that a rule fixed after a run reaches the tasks
        it had already scored: the same record when its label stands; a copy with the new label and conditioned
        scores when it changed (``local_rag.idk_relabelled_from`` keeps the old one); ``None`` when the new label
        needs LLM judges that the task was not given (score it again). Only the rules are re-run: an LLM IDK
        label is kept, as it would cost a call."""
        if self.config.idk_judge != "rules":
            return scored
        metrics = dict(scored.get("metrics") or {})
        before = (metrics.get("idk_eval") or [None])[0]
        idk = float(self.idk.label(prediction_text(scored)))
        if before == idk or not all(name in metrics for pair in CONDITIONED.items() for name in pair):
            return scored
        label = answerability(scored)
        info = dict(scored.get("local_rag") or {})
        # as the task was scored, whatever this run's settings: with LLM judges when a judge figure is there
        judges = any(metrics[CONDITIONED[raw]][0] is not None for raw in ("RL_F", "RB_llm"))
        if judges and not info.get("judged") and not decided(label, idk):
            return None
        metrics["idk_eval"] = [idk]
        condition_all(metrics, label, idk, judges, (metrics.get("clarify_eval") or [None])[0])
        info["hm_idk"] = harmonic_mean([metrics[n][0] for n in CONDITIONED.values()])
        info.setdefault("idk_relabelled_from", before)
        return dict(scored, metrics=metrics, local_rag=info)


def condition_all(metrics: dict[str, list[Any]], label: str, idk: float, judges: bool, clarify: float | None = None) -> None:
    """Set the conditioned scores of ``metrics`` from its raw ones (``judges``: the LLM judges were run;
    ``clarify``: the clarification label of an UNDERSPECIFIED task)."""
    for raw, name in CONDITIONED.items():
        if raw != "RB_agg" and not judges:
            metrics[name] = [None]  # not run: no conditioned figure either (means would see only decided tasks)
        else:
            metrics[name] = [condition(label, idk, metrics[raw][0], clarify)]

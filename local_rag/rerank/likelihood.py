"""The question's likelihood under a local GGUF LLM as the reranker's score (UPR: Sachan et al. 2022, "Improving
Passage Retrieval with Zero-Shot Question Generation").

Each passage (title and text, cut to ``reranker.max_length`` LLM tokens) is put into the package prompt
``likelihood.yaml`` ("Passage: ... Please write a question based on this passage."), and its score is the summed
log-probability of the question's first ``max_tokens`` tokens as the reply (teacher-forced through
`LLM.continuation_logprobs`: one prefill a passage, nothing generated, nothing trained). ``reranker.model`` names a
GGUF in ``models/`` (e.g. ``qwen2.5-coder-0.5b-instruct-q4_k_m``); it runs on the GPU when llama.cpp's build and the
free VRAM allow, like the pipeline's LLM. On 2 CPU cores the 0.5B scores a 384-token passage in ~0.9 s, so 10
candidates cost ~9 s a query (docs/benchmarks.md, issue 23, session 38).

When ``reranker.model`` names the pipeline's own LLM (``llm.model``, the same string), the pipeline hands its loaded
model to the reranker (`shares_llm`) instead of loading a second copy: one set of weights in memory (the stage's time
stays the reranker's, ``timings_s["cross-encoder"]``; its calls are in the turn's ``llm_calls`` as ``rerank-likelihood``,
shared or not). Scoring moves the live KV cache off the conversation's prefix;
the saved prefix states (``llm.prefix_cache``) bring it back for the next stage.
"""

from __future__ import annotations

from pathlib import Path

from local_rag.llm.base import LLM, Message
from local_rag.llm.prompts import load_prompt
from local_rag.rerank.base import Reranker, register_reranker
from local_rag.settings import LLMConfig, RerankerConfig

STAGE = "rerank-likelihood"


class LikelihoodReranker(Reranker):
    backend = "likelihood"

    def __init__(self, config: RerankerConfig, models_dir: Path, llm: LLM | None = None) -> None:
        """``llm``: an already loaded model to score with (the pipeline's, see `shares_llm`); else ``config.model`` is
        loaded on its own, with a context of ``max_length`` + 256 tokens."""
        super().__init__(config)
        self.prompt = load_prompt("likelihood")
        if llm is None:
            from local_rag.llm.llamacpp import LlamaCppLLM  # llama.cpp only when this backend is chosen

            llm = LlamaCppLLM(LLMConfig(model=config.model, n_ctx=config.max_length + 256, prefix_cache=0,
                                        n_gpu_layers=0 if config.device == "cpu" else -1), models_dir)
        self.llm = llm
        self.checksum = ""
        self.name = config.model

    def messages(self, text: str) -> list[Message]:
        """The prompt for one passage; an empty system text is left out (the chat template's default stays)."""
        out = self.prompt.messages(passage=self.fit(text))
        return [m for m in out if m["role"] != "system" or m["content"]]

    def fit(self, text: str) -> str:
        """``text`` cut to ``max_length`` LLM tokens (whole characters; no cut when it fits). Not `llm.budget.truncate`,
        which marks its cut with " …" for a reader and may end a token over: here the model scores the text itself."""
        limit = self.config.max_length
        if self.llm.count_tokens(text) <= limit:
            return text
        lo, hi = 0, len(text)
        while lo < hi:  # the longest prefix that fits
            mid = (lo + hi + 1) // 2
            if self.llm.count_tokens(text[:mid]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]

    def score(self, query: str, texts: list[str]) -> list[float]:
        out = []
        for text in texts:  # each call recorded in the model's log (`LLM.score`): the turn's `llm_calls` take them
            logprobs = self.llm.score(self.messages(text), query, stage=STAGE, n_tokens=self.prompt.max_tokens)
            out.append(float(sum(logprobs)) if logprobs else float("-inf"))
        return out


def shares_llm(reranker: RerankerConfig, llm: LLMConfig) -> bool:
    """Whether the `likelihood` reranker scores with the pipeline's own loaded LLM: its model is ``llm.model`` (then
    the LLM's placement holds, not ``reranker.device``)."""
    return reranker.backend == "likelihood" and reranker.model == llm.model


@register_reranker("likelihood")
def _factory(config: RerankerConfig, models_dir: Path) -> Reranker:
    return LikelihoodReranker(config, models_dir)

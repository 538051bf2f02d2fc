"""The one typed settings model: the single source of defaults.

Values come, lowest precedence first, from: the field defaults below, a named profile
(``local_rag/profiles/<name>.yaml``, or one of the user config file's ``profiles``), the user config file's defaults
(`local_rag.paths`), a settings file (``--config``), environment variables (``LOCAL_RAG_<FIELD>``, nested with
``__``, e.g. ``LOCAL_RAG_CHUNKER__SIZE=512``) and command-line flags. Unknown keys are refused everywhere.

The default profile is the demo's, ``cpu-qwen``; the user config file's ``profile`` key changes it.
With ``offline`` on (the default), loading settings sets ``HF_HUB_OFFLINE`` and friends before any hub library is
imported (`local_rag.device.set_offline`).

Example:
    >>> s = load_settings("cpu-test", overrides={"chunker": {"size": 512, "overlap": 100}})
    >>> (s.chunker.size, s.chunker.overlap)
    (512, 100)
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from local_rag.errors import SettingsError
from local_rag.origins import parse_origins
from local_rag.paths import default_indexes_dir, default_models_dir, name_problem, user_config_file
from local_rag.settings_env import check_names, describe_value_errors, read_env

DEFAULT_PROFILE = "cpu"  # the demo's profile (`make demo` imports its LLM; `local-rag models pull` fetches it)


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkerConfig(_Config):
    """Re-chunking of passages into token windows of the embedding model's tokenizer."""

    size: int = Field(384, ge=2, description="tokens per chunk")
    overlap: int = Field(64, ge=0, description="tokens shared by consecutive chunks")
    tokenizer: str = Field("", description="tokenizer model name or folder; empty = the embedder's model")
    header: Literal["none", "title", "title+section"] = Field(
        "title+section",
        description="contextual chunk header both indexes see before each chunk: its document's title and nearest "
        "section heading (title+section), the title only (title: indexes built before it existed), or nothing",
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkerConfig:
        if self.overlap >= self.size:
            raise ValueError(f"chunker.overlap ({self.overlap}) must be smaller than chunker.size ({self.size})")
        return self


class SparseConfig(_Config):
    """bm25s index parameters."""

    enabled: bool = True
    method: Literal["lucene", "robertson", "atire", "bm25l", "bm25+"] = "lucene"
    # Anserini's defaults: on the MTRAG clapnq pool, last-turn nDCG@5 0.231 against 0.206 for k1=1.5, b=0.75
    k1: float = 0.9
    b: float = 0.4
    stemmer: str = Field("english", description="PyStemmer language; empty disables stemming")
    stopwords: str = Field("en", description="bm25s stopword list; empty disables stopwords")
    identifiers: bool = Field(False, description="also index the words of compound identifiers (read_code, "
                              "IndexFolder: read, code, index, folder); `index build --code` sets it")


class EmbedderConfig(_Config):
    """Dense embedding model."""

    backend: Literal["sentence-transformers", "bge-m3", "onnx"] = "sentence-transformers"
    model: str = Field("all-MiniLM-L6-v2", description="a name in models/manifest.json or a folder path")
    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["auto", "fp32", "fp16", "bf16"] = Field(
        "auto", description="auto: fp16 on GPU; on CPU bf16 autocast where AMX exists, else fp32"
    )
    batch_size: int = Field(32, ge=1)
    max_length: int = Field(0, ge=0, description="tokens per text; 0 = the model's own limit")
    query_prefix: str = ""
    passage_prefix: str = ""
    bge_sparse: bool = Field(False, description="BGE-M3: also keep the learned sparse (lexical) weights")
    query_onnx: bool = Field(
        True, description="sentence-transformers on the CPU in fp32: embed at query time (queries, and the sentences "
        "evidence compression scores) with an ONNX Runtime copy of the model (exported once into models/.query-onnx/), "
        "so answering never imports torch; the vectors an index stores still come from sentence-transformers",
    )


class DenseConfig(_Config):
    """FAISS index over normalized vectors (inner product = cosine)."""

    enabled: bool = True
    factory: str = Field("auto", description="FAISS index factory string: Flat, HNSW32, IVF1024,Flat ...; auto = "
                         "chosen by corpus size (Flat below 200k chunks, else IVF{lists},SQ8; local_rag.index.factory)")
    nprobe: int = Field(32, ge=1, description="IVF lists probed per query (32: recall@10 0.967 at 1M chunks, "
                        "docs/benchmarks/scale.md)")
    ef_search: int = Field(128, ge=1, description="HNSW search depth")
    use_gpu: Literal["auto", "yes", "no"] = "auto"


class BackendConfig(_Config):
    """Where a new index keeps its vectors and BM25 terms (an existing index follows its manifest)."""

    name: Literal["local", "qdrant"] = Field("local", description="local = FAISS + bm25s files in the index folder; "
                                             "qdrant = a Qdrant collection (extra `qdrant`)")
    url: str = Field("", description="Qdrant server or cluster URL (QDRANT_API_KEY from the environment); empty = "
                     "embedded in the index folder (qdrant-client local mode)")


class FusionConfig(_Config):
    """How ranked lists from several retrievers and query variants are merged."""

    method: Literal["rrf", "max", "learned"] = Field(
        "rrf", description="learned: a trained fusion model (`local-rag train fusion`) scores the candidates"
    )
    k: int = Field(60, ge=1, description="RRF constant")
    weights: dict[str, float] = Field(
        default_factory=dict,
        description="per-list weights keyed 'retriever:mode' (e.g. 'bm25:lastturn'), 'retriever' or 'mode'; default 1",
    )
    model: str = Field("", description="the trained fusion model of method learned: a models/ name or a folder")
    fallback: Literal["rrf", "error"] = Field(
        "rrf", description="when method learned finds no trained model: warn and use RRF, or stop with an error"
    )


RetrieverName = Literal["bm25", "dense", "bge-sparse"]


class FeedbackConfig(_Config):
    """Pseudo-relevance feedback: a second search whose query is the text of the first fused list's top passages;
    its lists (``<retriever>:feedback``) join the fusion. No model call; off when ``passages`` is 0."""

    passages: int = Field(0, ge=0, description="top fused passages whose text makes the feedback query; 0 = off")
    words: int = Field(128, ge=1, description="words taken from each feedback passage")
    retrievers: list[RetrieverName] = Field(
        default_factory=lambda: list[RetrieverName](["bm25"]),
        description="the retrievers that run the feedback query (those of retrieval.retrievers the index has)",
    )
    weight: float = Field(1.0, ge=0, description="a feedback list's fusion weight is its retriever's times this (unless "
                          "fusion.weights names '<retriever>:feedback')")


class RetrievalConfig(_Config):
    """What is retrieved per turn."""

    retrievers: list[RetrieverName] = Field(
        default_factory=lambda: list[RetrieverName](["bm25", "dense"]), description="bge-sparse needs a bge-m3 index built with bge_sparse"
    )
    query_modes: list[str] = Field(default_factory=lambda: ["lastturn"])
    candidates: int = Field(100, ge=1, description="hits taken from each list before fusion")
    top_k: int = Field(10, ge=1, description="hits returned after fusion")
    only: list[str] = Field(
        default_factory=list, description="search only these documents: their paths in the indexed folder (or ids), "
        "folders of them or shell patterns ('reports/2024', '*.pdf'); empty: all (`--only`, local_rag.retrieve.scope)"
    )
    feedback: FeedbackConfig = Field(default_factory=FeedbackConfig)
    also: list[str] = Field(
        default_factory=list, description="other indexes searched with `index` as one (`--also`): their passages "
        "fused with its own and named NAME:document (local_rag.retrieve.joint)"
    )

    @field_validator("also", mode="after")
    @classmethod
    def _plain_index_names(cls, value: list[str]) -> list[str]:
        """Index names, each once (`local_rag.paths.name_problem`: no path, nothing hidden)."""
        for name in value:
            problem = name_problem(name, "index", "indexes_dir")
            if problem:
                raise ValueError(problem)
        return list(dict.fromkeys(value))


class RerankerConfig(_Config):
    """Cross-encoder reranking of the fused candidates (switched on by ``pipeline.cross_encoder``)."""

    backend: Literal["sentence-transformers", "onnx", "bi-encoder", "likelihood"] = Field(
        "sentence-transformers", description="bi-encoder: cosine of an embedder model's embeddings (re-scoring); "
        "likelihood: log-probability of the question given the passage under a GGUF LLM (`model` names it; UPR)"
    )
    model: str = Field("bge-reranker-v2-m3", description="a name in models/manifest.json or a folder path")
    device: Literal["auto", "cpu", "cuda"] = "auto"
    max_length: int = Field(512, ge=8, description="tokens per (query, passage) pair")
    batch_size: int = Field(16, ge=1)
    candidates: int = Field(20, ge=1, description="fused hits that are reranked")
    prior_weight: float = Field(
        0.0, ge=0.0, description="0: order by cross-encoder score; > 0: reciprocal-rank fusion (k 60) of the "
        "cross-encoder's ranking with the first stage's, the latter weighted by this"
    )
    fallback: Literal["error", "skip"] = Field(
        "error", description="skip: a missing model (e.g. one not trained yet) logs a warning and the stage is skipped"
    )
    unit: Literal["passage", "sentence"] = Field(
        "passage", description="sentence: a passage scores as its best sentence (each under the passage's title), for "
        "a model trained on sentences (`train containment`)"
    )


class PipelineConfig(_Config):
    """Which stages of the conversational pipeline run (each can be switched off from the CLI)."""

    mode: Literal["pipeline", "agentic"] = Field(
        "pipeline", description="pipeline: rewrite -> retrieve -> rerank -> generate; agentic: the LLM searches (ChatR1)"
    )
    rewrite: bool = Field(True, description="LLM query rewriting (modes in `rewrite.modes`)")
    cross_encoder: bool = Field(False, description="cross-encoder reranking (model in `reranker`)")
    llm_rerank: bool = Field(False, description="listwise LLM reranking")
    judge: bool = Field(False, description="LLM relevance judging (drops irrelevant passages)")
    min_dense_score: float = Field(
        0.0, description="drop hits whose dense cosine is below this; none left -> the IDK answer without an LLM call"
    )
    dates: bool = Field(
        True, description="write the day a relative date names into the question before it is searched ('yesterday' "
        "-> 'yesterday (Sun 29 Nov 2026)', `local_rag.dates`), for an index of a folder's documents (never MTRAG's)"
    )
    warm: bool = Field(
        True, description="between turns of a chat or the server, prefill the next turn's prompt prefixes (system "
        "text, the conversation so far) while the user types (`local_rag.llm.warm`); the same prompts, prefilled earlier"
    )


class GenerateConfig(_Config):
    """Grounded answer generation."""

    prompt: str = Field("answer", description="prompt file: answer (role-separated, cited) or answer_plain (baseline)")
    idk_answer: str = Field(
        "I'm sorry, but I don't have the answer to that in the documents I have.",
        description="the fixed answer when no passage survives filtering or the model declines",
    )
    max_words: int = Field(150, ge=10)
    max_tokens: int = Field(320, ge=16)
    passages: int = Field(5, ge=1, description="passages given to the model")
    passage_tokens: int = Field(300, ge=16, description="tokens per passage at most")
    history_tokens: int = Field(600, ge=0, description="tokens of conversation history at most")
    agent_turn_tokens: int = Field(120, ge=0, description="tokens per earlier agent turn at most")
    history_step: int = Field(
        1, ge=1, description="the oldest turns are dropped this many at a time, so that consecutive turns keep the "
        "same history start: a prompt prefix the KV cache reuses with the answer_history_first prompt (1 = off)",
    )
    clarify: bool = Field(True, description="allow a clarifying question on ambiguous turns")
    idk_gate: float | None = Field(
        None, le=0.0, description="decline without writing when the generator's own mean log-probability of "
        "beginning its reply with idk_answer (its first idk_gate_tokens tokens, scored on the answer's prompt) is above "
        "this; set per model and prompt from measurement (docs/evaluation.md); 0 = score and record only; null = off",
    )
    idk_gate_tokens: int = Field(4, ge=1, le=16, description="tokens of idk_answer the gate scores")
    idk_gate_model: str = Field(
        "", description="the llm.model idk_gate was measured with: with another model the gate is off (a warning); "
        "'' = any model",
    )
    attribute: bool = Field(
        False, description="cite an answer the model left uncited by word overlap with the passages (the demo does)"
    )


class EvidenceConfig(_Config):
    """Evidence compression (`local_rag.evidence.compress`): the generator gets the passages' best sentences, not
    whole passages, within a token budget; each sentence stays under its passage's citation number, in its order."""

    compress: bool = Field(False, description="select sentences instead of sending whole passages")
    scorer: Literal["embedding", "cross-encoder"] = Field(
        "embedding", description="embedding: cosine to the question with the index's embedder; cross-encoder: the "
        "`reranker` model (slower, stronger)",
    )
    budget_tokens: int = Field(400, ge=32, description="LLM tokens of evidence at most (titles and labels included)")
    max_sentence_tokens: int = Field(80, ge=8, description="longer sentences are split at word boundaries")
    min_sentences: int = Field(1, ge=0, description="sentences kept however low they score (the best first)")
    join_wrapped: bool = Field(
        False, description="read hard-wrapped passages as prose: a line break ends a sentence only where the line could "
        "end one (not before a lower-case word, nor after a comma, colon or 'of the'), and an initial ('D.') never does "
        "(off: measured on the train split in session 41, not chosen)",
    )


class DecideConfig(_Config):
    """The decision stage between reranking and generation (`local_rag.decide`): answer, decline, clarify or
    chitchat, by a small trained model (`local-rag train decider`)."""

    enabled: bool = Field(True, description="run the decision stage (off, or no trained model: always answer)")
    model: str = Field("decider", description="the trained decider: a name in models/manifest.json or a folder")
    decline_threshold: float = Field(
        -1.0, le=1.0, description="decline when P(decline) reaches this; -1 = the threshold saved with the model"
    )
    clarify_threshold: float = Field(
        -1.0, le=1.0, description="clarify when P(clarify) reaches this; -1 = the threshold saved with the model"
    )
    chitchat: bool = Field(True, description="reply to thanks and greetings without retrieval")
    max_options: int = Field(8, ge=2, le=12, description="options a clarifying question names at most")
    draft_model: str = Field(
        "draft-gate", description="the draft gate (`local-rag train draft-gate`): after generation, decline a draft "
        "its passages do not support; '' = no gate (also when the model or the support model is missing)"
    )
    draft_threshold: float = Field(
        -1.0, le=1.0, description="the draft gate declines when its P(decline) reaches this; -1 = the model's"
    )


class SupportConfig(_Config):
    """The support check after generation (`local_rag.support`): each answer sentence against its passages."""

    mode: Literal["off", "flag", "drop"] = Field(
        "off", description="flag: count unsupported sentences; drop: also remove them; off: no check"
    )
    model: str = Field("support", description="the trained support classifier (`local-rag train support`)")
    threshold: float = Field(-1.0, le=1.0, description="supported when P(support) reaches this; -1 = the model's")
    move_citations: bool = Field(True, description="cite the given passage that supports a sentence best")


class LLMConfig(_Config):
    """The local GGUF LLM (llama.cpp)."""

    model: str = Field("smollm2-135m-instruct", description="a name in models/manifest.json or a .gguf path")
    n_ctx: int = Field(4096, ge=256)
    n_gpu_layers: int = Field(-1, description="-1 = all layers on the GPU when the build and free VRAM allow")
    n_threads: int = Field(0, ge=0, description="0 = pick for this machine")
    n_threads_batch: int = Field(0, ge=0, description="0 = pick for this machine")
    n_batch: int = Field(512, ge=1)
    flash_attn: bool = Field(True, description="flash attention (llama.cpp; +5% prefill in a CPU microbenchmark, neutral in the pipeline)")
    prefix_cache: int = Field(
        4, ge=0, description="KV states kept to reuse each stage's prompt prefix across stages (0 = off)"
    )
    temperature: float = Field(0.0, ge=0.0)
    seed: int = 0
    max_tokens: int = Field(512, ge=1)
    prompt_lookup: int = Field(
        0, ge=-1, le=32, description="prompt-lookup speculative decoding of greedy free-text replies: draft tokens "
        "copied from the prompt per step (`local_rag.llm.speculative`; 0 = off; -1 = 10 where llama.cpp's build uses "
        "AMX, where a draft batch is cheap, else off). The text is unchanged",
    )
    prompt_lookup_ngram: int = Field(2, ge=1, le=8, description="longest n-gram matched against the prompt")
    prompt_lookup_min_ngram: int = Field(1, ge=1, le=8, description="shortest n-gram that proposes a draft")
    loop_repeats: int = Field(
        3, ge=0, description="stop a free-text reply once a block of 16-400 characters repeats this many times back "
        "to back, and keep one copy (0 = off, else at least 2)"
    )

    @model_validator(mode="after")
    def _loop_repeats_off_or_two(self) -> LLMConfig:
        if self.loop_repeats == 1:
            raise ValueError("llm.loop_repeats must be 0 (off) or at least 2: one copy of a block is not a loop")
        return self


class RewriteConfig(_Config):
    """LLM query rewriting of the last turn (`local_rag.llm.rewrite`)."""

    modes: list[str] = Field(
        default_factory=lambda: ["rewrite"], description="rewrite | keywords | multi | hyde (see `local_rag.llm.stages`)"
    )
    n_queries: int = Field(3, ge=1, le=5, description="queries written by the 'multi' mode")
    history_tokens: int = Field(1024, ge=64, description="token budget for the conversation shown to the LLM")
    agent_tokens: int = Field(96, ge=0, description="agent turns are cut to this many tokens first (0 = no cap)")
    skip_standalone: bool = Field(
        False, description="no rewrite call when the last turn reads as standalone (`local_rag.llm.standalone`); "
        "the skip is recorded in the turn's trace",
    )
    reply: Literal["grammar", "prefix"] = Field(
        "grammar", description="how the 'rewrite' mode's JSON reply is decoded. grammar: under a llama.cpp grammar; "
        "prefix: the reply starts as '{\"query\": \"' in the prompt and the query is decoded as free text to its closing "
        "quote (no grammar to apply at each token, four tokens fewer; prompt lookup applies)",
    )


class LLMRerankConfig(_Config):
    """Listwise LLM reranking with a sliding window (`local_rag.llm.rerank`)."""

    candidates: int = Field(20, ge=2, description="top fused hits that are reranked; the rest keep their order")
    window: int = Field(10, ge=2, le=20, description="passages per LLM call")
    step: int = Field(5, ge=1, description="how far the window moves (from the bottom up)")
    passage_tokens: int = Field(96, ge=16, description="each passage is cut to this many tokens")
    shuffle: bool = Field(True, description="present a window's passages in a seeded random order")

    @model_validator(mode="after")
    def _step_below_window(self) -> LLMRerankConfig:
        if self.step >= self.window:
            raise ValueError(f"llm_rerank.step ({self.step}) must be smaller than llm_rerank.window ({self.window})")
        return self


class JudgeConfig(_Config):
    """LLM relevance judging, 0/1/2 per passage (`local_rag.llm.judge`)."""

    candidates: int = Field(10, ge=1, description="top hits that are judged; the rest follow unjudged")
    batch_size: int = Field(5, ge=1, le=20, description="passages per LLM call")
    passage_tokens: int = Field(96, ge=16)
    min_score: int = Field(1, ge=0, le=2, description="judged hits below this score are dropped")


class AgentConfig(_Config):
    """The agentic (ChatR1) answering mode (`local_rag.agent`): the LLM searches, reads, may search again, answers."""

    prompt: str = Field("agent", description="prompt file (package data) with the tag protocol and a worked example")
    max_searches: int = Field(2, ge=0, le=10, description="searches per turn (ChatR1: 2)")
    top_k: int = Field(3, ge=1, le=20, description="passages returned per search (ChatR1: 3)")
    rerank: bool = Field(False, description="cross-encoder rerank each search's candidates (model in `reranker`)")
    candidates: int = Field(20, ge=1, description="hits reranked per search when `rerank` is on")
    max_steps: int = Field(4, ge=1, le=12, description="LLM steps before the answer is forced (searches + corrections)")
    require_search: bool = Field(
        True, description="an answer before any search gets a correction (prompted small models answer from the "
        "history otherwise); off for a ChatR1-trained model, which decides itself",
    )
    step_tokens: int = Field(256, ge=16, description="max new tokens per LLM step")
    passage_tokens: int = Field(160, ge=16, description="tokens per passage shown in <information>")
    history_tokens: int = Field(600, ge=0, description="tokens of conversation history at most")
    agent_turn_tokens: int = Field(120, ge=0, description="tokens per earlier agent turn at most")


class JudgeLLMConfig(LLMConfig):
    """The evaluation judge LLM: `LLMConfig` with the judge's own defaults (a partial override keeps them)."""

    model: str = Field("qwen2.5-coder-1.5b-instruct-q4_k_m", description="a name in models/manifest.json or a .gguf path")
    n_ctx: int = Field(8192, ge=256)
    max_tokens: int = Field(384, ge=1)


class GenEvalConfig(_Config):
    """The offline MTRAG generation scorer (`local_rag.evaluation.generation`): BERTScore encoder, IDK detection and
    the LLM judges. The judge model is set here, apart from the generator (``llm``)."""

    bertscore_model: str = Field(
        "auto", description="auto = deberta-xlarge-mnli (the official encoder) when in models/, else all-MiniLM-L6-v2; "
        "or a name in models/manifest.json or a folder path",
    )
    bertscore_layers: int = Field(0, ge=0, description="hidden layer used; 0 = 40 for deberta-xlarge-mnli, else the last")
    bertscore_batch_size: int = Field(16, ge=1)
    idk_sentence: str = Field(
        "", description="a fixed 'I don't know' answer always detected as declining; empty = generate.idk_answer",
    )
    idk_judge: Literal["rules", "llm"] = Field("rules", description="rules = deterministic detector; llm = judge model")
    llm_judges: bool = Field(True, description="run RL_F and RB_llm with the judge model (off: RB_alg and IDK only)")
    skip_decided: bool = Field(
        True, description="skip the LLM judges where answerability conditioning fixes the score anyway",
    )
    max_claims: int = Field(10, ge=1, le=30, description="RL_F: claims taken from an answer")
    passage_tokens: int = Field(384, ge=32, description="judge prompts: each passage is cut to this many tokens")
    judge: JudgeLLMConfig = Field(default_factory=lambda: JudgeLLMConfig(), description="the judge LLM")


class ServerConfig(_Config):
    """The OpenAI-compatible HTTP server (`local-rag serve`, `local_rag.server`)."""

    # `model_name` is a field: pydantic before 2.10 reserves the whole `model_` prefix and warns on every command
    model_config = ConfigDict(protected_namespaces=())

    host: str = Field("127.0.0.1", description="address to bind; anything beyond loopback needs api_key")
    port: int = Field(8000, ge=0, le=65535, description="TCP port (0 = any free port)")
    api_key: str = Field("", description="bearer token required on /v1/*; empty = no key (loopback only)")
    queue: int = Field(8, ge=0, description="requests that may wait for the one generation slot; past it: 429")
    retry_after_s: int = Field(0, ge=0, description="Retry-After on a 429; 0 = estimated from recent turn times")
    max_body_bytes: int = Field(1_048_576, ge=1024, description="larger request bodies are refused with 413")
    max_message_chars: int = Field(20_000, ge=100, description="longer messages are cut (and the cut noted)")
    max_messages: int = Field(256, ge=1, description="requests with more messages are refused with 400")
    model_name: str = Field("", description="model id listed by /v1/models; empty = llm.model")
    stream_status: bool = Field(
        True, description="streamed replies start with status chunks (\"Searching…\", \"3 sources: …\") before the "
        "answer; a failure after them is an SSE error event, not a JSON error response",
    )
    sources_footer: bool = Field(
        False, description="append a plain-text 'Sources:' list to each answer, for clients that show only the text"
    )
    client_tasks: bool = Field(
        True, description="answer a chat front-end's own background tasks (Open WebUI's '### Task:' requests for a "
        "chat title, tags, follow-up questions) with the model alone, without retrieval: seconds, not a whole turn",
    )
    task_max_tokens: int = Field(200, ge=16, description="tokens a client's background task may write")
    ui: bool = Field(
        True, description="a chat page for the browser at / (one page of the package, nothing fetched from elsewhere; "
        "it asks through /v1/chat/completions, with the API key when the server has one)",
    )
    mcp: bool = Field(
        False, description="also serve MCP (the Model Context Protocol, streamable HTTP) at /mcp, behind the API key: "
        "an assistant on another machine searches and asks as `local-rag mcp` lets one here (the mcp extra)",
    )
    collections: dict[str, list[str]] = Field(
        default_factory=dict, description="named parts of the index, each listed by /v1/models as a model of its own "
        "('<model>:<name>'): a client that picks one asks about those documents only (patterns as --only; "
        "`serve --collection NAME=PATTERN[,PATTERN]`)",
    )
    cors_origins: str = Field(
        "", description="web pages that may call the server from a browser, besides this machine's own "
        "(localhost, any port): comma-separated origins such as http://192.168.1.5:3000, 'null' for a page opened "
        "from a file, '*' for any (needs api_key); other pages are refused with 403",
    )

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: str) -> str:
        return ",".join(parse_origins(value))

    @field_validator("collections")
    @classmethod
    def _collections(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for name, patterns in value.items():
            if not re.fullmatch(r"[\w.-]+", name):
                raise ValueError(f"collection name {name!r}: letters, digits, '.', '-' and '_' only (it becomes part "
                                 "of a model id)")
            if not [p for p in patterns if p.strip()]:
                raise ValueError(f"collection {name!r} names no document pattern")
        return value

    @property
    def origins(self) -> tuple[str, ...]:
        """`cors_origins` as a tuple (`local_rag.origins`)."""
        return tuple(o for o in self.cors_origins.split(",") if o)


class Settings(BaseSettings):
    """All of local-rag's settings. See the module docstring for where values come from."""

    model_config = SettingsConfigDict(
        env_prefix="LOCAL_RAG_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    profile: str = DEFAULT_PROFILE
    models_dir: Path = Field(default_factory=default_models_dir, description="models/ in a checkout, else the user data dir")
    indexes_dir: Path = Field(default_factory=default_indexes_dir, description="indexes/ in a checkout, else the user data dir")
    index: str = Field("default", description="index name under indexes_dir")
    index_lock_timeout_s: float = Field(
        600.0, ge=0, description="a write to an index another process is changing waits this long, then fails"
    )
    offline: bool = Field(True, description="set HF_HUB_OFFLINE and friends: hub libraries never touch the network")
    index_adaptation: bool = Field(
        True, description="ask, chat, search and serve use the re-scorer `train adapt` kept for the index "
        "(indexes/<index>.adapted.yaml); eval and bench never do",
    )
    chunker: ChunkerConfig = Field(default_factory=ChunkerConfig)
    sparse: SparseConfig = Field(default_factory=SparseConfig)
    embedder: EmbedderConfig = Field(default_factory=EmbedderConfig)
    dense: DenseConfig = Field(default_factory=DenseConfig)
    backend: BackendConfig = Field(default_factory=BackendConfig)
    fusion: FusionConfig = Field(default_factory=FusionConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    reranker: RerankerConfig = Field(default_factory=RerankerConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    evidence: EvidenceConfig = Field(default_factory=EvidenceConfig)
    decide: DecideConfig = Field(default_factory=DecideConfig)
    support: SupportConfig = Field(default_factory=SupportConfig)
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)
    rewrite: RewriteConfig = Field(default_factory=RewriteConfig)
    llm_rerank: LLMRerankConfig = Field(default_factory=LLMRerankConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    gen_eval: GenEvalConfig = Field(default_factory=GenEvalConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)

    @field_validator("models_dir", "indexes_dir", mode="before")
    @classmethod
    def _empty_is_default(cls, value: object, info: ValidationInfo) -> object:
        """An empty value (``LOCAL_RAG_MODELS_DIR=`` in a shell or a unit file) means the default folder, as if unset;
        before, it was the current directory, and `index build` wrote ``./<name>`` wherever it ran."""
        if isinstance(value, str) and not value.strip():
            return cls.model_fields[info.field_name or ""].get_default(call_default_factory=True)
        return value

    @field_validator("index", mode="before")
    @classmethod
    def _plain_index_name(cls, value: object) -> object:
        """A folder name under ``indexes_dir``: before, ``--index ../notes`` built an index outside it, ``a/b`` one
        that `index list` and `index delete` never found, ``.notes`` a hidden one; an empty value
        (``LOCAL_RAG_INDEX=``) means the default, as for the folders."""
        if not isinstance(value, str):
            return value
        if not value.strip():
            return cls.model_fields["index"].get_default()
        problem = name_problem(value, "index", "indexes_dir")
        if problem:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _idk_gate_for_its_model(self) -> Settings:
        gate = self.generate
        if gate.idk_gate is not None and gate.idk_gate_model and gate.idk_gate_model != self.llm.model:
            logging.getLogger("local_rag.settings").warning(
                "generate.idk_gate %s was measured with %s, not %s: the IDK gate is off (set generate.idk_gate for "
                "this model, or generate.idk_gate_model to '' to keep it)", gate.idk_gate, gate.idk_gate_model,
                self.llm.model)
            gate.idk_gate = None
        return self

    @property
    def index_dir(self) -> Path:
        return self.indexes_dir / self.index


def _bundled_profiles() -> list[str]:
    folder = resources.files("local_rag") / "profiles"
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def list_profiles() -> list[str]:
    """Names of the bundled profiles and of the user config file's profiles."""
    return sorted(set(_bundled_profiles()) | set(_user_config().get("profiles") or {}))


def read_profile(name: str, _chain: tuple[str, ...] = ()) -> dict[str, Any]:
    """The raw dict of a profile (one with a ``base``: that bundled profile with its changes merged in; a user
    profile's base defaults to `DEFAULT_PROFILE`); `SettingsError` listing the valid names if unknown, or naming the
    loop if bases name each other."""
    if name in _chain:
        raise SettingsError(f"profile {_chain[0]!r}: its bases loop ({' -> '.join((*_chain, name))})")
    user_profiles = _user_config().get("profiles") or {}
    if name in user_profiles and not _chain:
        body = dict(user_profiles[name] or {})
        base = body.pop("base", DEFAULT_PROFILE)
        if base == name or base not in _bundled_profiles():
            raise SettingsError(f"user profile {name!r}: base {base!r} is not a bundled profile "
                                f"({', '.join(_bundled_profiles())})")
        return deep_merge(read_profile(base, (name,)), body)
    if name not in _bundled_profiles():
        raise SettingsError(f"unknown profile {name!r}; valid profiles: {', '.join(list_profiles())}")
    body = _bundled_body(name)
    base = body.pop("base", None)  # a bundled profile may name another as its base (cpu: cpu-qwen + the levers)
    return deep_merge(read_profile(base, (*_chain, name)), body) if base else body


def _bundled_body(name: str) -> dict[str, Any]:
    text = (resources.files("local_rag") / "profiles" / f"{name}.yaml").read_text(encoding="utf-8")
    return dict(yaml.safe_load(text) or {})


def _user_config() -> dict[str, Any]:
    """The user config file's mapping (`local_rag.paths.user_config_file`); {} when there is none."""
    path = user_config_file()
    data = _read_file(path) if path is not None else {}
    if not isinstance(data.get("profiles") or {}, dict):
        raise SettingsError(f"{path}: `profiles` must map profile names to settings")
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """One line: "line 3, column 1: expected the node content, but found '<stream end>'" (PyYAML's own message spans
    five lines, with a caret drawing)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" if mark is not None else problem


def _read_file(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError as exc:
        raise SettingsError(f"settings file not found: {path}") from exc
    except yaml.YAMLError as exc:
        raise SettingsError(f"settings file {path} is not valid YAML/JSON: {_yaml_problem(exc)}") from exc
    except UnicodeDecodeError as exc:
        raise SettingsError(f"settings file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"settings file {path} must hold a mapping, not {type(data).__name__}")
    return data


def dotted(items: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted settings keys as nested overrides.

    Example:
        >>> dotted({"llm.model": "qwen", "generate.passages": 3})
        {'llm': {'model': 'qwen'}, 'generate': {'passages': 3}}
    """
    out: dict[str, Any] = {}
    for key, value in items.items():
        target = out
        *parents, last = key.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
    return out


def deep_merge(*layers: dict[str, Any]) -> dict[str, Any]:
    """Merge dicts left to right; nested dicts merge, everything else is replaced."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = deep_merge(out[key], value)
            else:
                out[key] = value
    return out


def _env_values() -> dict[str, Any]:
    check_names(Settings)
    return read_env(EnvSettingsSource(Settings))


def _validated(merged: dict[str, Any]) -> Settings:
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise SettingsError(f"invalid settings: {describe_value_errors([dict(e) for e in exc.errors()], Settings)}") from exc


def load_settings(
    profile: str | None = None,
    config_file: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    adapted: bool = False,
) -> Settings:
    """Build `Settings` from profile, file, environment and overrides (highest precedence last).

    ``adapted``: also apply the index's adaptation (`local_rag.adaptation`), when ``index_adaptation`` is on, between
    the user config's defaults and the file: what a user sets in a file, a variable or a flag still wins.

    Raises:
        SettingsError: unknown profile, unreadable file, unknown keys or invalid values.
    """
    env = _env_values()
    overrides = overrides or {}
    user = _user_config()
    user_defaults = {k: v for k, v in user.items() if k not in ("profile", "profiles")}
    file_values = _read_file(Path(config_file)) if config_file else {}
    name = (overrides.get("profile") or env.get("profile") or profile or os.environ.get("LOCAL_RAG_PROFILE")
            or file_values.get("profile") or user.get("profile") or DEFAULT_PROFILE)
    layers = [read_profile(name), user_defaults, file_values, env, overrides, {"profile": name}]
    settings = _validated(deep_merge(*layers))
    if adapted and settings.index_adaptation:
        from local_rag.adaptation import adaptation_file, read_adaptation

        layer, _ = read_adaptation(settings.indexes_dir, settings.index, settings.models_dir)
        if layer:
            try:
                settings = _validated(deep_merge(*layers[:2], layer, *layers[2:]))
            except SettingsError as exc:
                raise SettingsError(f"{adaptation_file(settings.indexes_dir, settings.index)}: {exc}") from exc
    from local_rag.device import set_offline

    set_offline(settings.offline)
    return settings

"""The llama.cpp backend (llama-cpp-python), built for this machine by ``scripts/install_llama_cpp.sh``.

- The chat template is the GGUF's own (``tokenizer.chat_template``), rendered by llama-cpp-python's Jinja formatter.
- All layers go to the GPU when the build supports offload and NVML reports enough free VRAM; a part of them when
  only some fit; none otherwise. CPU threads default to what this machine has (``0`` in settings).
- A JSON schema becomes a llama.cpp grammar, so structured output is well-formed by construction.
- Tokens are generated one by one, so the time to the first token (prefill) and the rest (decode) are measured
  exactly, with exact prompt and completion token counts, for every call.
- With ``llm.prompt_lookup``, greedy free-text replies decode by prompt lookup (`local_rag.llm.speculative`): the
  same text, fewer decode passes when the reply copies its passages.
- Each stage's prompt prefix (system text, worked example) is prefilled once, not on every call: the KV state of
  each stage's last call is kept and restored when it shares more with the next prompt than the live cache does
  (`local_rag.llm.kv_cache`, ``llm.prefix_cache``); the reused tokens are recorded as ``LLMCall.cached_tokens``.

Example:
    >>> llm = LlamaCppLLM(settings.llm, settings.models_dir)  # doctest: +SKIP
    >>> llm.run([{"role": "user", "content": "Hi"}], stage="demo").text  # doctest: +SKIP
"""

from __future__ import annotations

import codecs
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from local_rag.device import nvml_gpus
from local_rag.errors import BadInputError, ModelError
from local_rag.llm.base import LLM, Completion, Message, OnToken, Scored
from local_rag.llm.cpu_build import check_installed
from local_rag.llm.kv_cache import PrefixStates
from local_rag.llm.loops import BREAKS, LOOP_CHARS, cut_loop
from local_rag.llm.native import import_llama_cpp
from local_rag.llm.speculative import Drafts, batch_logits, lookup_tokens, lookup_tokens_for
from local_rag.modelstore.gguf_check import check_gguf, resolve_gguf
from local_rag.records import LLMCall
from local_rag.settings import LLMConfig

log = logging.getLogger("local_rag.llm")

_PREFILL_CHUNK = 128  # tokens between two checks of a warm-up's cancel flag (~1.3 s of Qwen2.5-1.5B prefill on 2 cores)
_VRAM_RESERVE = 768 << 20  # CUDA context and compute buffers (the KV cache is counted apart, at the real n_ctx)


def physical_cores() -> int:
    """CPU cores this process may use (physical where known, within its affinity mask)."""
    try:
        import psutil

        physical = psutil.cpu_count(logical=False) or 0
    except ImportError:
        physical = 0
    allowed = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(physical or allowed, allowed))


def pick_threads(n_threads: int, n_threads_batch: int, cores: int | None = None) -> tuple[int, int]:
    """Decode and prompt-processing threads; ``0`` picks for the machine.

    Both use every core. Decoding one token is a pass over the weights; on a small CPU the matrix-vector work,
    not the memory bus, is the limit, so it scales with cores (measured on the quiet 2-core dev machine, Qwen2.5-1.5B
    Q4_K_M: 8.7 tok/s on 1 thread, 14.5 on 2; prefill 53 vs 58 tok/s). On a shared, busy machine llama.cpp's
    spinning threads suffer when another process takes a core: set ``llm.n_threads`` lower there.
    """
    cores = cores or physical_cores()
    return n_threads or cores, n_threads_batch or cores


def pick_gpu_layers(requested: int, supports_offload: bool, model_bytes: int, n_layers: int,
                    free_vram: int | None, kv_bytes: int = 0) -> int:
    """Layers to offload: all (``-1``) when the model and its KV cache fit in free VRAM, a proportional share when
    only part fits (each offloaded layer takes its weights and its share of the KV cache to the GPU).

    Args:
        requested: the setting; ``-1`` = as many as fit, ``0`` = CPU only, ``n`` = at most n.
        supports_offload: whether this llama.cpp build can offload (a CUDA/Metal/Vulkan build).
        model_bytes: size of the GGUF file(s).
        n_layers: the model's block count.
        free_vram: free bytes on the GPU per NVML, ``None`` without a GPU (read after the encoders and the FAISS
            index took theirs: `local_rag.pipeline.Pipeline.llm` loads them first).
        kv_bytes: the KV cache of all layers at the context actually used (f16), 0 when unknown.
    """
    if requested == 0 or not supports_offload or not free_vram:
        return 0
    usable = free_vram - _VRAM_RESERVE
    if usable <= 0:
        return 0
    need = model_bytes + max(kv_bytes, 0)
    if need <= usable:
        return requested if requested > 0 else -1
    fit = int(n_layers * usable / need) if n_layers else 0
    return min(fit, requested) if requested > 0 else fit


class LlamaCppLLM(LLM):
    """A GGUF model run by llama.cpp. See the module docstring."""

    def __init__(self, config: LLMConfig, models_dir: str | Path = "models") -> None:
        super().__init__()
        self.config = config
        path = resolve_gguf(config.model, models_dir)
        info = check_gguf(path)
        if not info.chat_template:
            raise ModelError(f"{path} has no chat template in its GGUF metadata; use an instruct model")
        check_installed()  # a build for another CPU would stop this process with SIGILL inside llama.cpp
        llama_cpp = import_llama_cpp()
        model_bytes = sum(p.stat().st_size for p in path.parent.glob("*.gguf")) if info.split_count > 1 \
            else path.stat().st_size
        self.n_ctx = config.n_ctx
        if info.context_length and self.n_ctx > info.context_length:
            log.warning("n_ctx %d exceeds %s's trained context %d; using %d", self.n_ctx, info.name,
                        info.context_length, info.context_length)
            self.n_ctx = info.context_length
        gpus = nvml_gpus()
        supports_offload = bool(llama_cpp.llama_supports_gpu_offload())
        kv = 0
        if gpus and supports_offload:
            from local_rag.modelstore.shapes import gguf_shape

            kv = gguf_shape(path).kv_bytes(self.n_ctx) or 0
        self.n_gpu_layers = pick_gpu_layers(
            config.n_gpu_layers, supports_offload, model_bytes, info.block_count,
            int(gpus[0]["free"]) if gpus else None, kv,  # type: ignore[call-overload]
        )
        if gpus and not supports_offload:
            log.warning("a GPU is visible but this llama.cpp build cannot offload (built without CUDA: nvcc was "
                        "missing?): the LLM runs on the CPU; rebuild with scripts/install_llama_cpp.sh")
        self.n_threads, self.n_threads_batch = pick_threads(config.n_threads, config.n_threads_batch)
        self.max_tokens = config.max_tokens
        self.path = path
        self.model_name = info.name or path.stem
        lookup = config.prompt_lookup
        if lookup < 0:
            from local_rag.llm.cpu_build import build_features

            lookup = lookup_tokens_for(lookup, build_features(llama_cpp.llama_print_system_info().decode()))
        self.prompt_lookup = lookup
        self._drafts = Drafts(lookup, config.prompt_lookup_ngram, config.prompt_lookup_min_ngram) if lookup else None
        try:
            self._llama = llama_cpp.Llama(
                model_path=str(path), n_ctx=self.n_ctx, n_batch=min(config.n_batch, self.n_ctx),
                n_threads=self.n_threads, n_threads_batch=self.n_threads_batch, n_gpu_layers=self.n_gpu_layers,
                seed=config.seed, flash_attn=config.flash_attn, verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"llama.cpp could not load {path} ({exc}): corrupt or unsupported GGUF") from exc
        self._prefix = PrefixStates(slots=config.prefix_cache)
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        model = self._llama._model
        eos, bos = self._llama.token_eos(), self._llama.token_bos()
        self._formatter = Jinja2ChatFormatter(
            template=info.chat_template,
            eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "",
        )
        self._vocab = model.vocab
        self._is_eog = llama_cpp.llama_vocab_is_eog
        self._grammars: dict[str, Any] = {}
        log.info("loaded %s: n_ctx=%d, gpu layers=%d, threads=%d/%d, prompt lookup %d", self.model_name, self.n_ctx,
                 self.n_gpu_layers, self.n_threads, self.n_threads_batch, self.prompt_lookup)

    def forget_prompts(self) -> None:
        self._prefix.clear()
        self._llama.reset()  # n_tokens = 0: nothing of the live KV cache is reused by the next call

    def prefill(self, messages: list[Message], *, stage: str, upto: str = "",
                cancelled: Callable[[], bool] | None = None) -> int:
        """See `LLM.prefill`. The cut text's last token is left out (the full prompt may tokenize it with the next
        characters as one token), and the prompt is prefilled ``_PREFILL_CHUNK`` tokens at a time, checking
        ``cancelled`` between chunks; the state is saved under ``stage`` like a call's (`local_rag.llm.kv_cache`)."""
        if not messages or self._prefix.slots <= 0:
            return 0
        llama = self._llama
        prompt = self.render(messages)
        cut = prompt.find(upto) if upto else -1
        tokens = llama.tokenize((prompt[:cut] if cut >= 0 else prompt).encode("utf-8"), add_bos=False, special=True)
        tokens = tokens[: min(len(tokens) - 1, self.n_ctx - self.max_tokens)]
        if len(tokens) < 2:
            return 0
        llama.n_tokens = self._prefix.before(llama, tokens)  # the prefix the live (or a restored) cache holds
        while llama.n_tokens < len(tokens) and not (cancelled and cancelled()):
            llama.eval(tokens[llama.n_tokens : llama.n_tokens + _PREFILL_CHUNK])  # appends after n_tokens
        llama._requires_eval = True  # the next call evaluates at least one token: its logits are its own
        if llama.n_tokens:
            self._prefix.after(llama, stage)
        return int(llama.n_tokens)

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0

    def render(self, messages: list[Message]) -> str:
        """The prompt text for ``messages`` under the model's chat template (generation prompt appended). A last
        ``assistant`` message is the start of the reply: its text follows the generation prompt (`LLM.complete`)."""
        if len(messages) > 1 and messages[-1]["role"] == "assistant":
            return self._formatter(messages=messages[:-1]).prompt + messages[-1]["content"]  # type: ignore[arg-type]
        return self._formatter(messages=messages).prompt  # type: ignore[arg-type]

    def continuation_logprobs(self, messages: list[Message], continuation: str, *, stage: str,
                              n_tokens: int = 4) -> Scored | None:
        """See `LLM.continuation_logprobs`. One prefill of the prompt (the part the KV cache does not hold; the next
        call with this prompt reuses it, re-evaluating one token) and one batched pass over the continuation's first
        ``n_tokens - 1`` tokens: the first token's log-probability comes from the prompt's own logits."""
        import numpy as np

        if not messages:
            raise BadInputError(f"{stage}: no messages to score")
        llama = self._llama
        start = time.perf_counter()
        prompt = self.render(messages)
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        follow = llama.tokenize(continuation.encode("utf-8"), add_bos=False, special=False)[: max(0, n_tokens)]
        if len(tokens) + len(follow) > self.n_ctx:
            raise BadInputError(f"{stage}: the prompt has {len(tokens)} tokens, the context {self.n_ctx}: no room to "
                                "score a reply (raise llm.n_ctx or lower the stage's passage/history budget)")
        cached = self._prefix.before(llama, tokens)  # the prefix the live (or a restored) cache holds
        llama.n_tokens = min(cached, len(tokens) - 1)  # at least the last prompt token is evaluated: its logits
        llama.eval(tokens[llama.n_tokens :])
        n_vocab = llama.n_vocab()
        rows = [np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(n_vocab,)).astype(np.float64)]
        if len(follow) > 1:  # the continuation's tokens in one pass, logits for each (KV cells past n_tokens)
            rows += list(batch_logits(llama, follow[:-1], llama.n_tokens).astype(np.float64))
            llama._ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)  # the live cache holds the prompt alone again
        llama._requires_eval = True  # the live logits are not the prompt's: the next call evaluates a token first
        logprobs = []
        for row, token in zip(rows, follow, strict=False):
            top = row.max()
            logprobs.append(float(row[token] - top - np.log(np.exp(row - top).sum())))
        took = time.perf_counter() - start
        call = LLMCall(stage=stage, prompt_tokens=len(tokens), completion_tokens=0, prefill_s=took, decode_s=0.0,
                       total_s=took, prompt=prompt, response=continuation, cached_tokens=min(cached, len(tokens)))
        return Scored(logprobs, call)

    def _grammar(self, schema: dict[str, Any] | None) -> Any:
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def complete(
        self,
        messages: list[Message],
        *,
        stage: str,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        on_token: OnToken | None = None,
        stop: list[str] | None = None,
    ) -> Completion:
        if not messages:
            raise BadInputError(f"{stage}: no messages to send to the LLM")
        prompt = self.render(messages)
        tokens = self._llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        limit = max_tokens or self.max_tokens
        room = self.n_ctx - len(tokens)
        if room < min(limit, 16):
            raise BadInputError(
                f"{stage}: the prompt has {len(tokens)} tokens, the context {self.n_ctx}: no room to answer "
                "(raise llm.n_ctx or lower the stage's passage/history budget)"
            )
        limit = min(limit, room)
        self._llama.set_seed(self.config.seed)
        out: list[int] = []
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character may span tokens
        start = time.perf_counter()
        first = None
        stops = [s for s in stop or [] if s]
        cached = self._prefix.before(self._llama, tokens)
        # prompt lookup verifies drafts greedily: only for greedy free text (a grammar constrains each token)
        drafts = self._drafts.reset() if self._drafts is not None and schema is None and not self.config.temperature else None
        repeats = self.config.loop_repeats if schema is None else 0  # a grammar's output is left to the grammar
        keep = max(256, repeats * LOOP_CHARS[1])
        tail = ""  # the last characters generated: a stop string that spans tokens, or a loop
        stopped = False
        looped = False
        stream = lookup_tokens(self._llama, tokens, drafts) if drafts is not None else self._llama.generate(
            tokens, temp=self.config.temperature, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.0,
            grammar=self._grammar(schema),
        )
        for token in stream:
            if first is None:
                first = time.perf_counter()
            if self._is_eog(self._vocab, token):
                break
            piece = ""
            if on_token is not None or stops or repeats:  # one incremental decode serves streaming and the checks
                piece = decoder.decode(self._llama.detokenize([token], prev_tokens=out))
            if piece and on_token is not None:
                on_token(piece)
            out.append(token)
            if stops or repeats:
                tail = (tail + piece)[-keep:]
                if stops and any(s in tail for s in stops):
                    stopped = True
                    break
                # a loop is looked for at a break (where copies end) or every 16 tokens: the check costs ~0.4 ms
                if repeats and (any(c in piece for c in BREAKS) or len(out) % 16 == 0):
                    if cut_loop(tail, repeats) is not None:
                        looped = True
                        break
            if len(out) >= limit:
                break
        end = time.perf_counter()
        first = first or end
        self._prefix.after(self._llama, stage)
        text = self._llama.detokenize(out).decode("utf-8", errors="replace")
        if looped:
            kept = cut_loop(text, repeats)
            log.info("%s: the reply fell into a loop; %s", stage, "one copy kept" if kept is not None else "not cut")
            text = kept if kept is not None else text
        text = text.strip()
        if stopped:  # cut after the first stop string (the last token may run past it), keeping the stop string
            cut = min((text.find(s) + len(s) for s in stops if s in text), default=len(text))
            text = text[:cut]
        call = LLMCall(
            stage=stage, prompt_tokens=len(tokens), completion_tokens=len(out), prefill_s=first - start,
            decode_s=end - first, total_s=end - start, prompt=prompt, response=text,
            cached_tokens=min(cached, len(tokens)),
            **(drafts.figures() if drafts is not None else {}),
        )
        return Completion(text, call)

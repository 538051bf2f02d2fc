"""Measurements of the speed levers (issue 26) that need no timing: what each lever removes, and what it risks.

- `standalone_figures`: how often the rule of `local_rag.llm.standalone` skips the rewrite on follow-up turns, and
  how often a skipped turn needed one (label from the organizers' rewrites; see that module).
- `compression_figures`: evidence tokens before and after sentence selection on MTRAG tasks, with two quality
  proxies: the share of the reference answer's content words still in the evidence, and the share of "support
  sentences" (for each reference sentence, the passage sentence closest to it by ROUGE-L) that survive selection.
- `call_figures`: prompt, cached (KV reuse) and drafted/accepted (prompt lookup) tokens of recorded `LLMCall`s.

Everything learned (the rule's choice) is chosen on MTRAG train conversations; figures are given per split.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any  # Any: MTRAG task records and the JSON figures

from local_rag.evidence.compress import Scorer, select_sentences
from local_rag.llm.base import LLM, Completion, Message, OnToken
from local_rag.llm.standalone import content_words, is_standalone
from local_rag.mtrag import DOMAINS, parse_conversation, read_jsonl, strip_speakers, task_domain
from local_rag.records import Conversation, Hit, LLMCall, Query
from local_rag.retrieve.scope import Scope
from local_rag.text import split_sentences

if TYPE_CHECKING:
    from local_rag.pipeline import Pipeline

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "mtrag"


def split_ids(name: str, root: Path = SHARED) -> set[str]:
    """Conversation ids of the ``train`` or ``test`` split."""
    path = root / "splits" / f"mtrag_{name}_conversations.txt"
    return {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def split_tasks(tasks: Iterable[dict[str, Any]], name: str, root: Path = SHARED) -> list[dict[str, Any]]:
    ids = split_ids(name, root)
    return [t for t in tasks if t["conversation_id"] in ids]


def reference_rewrites(root: Path = SHARED) -> dict[str, str]:
    """The organizers' rewrite of each retrieval task, by task id (answerable turns of the four domains)."""
    out: dict[str, str] = {}
    for domain in DOMAINS:
        for record in read_jsonl(root / "retrieval_tasks" / domain / f"{domain}_rewrite.jsonl"):
            out[str(record["_id"])] = strip_speakers(str(record["text"]))
    return out


def _stems(words: Iterable[str]) -> set[str]:
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words}


def needs_rewrite(task: dict[str, Any], rewrite: str) -> bool:
    """The label: the reference rewrite adds a content word of an earlier turn that the last turn lacks."""
    turns = parse_conversation(task["input"], where=str(task["task_id"])).turns
    last = max(i for i, t in enumerate(turns) if t.speaker == "user")
    earlier = _stems(w for t in turns[:last] for w in content_words(t.text))
    added = _stems(content_words(rewrite)) - _stems(content_words(turns[last].text))
    return bool(added & earlier)


def standalone_figures(tasks: list[dict[str, Any]], rewrites: dict[str, str], min_content_words: int = 3) -> dict[str, Any]:
    """Skip rate and errors of the rule on follow-up turns that have a reference rewrite."""
    rows = []
    for task in tasks:
        conv = parse_conversation(task["input"], where=str(task["task_id"]))
        users = conv.user_turns
        if len(users) < 2 or task["task_id"] not in rewrites:
            continue
        rows.append((is_standalone(users[-1], users[:-1], min_content_words), needs_rewrite(task, rewrites[task["task_id"]])))
    n = len(rows)
    skipped = [need for skip, need in rows if skip]
    needed = sum(need for _, need in rows)
    return {
        "follow_up_turns": n, "need_rewrite": needed, "need_rewrite_share": round(needed / n, 3) if n else None,
        "skipped": len(skipped), "skip_share": round(len(skipped) / n, 3) if n else None,
        "skipped_but_needed": sum(skipped),
        "skip_precision": round(1 - sum(skipped) / len(skipped), 3) if skipped else None,
        "accuracy": round(sum((not skip) == need for skip, need in rows) / n, 3) if n else None,
    }


def support_sentences(reference: str, sentences: list[str], floor: float = 0.2) -> set[int]:
    """Indexes of the sentences closest (ROUGE-L) to each sentence of the reference answer, when at least ``floor``."""
    from local_rag.evaluation.generation.algorithmic import rouge_l

    out = set()
    for ref in split_sentences(reference):
        scores = [rouge_l(s, ref) for s in sentences]
        if scores and max(scores) >= floor:
            out.add(max(range(len(scores)), key=scores.__getitem__))
    return out


def coverage(reference: str, evidence: str) -> float | None:
    """Share of the reference answer's content words found in the evidence (None without content words)."""
    ref = _stems(content_words(reference))
    return len(ref & _stems(content_words(evidence))) / len(ref) if ref else None


def task_question(task: dict[str, Any], rewrites: dict[str, str], use_rewrite: bool) -> str:
    conv = parse_conversation(task["input"], where=str(task["task_id"]))
    if use_rewrite and task["task_id"] in rewrites:
        return rewrites[task["task_id"]]
    return conv.last_user_turn


def gold_hits(task: dict[str, Any]) -> list[Hit]:
    return [Hit(str(c.get("document_id", "")), 1.0, title=str(c.get("title", "")), text=str(c.get("text", "")))
            for c in task.get("contexts", [])]


def cached_scorer(score: Scorer) -> tuple[Scorer, dict[tuple[str, str], float]]:
    """A scorer that remembers (question, text) scores, so several budgets cost one scoring pass."""
    memo: dict[tuple[str, str], float] = {}

    def scorer(question: str, texts: list[str]) -> list[float]:
        missing = [t for t in dict.fromkeys(texts) if (question, t) not in memo]
        if missing:
            for t, v in zip(missing, score(question, missing), strict=True):
                memo[(question, t)] = float(v)
        return [memo[(question, t)] for t in texts]

    return scorer, memo


def compression_figures(tasks: list[dict[str, Any]], budgets: Sequence[int], score: Scorer, count: Callable[[str], int],
                        questions: Callable[[dict[str, Any]], str], passages: Callable[[dict[str, Any]], list[Hit]],
                        passage_tokens: int = 300, join_wrapped: bool = False) -> list[dict[str, Any]]:
    """Per budget (0 = no compression: every passage cut to ``passage_tokens`` as the generator does): evidence
    tokens, coverage of the reference, and support sentences kept, averaged over answerable tasks with a reference
    (``join_wrapped``: `evidence.join_wrapped` for the selection)."""
    from local_rag.llm.budget import truncate

    scorer, _ = cached_scorer(score)
    per_budget: dict[int, list[dict[str, float]]] = {b: [] for b in [0, *budgets]}
    for task in tasks:
        hits = passages(task)
        targets = [t.get("text", "") for t in task.get("targets", []) if t.get("text")]
        if not hits or not targets or "UNANSWERABLE" in task.get("answerability", []):
            continue
        reference = targets[0]
        question = questions(task)
        cut = [Hit(**{**h.to_json(), "text": truncate(" ".join(h.text.split()), passage_tokens, count)}) for h in hits]
        full_text = "\n".join(f"{h.title}: {h.text}" for h in cut)
        sentences = [s for h in cut for s in split_sentences(h.text)]
        support = {sentences[i] for i in support_sentences(reference, sentences)}
        base = {"tokens": float(sum(count(f"{h.title}: {h.text}") + 6 for h in cut)), "coverage": coverage(reference, full_text) or 0.0,
                "support": 1.0 if support else float("nan")}
        per_budget[0].append(base)
        for budget in budgets:
            sel = select_sentences(question, hits, scorer, budget, count, join_wrapped=join_wrapped)
            text = "\n".join(f"{h.title}: {h.text}" for h in sel.hits)
            kept = sum(1 for s in support if s in text) / len(support) if support else float("nan")
            per_budget[budget].append({"tokens": float(sel.tokens_after), "coverage": coverage(reference, text) or 0.0,
                                       "support": kept})
    rows = []
    for budget, items in per_budget.items():
        if not items:
            continue
        shares = [i["support"] for i in items if i["support"] == i["support"]]  # NaN: no support sentence
        tokens = [i["tokens"] for i in items]
        rows.append({
            "budget": budget or "none (each passage cut to passage_tokens)", "tasks": len(items),
            "tokens_mean": round(statistics.mean(tokens), 1), "tokens_p50": round(statistics.median(tokens), 1),
            "coverage_mean": round(statistics.mean(i["coverage"] for i in items), 3),
            "support_kept_mean": round(statistics.mean(shares), 3) if shares else None,
        })
    return rows


def call_figures(calls: Iterable[LLMCall]) -> dict[str, Any]:
    """Prompt, cached and new prompt tokens, decode speed and prompt-lookup figures of some calls."""
    calls = list(calls)
    if not calls:
        return {"calls": 0}
    prompt = sum(c.prompt_tokens for c in calls)
    cached = sum(c.cached_tokens for c in calls)
    generated = sum(c.completion_tokens for c in calls)
    decode_s = sum(c.decode_s for c in calls)
    return {
        "calls": len(calls), "prompt_tokens": prompt, "cached_tokens": cached, "new_prompt_tokens": prompt - cached,
        "kv_hit_rate": round(cached / prompt, 3) if prompt else None,
        "completion_tokens": generated, "decode_tok_s": round(generated / decode_s, 2) if decode_s else None,
        "prefill_s": round(sum(c.prefill_s for c in calls), 2), "decode_s": round(decode_s, 2),
        "drafted_tokens": sum(c.drafted_tokens for c in calls), "accepted_tokens": sum(c.accepted_tokens for c in calls),
    }


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")



# -- the ablation runner: one configuration over MTRAG tasks, turn by turn, resumable ----------------------------

class GoldRetriever:
    """Task B: "retrieval" returns the task's reference passages (set ``hits`` before each turn)."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.last_timings: dict[str, float] = {}

    def search(self, queries: Sequence[Query], top_k: int | None = None, scope: Scope | None = None) -> list[Hit]:
        hits = [h for h in self.hits if not scope or scope.matches(h.doc_id)]
        return [Hit(**{**h.to_json(), "rank": i}) for i, h in enumerate(hits[:top_k], 1)]


def conversation_order(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tasks grouped by conversation, turns in order (so a conversation's turns follow each other, as in a chat)."""
    return sorted(tasks, key=lambda t: (t["conversation_id"], int(t.get("turn", 0))))


def run_turns(pipeline: Pipeline, tasks: list[dict[str, Any]], out: Path, config: str, gold: GoldRetriever | None = None,
              progress: bool = True) -> list[dict[str, Any]]:
    """Answer ``tasks`` in order with ``pipeline``, appending one JSON line per turn to ``out`` (turns already there
    are skipped: the run resumes). Returns every row of ``out``."""
    import time

    from local_rag.evaluation.generation.algorithmic import rouge_l
    from local_rag.mtrag import load_done

    done = load_done(out) if out.exists() else {}
    todo = [t for t in tasks if t["task_id"] not in done]
    out.parent.mkdir(parents=True, exist_ok=True)
    for i, task in enumerate(todo, 1):
        conversation = parse_conversation(task["input"], where=str(task["task_id"]))
        if gold is not None:
            gold.hits = gold_hits(task)
        # between turns, as a chat does while the user types (`Pipeline.warm`, on with ``pipeline.warm``): not in the turn's time
        warmed = pipeline.warm(Conversation(conversation.turns[:-1], conversation.id))
        marks: dict[str, float] = {}
        started = time.perf_counter()

        def on_status(line: str, marks: dict[str, float] = marks, started: float = started) -> None:
            if not line.startswith("Searching"):
                marks.setdefault("status_s", time.perf_counter() - started)

        def on_token(piece: str, marks: dict[str, float] = marks, started: float = started) -> None:
            marks.setdefault("first_token_s", time.perf_counter() - started)

        result = pipeline.answer(conversation, on_token=on_token, on_status=on_status)
        wall = time.perf_counter() - started
        target = next((t.get("text", "") for t in task.get("targets", []) if t.get("text")), "")
        row = {
            "task_id": task["task_id"], "config": config, "domain": task_domain(task),
            "answerability": (task.get("answerability") or [""])[0], "kind": result.answer.kind,
            "answer": result.answer.text, "rouge_l": round(rouge_l(result.answer.text, target), 4) if target else None,
            "wall_s": round(wall, 3), "ttft_s": round(marks.get("first_token_s", wall), 3),
            "status_s": round(marks.get("status_s", wall), 3),
            "timings_s": {k: round(v, 3) for k, v in result.timings.items()},
            "calls": [{k: v for k, v in c.to_json().items() if k not in ("prompt", "response")} for c in result.llm_calls],
            "trace": result.trace,
        }
        if warmed:
            row["warm"] = [w.to_json() for w in warmed]
        with out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        done[task["task_id"]] = row
        if progress:
            print(f"[{config} {i}/{len(todo)}] {task['task_id']} {row['kind']} {wall:.1f}s ttft {row['ttft_s']:.1f}s "
                  f"prompt {sum(c['prompt_tokens'] for c in row['calls'])}", flush=True)
    return [done[t["task_id"]] for t in tasks if t["task_id"] in done]


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Turn p50/p95, TTFT, prompt tokens, decode speed, KV reuse, prompt lookup and ROUGE-L of a configuration."""
    from local_rag.evaluation.retrieval import percentile

    if not rows:
        return {"turns": 0}
    calls = [LLMCall(**{**c, "prompt": "", "response": ""}) for r in rows for c in r["calls"]]
    gen = [c for c in calls if c.stage == "generate"]
    walls = [r["wall_s"] for r in rows]
    ttft = [r["ttft_s"] for r in rows]
    rouge = [r["rouge_l"] for r in rows if r["rouge_l"] is not None and r["answerability"] != "UNANSWERABLE"]
    return {
        "turns": len(rows), "turn_p50_s": round(percentile(walls, 0.5), 2), "turn_p95_s": round(percentile(walls, 0.95), 2),
        "ttft_p50_s": round(percentile(ttft, 0.5), 2), "status_p50_s": round(percentile([r["status_s"] for r in rows], 0.5), 2),
        "llm_calls_per_turn": round(len(calls) / len(rows), 2),
        "rewrite_calls": sum(c.stage == "rewrite" for c in calls),
        "generate_prompt_tokens_mean": round(statistics.mean(c.prompt_tokens for c in gen), 1) if gen else None,
        "all": call_figures(calls), "generate": call_figures(gen),
        "rouge_l_mean": round(statistics.mean(rouge), 4) if rouge else None,
        "idk_share": round(sum(r["kind"] == "idk" for r in rows) / len(rows), 3),
        **warm_figures(rows),
    }


def warm_figures(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The prefill between turns (`local_rag.llm.warm`) of rows that warmed: its time (p50, p95) and tokens (mean), and
    the time the first warm-up took to load the stages (``load_s``), apart."""
    from local_rag.evaluation.retrieval import percentile

    warm = [[w for w in r["warm"] if w["stage"] != "load"] for r in rows if r.get("warm")]
    if not warm:
        return {}
    seconds = [sum(w["seconds"] for w in ws) for ws in warm]
    load = [w["seconds"] for r in rows for w in r.get("warm", []) if w["stage"] == "load"]
    return {"warm_p50_s": round(percentile(seconds, 0.5), 2), "warm_p95_s": round(percentile(seconds, 0.95), 2),
            "warm_tokens_mean": round(statistics.mean(sum(w["tokens"] for w in ws) for ws in warm), 1),
            **({"load_s": round(sum(load), 2)} if load else {})}


# -- prompts without generation: what the KV cache would reuse, exactly, at the cost of a tokenizer --------------

class DryRun(LLM):
    """An `LLM` that renders and tokenizes each prompt with the real model but generates nothing: each call
    returns ``reply(stage)`` and records the prompt tokens and the prefix the KV cache would reuse (the longest
    common token prefix with the live cache or a saved state per stage, as `local_rag.llm.kv_cache.PrefixStates`
    restores it). Used to measure prompt sizes and KV hit rates on every test turn without hours of decoding."""

    def __init__(self, llm: Any, reply: Callable[[str], str], slots: int = 4) -> None:
        """``llm``: the llama.cpp backend (Any: its ``render`` and llama-cpp-python's ``Llama`` are not on `LLM`)."""
        from local_rag.llm.kv_cache import PrefixStates

        super().__init__()
        self.real = llm
        self.n_ctx = llm.n_ctx
        self.max_tokens = llm.max_tokens
        self.reply = reply
        self.states = PrefixStates(slots=slots)
        self.live: list[int] = []

    def count_tokens(self, text: str) -> int:
        return int(self.real.count_tokens(text))

    def forget_prompts(self) -> None:
        self.states.clear()
        self.live = []

    def complete(self, messages: list[Message], *, stage: str, schema: dict[str, Any] | None = None,
                 max_tokens: int | None = None, on_token: OnToken | None = None, stop: list[str] | None = None) -> Completion:
        from local_rag.llm.kv_cache import SavedState, common_prefix

        prompt = self.real.render(messages)
        tokens = self.real._llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        live = common_prefix(self.live, tokens)
        best = self.states.best(tokens)
        reused = best[1] if best is not None and best[1] >= live + self.states.min_gain else live
        self.live = list(tokens)
        self.states.put(stage, SavedState(list(tokens), None, 0))
        text = self.reply(stage)
        return Completion(text, LLMCall(stage, len(tokens), 0, 0.0, 0.0, 0.0, prompt, text, cached_tokens=reused))

"""Issue 24, session 26: does the generator's own probability of declining tell UNANSWERABLE turns?

For each task of session 23's drafts (`docs/benchmarks/decider-draft/gen-{un,test}-cpu/answers.jsonl`: the 161
MTRAG-UN development tasks and the 52-task test subset, with the 5 passages each turn retrieved), the generation
prompt of the profile is rebuilt (the conversation, the passages compressed to the evidence budget against the last
user turn, `Generator.messages`), and the LLM scores its fixed decline sentence as the start of its reply: the mean
log-probability of its first `--tokens` tokens (teacher-forced: one prefill, then one decode step a token; nothing
generated). P(IDK) against the gold class: ROC AUC of UNANSWERABLE against ANSWERABLE + PARTIAL, per set, beside the
decider's out-of-fold P(decline) where given (`--decider`: a decider report's predictions.jsonl) and their sum of
ranks. Resumable (`--out` is appended to). No learning: nothing is fitted, so no split rule applies beyond reporting
each set on its own.

    .venv/bin/python docs/benchmarks/decider-pidk/pidk.py --profile cpu-fast --out docs/benchmarks/decider-pidk/pidk-cpu-fast.jsonl

Session 27: ``--method gate`` (the default now) scores with the pipeline's own ``LLM.score``, the code of
``generate.idk_gate``; session 26's files were written with ``--method steps``. ``--run`` scores the tasks of an
eval-generation run (the 20 judged Task C test tasks) on the chunks its generator saw.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numpy as np

from local_rag.embed import load_embedder
from local_rag.evaluation.generation.official import answerability
from local_rag.evidence.compress import Compressor
from local_rag.llm import load_llm
from local_rag.llm.generate import Generator
from local_rag.mtrag import parse_conversation, read_jsonl, task_domain
from local_rag.records import Hit
from local_rag.settings import load_settings

HERE = Path(__file__).parent
DRAFTS = HERE.parent / "decider-draft"


def passages(mtrag: Path, ids: set[str]) -> dict[str, dict]:
    """``{document_id: {title, text}}`` for ``ids`` from the pool corpora and MTRAG-UN's extra passages."""
    out: dict[str, dict] = {}
    files = sorted((mtrag / "corpora" / "pool").glob("*.jsonl")) + sorted((mtrag / "mtragun-dev" / "corpora" / "extra").glob("*.jsonl"))
    for f in files:
        with f.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row.get("_id") in ids:
                    out[row["_id"]] = row
    return out


def auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 3)


def split_auc(values: list[float], positive: list[bool]) -> float | None:
    return auc([v for v, g in zip(values, positive, strict=True) if g], [v for v, g in zip(values, positive, strict=True) if not g])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="cpu-fast")
    ap.add_argument("--mtrag", type=Path, default=Path("../shared/mtrag"))
    ap.add_argument("--tokens", type=int, default=4, help="first tokens of the decline sentence scored")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--decider", type=Path, help="a decider's predictions.jsonl (task_id, p.decline) to set beside")
    ap.add_argument("--limit", type=int, default=0, help="only the first N tasks (MTRAG-UN's come first)")
    ap.add_argument("--sets", default="un,test", help="un (MTRAG-UN dev), test (the MTRAG test subset), or both")
    ap.add_argument("--method", choices=["gate", "steps"], default="gate",
                    help="gate: the pipeline's own scoring (LLM.score: the prompt's logits and one batched pass over the "
                         "sentence's tokens, as generate.idk_gate does; session 27), from a cold cache, then once more "
                         "warm; steps: one decode step a token (session 26's files)")
    ap.add_argument("--run", type=Path, help="score the tasks of this eval-generation run instead (its predictions.jsonl, "
                    "contexts with their texts: the chunks the generator saw), as set 'run'")
    args = ap.parse_args()

    settings = load_settings(args.profile)
    tasks = {t["task_id"]: (t, "un") for t in read_jsonl(args.mtrag / "mtragun-dev" / "generation_tasks" / "mtragun_dev_tasks.jsonl")}
    tasks |= {t["task_id"]: (t, "test") for t in read_jsonl(args.mtrag / "generation_tasks" / "mtrag_tasks.jsonl")
              if t["task_id"] not in tasks}
    if args.run:
        rows = [(r, "run") for r in read_jsonl(args.run)]
    else:
        rows = [(r, "un") for r in read_jsonl(DRAFTS / "gen-un-cpu" / "answers.jsonl")]
        rows += [(r, "test") for r in read_jsonl(DRAFTS / "gen-test-cpu" / "answers.jsonl")]
        rows = [(r, s) for r, s in rows if s in args.sets.split(",")]
    if args.limit:
        rows = rows[: args.limit]
    done = {json.loads(line)["task_id"] for line in args.out.open()} if args.out.exists() else set()
    todo = [(r, s) for r, s in rows if r["task_id"] not in done]
    if todo:
        texts = {} if args.run else passages(args.mtrag, {c["document_id"] for r, _ in todo for c in r["contexts"]})
        llm = load_llm(settings.llm, settings.models_dir)
        generator = Generator(llm, settings.generate)
        embedder = load_embedder(settings.embedder, settings.models_dir)
        compressor = Compressor(settings.evidence, embedder=lambda: embedder)
        llama = llm._llama  # type: ignore[attr-defined]
        idk = llama.tokenize(settings.generate.idk_answer.encode(), add_bos=False, special=False)[: args.tokens]
        n_vocab = llama.n_vocab()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a", encoding="utf-8") as fh:
            for i, (row, where) in enumerate(todo, 1):
                task, _ = tasks[row["task_id"]]
                started = time.perf_counter()
                conversation = parse_conversation(task["input"])
                hits, mismatched = [], 0
                for c in row["contexts"][: settings.generate.passages]:
                    p = c if args.run else texts.get(c["document_id"])
                    if p is None:
                        continue
                    mismatched += "text_sha256" in c and hashlib.sha256(p["text"].encode()).hexdigest() != c["text_sha256"]
                    hits.append(Hit(c["document_id"], float(c.get("score") or 0.0), title=p.get("title", ""), text=p["text"]))
                evidence = compressor.select(conversation.last_user_turn, hits, llm.count_tokens).hits if hits and settings.evidence.compress else hits
                messages = generator.messages(conversation, evidence)
                prompt = llm.render(messages)  # type: ignore[attr-defined]
                tokens = llama.tokenize(prompt.encode(), add_bos=False, special=True)
                llm.forget_prompts()
                warm = None
                if args.method == "gate":
                    logp = llm.score(messages, settings.generate.idk_answer, stage="idk-gate", n_tokens=args.tokens) or []
                    warm = llm.score(messages, settings.generate.idk_answer, stage="idk-gate", n_tokens=args.tokens) or []
                else:
                    logp = []
                    llama.eval(tokens)
                    for t in idk:
                        logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(n_vocab,)).astype(np.float64)
                        logits -= logits.max()
                        logp.append(float(logits[t] - np.log(np.exp(logits).sum())))
                        llama.eval([t])
                out = {"task_id": row["task_id"], "set": where, "gold": answerability(task), "domain": task_domain(task),
                       "passages": len(hits), "sha_mismatch": mismatched, "prompt_tokens": len(tokens),
                       "logp": [round(x, 4) for x in logp], "score": round(float(np.mean(logp)), 4),
                       **({"warm": round(float(np.mean(warm)), 4)} if warm else {}),
                       "seconds": round(time.perf_counter() - started, 2)}
                fh.write(json.dumps(out) + "\n")
                fh.flush()
                print(f"[{i}/{len(todo)}] {row['task_id']} {out['gold']} score {out['score']} {out['prompt_tokens']} tok {out['seconds']} s", flush=True)
    report(args)


def report(args: argparse.Namespace) -> None:
    rows = [json.loads(line) for line in args.out.open()]
    decider = {}
    if args.decider:
        decider = {r["task_id"]: float(r["p"]["decline"]) for r in read_jsonl(args.decider) if "p" in r}
    lines = [f"{args.out.name}: {len(rows)} tasks, mean log-probability of the decline sentence's first {args.tokens} tokens"]
    for where in ("un", "test", "run"):
        part = [r for r in rows if r["set"] == where]
        if not part:
            continue
        pos = [r["score"] for r in part if r["gold"] == "UNANSWERABLE"]
        neg = [r["score"] for r in part if r["gold"] in ("ANSWERABLE", "PARTIAL")]
        under = [r["score"] for r in part if r["gold"] == "UNDERSPECIFIED"]
        line = (f"  {where}: UNANSWERABLE {len(pos)} vs answerable {len(neg)}: AUC {auc(pos, neg)}; "
                f"UNDERSPECIFIED {len(under)} vs answerable: AUC {auc(under, neg)}; "
                f"median score UNANSWERABLE {np.median(pos) if pos else float('nan'):.3f}, "
                f"answerable {np.median(neg) if neg else float('nan'):.3f}")
        lines.append(line)
        with_p = [r for r in part if r["task_id"] in decider and r["gold"] in ("UNANSWERABLE", "ANSWERABLE", "PARTIAL")]
        if with_p:
            score = np.array([r["score"] for r in with_p])
            p = np.array([decider[r["task_id"]] for r in with_p])
            both = score.argsort().argsort() + p.argsort().argsort()
            gold = [r["gold"] == "UNANSWERABLE" for r in with_p]
            lines.append(f"    with the decider ({len(with_p)} tasks): decider AUC {split_auc(p.tolist(), gold)}, "
                         f"P(IDK) {split_auc(score.tolist(), gold)}, rank sum {split_auc(both.tolist(), gold)}")
    first = {r["task_id"]: r["logp"][0] for r in rows}
    for where in ("un", "test", "run"):
        part = [r for r in rows if r["set"] == where]
        if not part:
            continue
        pos = [first[r["task_id"]] for r in part if r["gold"] == "UNANSWERABLE"]
        neg = [first[r["task_id"]] for r in part if r["gold"] in ("ANSWERABLE", "PARTIAL")]
        lines.append(f"  {where}, the first token alone (free in generation: the prefill's own logits): AUC {auc(pos, neg)}")
    # a threshold set on MTRAG-UN (at most 10% of its answerable turns declined), applied to the test subset unchanged
    for name, value in (("mean of the tokens", lambda r: r["score"]), ("first token", lambda r: r["logp"][0])):
        un_neg = sorted(value(r) for r in rows if r["set"] == "un" and r["gold"] in ("ANSWERABLE", "PARTIAL"))
        if not un_neg:
            continue
        cut = un_neg[int(np.floor(0.9 * len(un_neg)))]  # declined when the score is above the 90th percentile
        for where in ("un", "test", "run"):
            part = [r for r in rows if r["set"] == where]
            pos = [r for r in part if r["gold"] == "UNANSWERABLE"]
            neg = [r for r in part if r["gold"] in ("ANSWERABLE", "PARTIAL")]
            if pos and neg:
                lines.append(f"  threshold {cut:.3f} ({name}, set on MTRAG-UN's answerable turns: <= 10% above it), {where}: "
                             f"UNANSWERABLE declined {sum(value(r) > cut for r in pos)}/{len(pos)}, "
                             f"answerable declined {sum(value(r) > cut for r in neg)}/{len(neg)}")
    warm = [abs(r["warm"] - r["score"]) for r in rows if "warm" in r]
    if warm:
        lines.append(f"  the same score from a warm cache (the prompt's last token evaluated alone): |difference| median "
                     f"{np.median(warm):.4f}, max {max(warm):.4f}")
    seconds = [r["seconds"] for r in rows]
    lines.append(f"  {np.median(seconds):.2f} s a task (median), prompt {np.median([r['prompt_tokens'] for r in rows]):.0f} tokens; "
                 f"passages whose text differs from the run's: {sum(r['sha_mismatch'] for r in rows)}")
    text = "\n".join(lines)
    print(text)
    args.out.with_suffix(".txt").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

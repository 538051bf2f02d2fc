"""Issue 23, session 38: the question's likelihood under a small LLM as a reranker (UPR: Sachan et al. 2022,
"Improving Passage Retrieval with Zero-Shot Question Generation"), measured on committed Task A runs.

For each pool-3 query of a run folder (official Task A shape, run-<domain>.jsonl) the top ``--k`` passages are scored by
log P(question | passage) under a GGUF model (teacher-forced through local-rag's own llama.cpp backend,
`LLM.continuation_logprobs`; no text is generated, no model is trained). The passage is its first chunk in
indexes/<prefix><domain>/chunks.jsonl (the index's 384-token pieces), under its title. Scores are cached per
(model, prompt, question, passage) in ``--cache`` (JSONL, appended as they come: an interrupted run resumes).

    score: python upr.py score --run DIR --split test --queries own --cache docs/benchmarks/i23/s38/upr-test.jsonl
    grid:  python upr.py grid  --run DIR --split test --queries own --cache ... [--out table.txt]

``--queries own`` reads the system's own rewrites from ``--llm-cache`` (runs/i23/rewrites.jsonl, written by
`local-rag train rewrites`); ``--queries organizers`` reads the organizers' rewrite of the task files (train split
only: the choice of K, weight and score is made there).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path

from local_rag.evaluation.metrics import score_run
from local_rag.evaluation.retrieval_compare import read_runs
from local_rag.evaluation.splits import load_split
from local_rag.mtrag import default_mtrag_dir, load_qrels, load_queries
from local_rag.records import Hit
from local_rag.rerank.base import with_scores
from local_rag.settings import RerankerConfig

DOMAINS = ("clapnq", "cloud", "fiqa")
PROMPT = "Passage: {passage}\n\nPlease write a question based on this passage."
CHOSEN = (10, 1.0)  # top K, RRF weight of the run's order: chosen on the train split (upr-grid-train.md)
PROMPT_ID = hashlib.sha1(PROMPT.encode()).hexdigest()[:8]


def read_run(run_dir: Path, domain: str) -> dict[str, list[str]]:
    """Task id → the run's passage ids in its order (`retrieval_compare.read_runs`, which checks the shape)."""
    return {tid: list(docs) for tid, docs in read_runs(run_dir, [domain])[domain].items()}


def questions(kind: str, domain: str, llm_cache: Path) -> dict[str, str]:
    if kind == "organizers":
        return load_queries(default_mtrag_dir() / "retrieval_tasks" / domain / f"{domain}_rewrite.jsonl")
    out = {}
    for line in llm_cache.read_text().splitlines():
        rec = json.loads(line)
        parts = rec["key"].split("|")
        if parts[1] == "rewrite" and rec.get("queries", {}).get("rewrite"):
            out[parts[-1]] = rec["queries"]["rewrite"][0]
    return out


def first_chunks(index: Path, wanted: set[str]) -> dict[str, str]:
    out = {}
    with (index / "chunks.jsonl").open() as fh:
        for line in fh:
            rec = json.loads(line)
            pid = rec["passage_id"]
            if pid in wanted and pid not in out:
                title = rec.get("title") or ""
                out[pid] = f"{title}\n{rec['text'].strip()}" if title else rec["text"].strip()
    return out


def tasks(args: argparse.Namespace) -> list[tuple[str, str, str, list[str]]]:
    """(domain, task id, question, top-k passage ids) of the run's pool-3 queries in the split (``--limit``: a seeded
    sample of that many)."""
    split = load_split(default_mtrag_dir(), args.split)
    out = []
    for domain in DOMAINS:
        run = read_run(Path(args.run), domain)
        qs = questions(args.queries, domain, Path(args.llm_cache))
        for tid, ids in run.items():
            if tid.split("<::>")[0] in split and tid in qs:
                out.append((domain, tid, qs[tid], ids[: args.k]))
    if args.limit:
        out = sorted(random.Random(0).sample(out, min(args.limit, len(out))))
    if args.subset:  # a smaller seeded sample of those (another model on part of the same queries)
        out = sorted(random.Random(1).sample(out, min(args.subset, len(out))))
    return out


def key(model: str, question: str, pid: str) -> str:
    return f"{model}|{PROMPT_ID}|{hashlib.sha1(question.encode()).hexdigest()[:12]}|{pid}"


def load_cache(path: Path) -> dict[str, list[float]]:
    if not path.exists():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:  # a line cut by an interrupted write
            continue
        out[rec["key"]] = rec["logprobs"]
    return out


def score(args: argparse.Namespace) -> None:
    from local_rag.llm.llamacpp import LlamaCppLLM
    from local_rag.settings import LLMConfig

    todo = tasks(args)
    cache = load_cache(Path(args.cache))
    texts: dict[str, str] = {}
    for domain in DOMAINS:
        texts |= first_chunks(Path("indexes") / f"{args.index_prefix}{domain}",
                              {p for d, _, _, ids in todo if d == domain for p in ids})
    pairs = [(q, p) for _, _, q, ids in todo for p in ids if key(args.model, q, p) not in cache and p in texts]
    print(f"{len(todo)} queries, {len(pairs)} pairs to score ({len(cache)} cached)", file=sys.stderr, flush=True)
    if not pairs:
        return
    llm = LlamaCppLLM(LLMConfig(model=args.model, n_ctx=2048, prefix_cache=0), "models")
    start = time.perf_counter()
    with open(args.cache, "a") as out:
        for i, (q, p) in enumerate(pairs, start=1):
            messages = [{"role": "user", "content": PROMPT.format(passage=texts[p])}]
            done = llm.continuation_logprobs(messages, q, stage="upr", n_tokens=64)
            out.write(json.dumps({"key": key(args.model, q, p), "logprobs": [round(x, 4) for x in done.logprobs],
                                  "prompt_tokens": done.call.prompt_tokens, "s": round(done.call.total_s, 3)}) + "\n")
            out.flush()
            if i % 50 == 0 or i == len(pairs):
                took = time.perf_counter() - start
                print(f"{i}/{len(pairs)} pairs, {took:.0f} s, {took / i:.2f} s a pair", file=sys.stderr, flush=True)


def ranked(ids: list[str], lm: list[float | None], weight: float | None, k: int) -> list[str]:
    """The top ``k`` of ``ids`` reordered as the `likelihood` reranker backend orders them (`rerank.base.with_scores`:
    by the likelihood alone when ``weight`` is None, else RRF, k 60, of its order and the run's at ``weight``), the
    rest after them unchanged."""
    hits = [Hit(pid, 0.0, rank=r) for r, pid in enumerate(ids, start=1)]
    scores = [float("-inf") if x is None else x for x in lm[:k]]
    return [h.passage_id for h in with_scores(hits, scores, RerankerConfig(prior_weight=weight or 0.0))]


def write_run(folder: Path, lists: dict[str, list[str]], domain_of: dict[str, str], source: Path) -> None:
    """The reranked lists in the official Task A shape (run-<domain>.jsonl, scores decreasing), for `eval compare`."""
    folder.mkdir(parents=True, exist_ok=True)
    for domain in DOMAINS:
        collection = json.loads((source / f"run-{domain}.jsonl").read_text().splitlines()[0])["Collection"]
        with (folder / f"run-{domain}.jsonl").open("w") as fh:
            for tid, ids in lists.items():
                if domain_of[tid] == domain:
                    contexts = [{"document_id": d, "score": round(1.0 - r / 1000, 6)} for r, d in enumerate(ids)]
                    fh.write(json.dumps({"task_id": tid, "Collection": collection, "contexts": contexts}) + "\n")


def grid(args: argparse.Namespace) -> None:
    todo = tasks(args)
    cache = load_cache(Path(args.cache))
    qrels: dict[str, dict[str, int]] = {}
    for domain in DOMAINS:
        qrels |= load_qrels(default_mtrag_dir() / "retrieval_tasks" / domain / "qrels" / "dev.tsv")
    full_runs = {}
    for domain in DOMAINS:
        full_runs |= read_run(Path(args.run), domain)
    rows = []
    scored = [t for t in todo if all(key(args.model, t[2], p) in cache for p in t[3])]
    wanted = sorted({t[1] for t in scored if t[1] in qrels})  # a fixed order: the means are summed alike every run

    def ndcg(run_lists: dict[str, list[str]]) -> tuple[float, float]:
        run = {tid: {d: 1000.0 - r for r, d in enumerate(ids)} for tid, ids in run_lists.items()}
        per = score_run(run, {q: qrels[q] for q in wanted})
        n = len(per)
        return (sum(m["ndcg_cut_5"] for m in per.values()) / n, sum(m["recall_5"] for m in per.values()) / n)

    base = {t[1]: full_runs[t[1]] for t in scored}
    rows.append(("run as it is", *ndcg(base)))
    # summed and mean log-probabilities order a query's passages alike (one question, one token count)
    for k in (5, 10, 20):
        if k > args.k:
            continue
        for weight in (None, 0.5, 1.0, 2.0, 3.0, 4.0):
            lists = {}
            for _, tid, q, _ids in scored:
                ids = full_runs[tid]
                lm = []
                for p in ids[:k]:
                    lp = cache.get(key(args.model, q, p))
                    lm.append(None if lp is None else sum(lp))
                lists[tid] = ranked(ids, lm, weight, k)
            label = f"top {k}, " + ("likelihood alone" if weight is None else f"RRF, run weight {weight}")
            rows.append((label, *ndcg(lists)))
            if args.write and (k, weight) == (tuple(args.choice) if args.choice else CHOSEN):
                write_run(Path(args.write), lists, {t[1]: t[0] for t in scored}, Path(args.run))
    lines = [f"# {args.run}, split {args.split}, {len(wanted)} pool-3 queries with qrels, questions: {args.queries}, "
             f"model {args.model}, prompt {PROMPT_ID}", "", "| row | nDCG@5 | R@5 |", "|---|---:|---:|"]
    lines += [f"| {label} | {n:.4f} | {r:.4f} |" for label, n, r in rows]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["score", "grid"])
    ap.add_argument("--run", required=True)
    ap.add_argument("--split", choices=["train", "test"], required=True)
    ap.add_argument("--queries", choices=["own", "organizers"], required=True)
    ap.add_argument("--llm-cache", default="runs/i23/rewrites.jsonl")
    ap.add_argument("--cache", required=True)
    ap.add_argument("--model", default="qwen2.5-coder-0.5b-instruct-q4_k_m")
    ap.add_argument("--index-prefix", default="mtrag-")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--subset", type=int, default=0)
    ap.add_argument("--out", default="")
    ap.add_argument("--write", default="", help="grid: write the CHOSEN row's run files (official shape) here")
    ap.add_argument("--choice", nargs=2, type=float, metavar=("K", "WEIGHT"),
                    help="grid --write: this row instead of CHOSEN (session 39: the 1.5B's own train choices)")
    args = ap.parse_args()
    if args.queries == "organizers" and args.split == "test":
        sys.exit("the organizers' rewrite is not available to a real system: train split only")
    (score if args.what == "score" else grid)(args)


if __name__ == "__main__":
    main()

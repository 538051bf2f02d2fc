"""local-rag side by side with a LlamaIndex pipeline on the same models, corpus and MTRAG conversations
(`local_rag.bench.peer`, which says what each row runs and what differs between the sides).

Run it with the benchmark-only environment (LlamaIndex is not a dependency of local-rag):

    bash scripts/peer_env.sh
    flock /tmp/cpu-heavy.lock .venv-peer/bin/python scripts/bench_peer.py --profile cpu-qwen --tasks 10
    # the speed levers of cpu-fast on the 1.5B model, both sides on the same GGUF:
    .venv-peer/bin/python scripts/bench_peer.py --profile cpu-fast --set llm.model=qwen2.5-coder-1.5b-instruct-q4_k_m \
        --out docs/benchmarks/peer-levers

Writes <out>/peer.{json,md} (default docs/benchmarks/). With `--predictions RUN`, runs nothing and writes the answers of
RUN/peer.json as runs/<RUN's name>/predictions-<row>.jsonl (`local_rag.bench.peer_answers`; they carry MTRAG texts, so
not under docs/), to score with the judges:

    .venv/bin/python scripts/bench_peer.py --predictions docs/benchmarks/peer-levers
    local-rag eval generation --setting rag --predictions runs/peer-levers/predictions-ours.jsonl --out ...
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from local_rag.bench.peer import ROWS, bench_peer, parse_sets, parse_variants

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="cpu-test", help="cpu-test (SmolLM2, smoke) or cpu-qwen (the figures)")
    parser.add_argument("--domain", default="govt")
    parser.add_argument("--corpus", type=Path, help="default: the MTRAG pool of --domain")
    parser.add_argument("--tasks", type=int, default=10, help="measured tasks (one more is the warm-up)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", choices=("train", "test"),
                        help="only the tasks of this split's conversations (default: every conversation of --domain)")
    parser.add_argument("--rows", default="peer,ours,ours-rewrite", help=f"comma-separated, from {', '.join(ROWS)}")
    parser.add_argument("--lean-passages", type=int, default=3, help="passages in the prompt of the ours-lean row")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="a dotted settings override for both sides, e.g. llm.model=qwen2.5-coder-1.5b-instruct-q4_k_m "
                             "(repeatable; the value is read as YAML)")
    parser.add_argument("--variant", dest="variant_items", action="append", default=[], metavar="NAME:KEY=VALUE",
                        help="one more row, NAME (ours-...): ours-rewrite with this setting on top, e.g. "
                             "ours-e700:evidence.budget_tokens=700 (repeatable; a NAME given twice gathers its settings)")
    parser.add_argument("--models-dir", type=Path,
                        default=Path(os.environ.get("LOCAL_RAG_MODELS_DIR") or ROOT / "models"),
                        help="default: $LOCAL_RAG_MODELS_DIR, else models/ of this checkout")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks")
    parser.add_argument("--predictions", type=Path, metavar="RUN",
                        help="run nothing: write RUN/peer.json's answers as runs/<RUN's name>/predictions-<row>.jsonl")
    args = parser.parse_args()
    if args.predictions:
        from local_rag.bench.peer_answers import write_row_predictions

        for path in write_row_predictions(args.predictions, ROOT / "runs" / args.predictions.resolve().name, ROOT):
            print(f"written {path}")
        return
    try:
        args.overrides = parse_sets(args.sets)
        args.variants = parse_variants(args.variant_items)
    except ValueError as exc:
        parser.error(str(exc))
    rows_wanted = [r.strip() for r in args.rows.split(",") if r.strip()]
    rows_wanted += [name for name in args.variants if name not in rows_wanted]
    unknown = [r for r in rows_wanted if r not in ROWS and r not in args.variants]
    if unknown or not any(r.startswith("peer") for r in rows_wanted):
        parser.error(f"--rows: unknown {unknown or 'none'}, peer rows {[r for r in rows_wanted if r.startswith('peer')]} "
                     f"(valid: {', '.join(ROWS)}; at least one peer row)")
    print(bench_peer(args, rows_wanted, args.models_dir))


if __name__ == "__main__":
    main()

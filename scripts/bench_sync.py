"""`index sync` with 1% of the files changed against a full rebuild of the same folder.

    python scripts/bench_sync.py --out docs/benchmarks/i28-sync.json [--files 300] [--changed 0.01] [--moved 0.1] [--rebuild] [--sparse-only]

The folder: ``--files`` IBM Cloud documentation pages rebuilt from the MTRAG cloud pool (see bench_headers.py), one
.txt file each (about 2,200 words a page). Steps, each timed: a full build; a sync with nothing changed; a sync after
``--changed`` of the files got a new paragraph; with ``--moved``, a sync after that share of the files was moved
into a subfolder; with ``--rebuild``, a full rebuild of the changed folder (what one
would do without sync; otherwise the first build stands for it), compared with the synced index: same passages and
corpus hash.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.sync import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--moved", type=float, default=0.0,
                        help="then move this share of the files into a subfolder and sync (vectors kept: same text)")
    parser.add_argument("--no-reuse", action="store_true",
                        help="embed every new chunk, as syncs did before session 52 (no vectors kept for the same text)")
    parser.add_argument("--profile", default="cpu-test")
    parser.add_argument("--rebuild", action="store_true", help="also time a full rebuild of the changed folder")
    parser.add_argument("--sparse-only", action="store_true", help="BM25 only (no embedding: a lower bound on the gain)")
    args = parser.parse_args()
    run(args)


if __name__ == "__main__":
    main()

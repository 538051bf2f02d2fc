"""A folder of multi-page PDFs, then `local-rag index build` on it timed as a user runs it (the README's first-run
figure); what the folder holds and what is measured: ``local_rag/bench/pdf_folder.py``.

    python scripts/bench_pdf_folder.py --dest /tmp/i28/pdf100 --index i28-pdf100 --out docs/benchmarks/i28-pdf100.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.pdf_folder import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, required=True, help="the folder to fill with PDFs (its PDFs are replaced)")
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--index", help="also time `local-rag index build DEST --index INDEX`")
    parser.add_argument("--profile", help="the profile of the build (default: the default profile)")
    parser.add_argument("--out", type=Path, help="write the figures here (JSON)")
    run(parser.parse_args())


if __name__ == "__main__":
    main()

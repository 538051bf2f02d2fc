"""Scanned PDFs read by OCR: pages a minute and the share of the words read back, at each rendering resolution;
what the scans are and how they are scored: ``local_rag/bench/ocr.py``.

    python scripts/bench_ocr.py --files 8 --dpi 150 200 300 --out docs/benchmarks/s54-ocr.json
    python scripts/bench_ocr.py --files 8 --turned --out docs/benchmarks/s54-ocr-turned.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from local_rag.bench.ocr import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=Path("/tmp/local-rag-ocr"), help="the folder for the PDFs")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--dpi", type=int, nargs="+", default=[150, 200, 300], help="rendering resolutions measured")
    parser.add_argument("--turned", action="store_true",
                        help="instead: the shipped settings on the scans upright, upside down and sideways")
    parser.add_argument("--out", type=Path, help="write the figures here (JSON)")
    args = parser.parse_args()
    args.argv = sys.argv[1:]
    run(args)


if __name__ == "__main__":
    main()

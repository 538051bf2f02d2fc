"""Document readers measured on real files against markitdown (`local_rag.bench.docs`, which says what it measures).

    python scripts/bench_docs.py FOLDER [--markitdown /path/to/venv/bin/python] [--json out.json]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.docs import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--markitdown", help="python of a venv with markitdown installed")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    run(args)


if __name__ == "__main__":
    main()

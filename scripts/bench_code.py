"""Reading source code: real code trees read with ``--code``, files and megabytes a second
(``local_rag/bench/code.py``).

    python scripts/bench_code.py --json docs/benchmarks/s58-code.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_rag.bench.code import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", help="folders of code (default: local_rag and the installed scikit-learn)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here")
    run(parser.parse_args())


if __name__ == "__main__":
    main()

"""Reading source code (``scripts/bench_code.py``): real code trees (by default this package and the installed
scikit-learn, Python, Cython, C and C++) read by `read_corpus` with ``code`` (`local_rag.corpus.code`): files and
megabytes a second, the definitions found, and what was listed instead of read (minified files).

    python scripts/bench_code.py --json docs/benchmarks/s58-code.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from local_rag.corpus.options import ReadOptions
from local_rag.corpus.readers import CorpusReport, read_corpus
from local_rag.sysinfo import machine


def default_trees() -> list[Path]:
    """This package's source and the installed scikit-learn's (when it is installed)."""
    import local_rag

    trees = [Path(local_rag.__file__).parent]
    try:
        import sklearn

        trees.append(Path(sklearn.__file__).parent)
    except ImportError:
        pass
    return trees


def read_tree(folder: Path, repeats: int) -> dict[str, object]:
    """Figures of reading ``folder`` with ``code``, the median of ``repeats`` reads after one unclocked one."""
    list(read_corpus(folder, report=CorpusReport(), options=ReadOptions(code=True)))  # imports and the page cache
    seconds = []
    for _ in range(repeats):
        report = CorpusReport()
        started = time.perf_counter()
        passages = list(read_corpus(folder, report=report, options=ReadOptions(code=True)))
        seconds.append(time.perf_counter() - started)
    median = sorted(seconds)[len(seconds) // 2]
    files = {p.doc_id for p in passages}
    size = sum((folder / f).stat().st_size for f in files)
    return {"folder": folder.name, "files": len(files), "bytes": size, "passages": len(passages),
            "sections_named": sum(bool(p.section) for p in passages),
            "kinds": dict(Counter(Path(f).suffix or Path(f).name for f in files).most_common()),
            "unreadable": dict(report.unreadable), "seconds_median": round(median, 2),
            "files_per_s": round(len(files) / median), "mb_per_s": round(size / 2**20 / median, 1)}


def run(args: argparse.Namespace) -> dict[str, object]:
    trees = [Path(t) for t in args.trees] or default_trees()
    figures: dict[str, object] = {"machine": machine(), "repeats": args.repeats,
                                  "trees": [read_tree(t, args.repeats) for t in trees]}
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return figures

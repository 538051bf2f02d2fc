"""`index sync` with 1% of the files changed against a full rebuild of the same folder (``scripts/bench_sync.py``).

    python scripts/bench_sync.py --out runs/i28/sync.json [--files 300] [--changed 0.01] [--moved 0.1] [--profile cpu-test]

The folder: ``--files`` IBM Cloud documentation pages rebuilt from the MTRAG cloud pool (see bench_headers.py), one
.txt file each (about 2,200 words a page). Steps, each timed: a full build; a sync with nothing changed; a sync after
``--changed`` of the files got a new paragraph; with ``--moved``, a sync after that share of the files was moved
into a subfolder; a full rebuild of the folder (what one would do without sync). Both indexes are then compared:
same passages and corpus hash.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from local_rag.bench import headers as bench_headers
from local_rag.embed import load_embedder
from local_rag.index import build_index, open_index
from local_rag.index.sync import SyncResult, sync_index
from local_rag.settings import Settings, load_settings

T = TypeVar("T")


def run(args: argparse.Namespace) -> None:
    """Run the benchmark with the options parsed by ``scripts/bench_sync.py``."""
    pages = bench_headers.pages(bench_headers.MTRAG / "corpora" / "pool" / "cloud.jsonl")
    chosen = sorted(pages)[: args.files]
    out: dict[str, object] = {"files": len(chosen), "profile": args.profile, "sparse_only": args.sparse_only,
                              "reuse": not args.no_reuse}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for doc in chosen:
            (folder / f"{doc}.txt").write_text(pages[doc] + "\n", encoding="utf-8")
        settings = load_settings(args.profile, overrides={
            "indexes_dir": str(Path(tmp) / "indexes"), "index": "sync",
            **({"dense": {"enabled": False}, "retrieval": {"retrievers": ["bm25"]}} if args.sparse_only else {}),
        })
        embedder = None if args.sparse_only else load_embedder(settings.embedder, settings.models_dir)

        def sync(settings: Settings, folder: Path) -> SyncResult:
            result: SyncResult = sync_index(settings, folder, embedder=embedder, progress=False, reuse=not args.no_reuse)
            return result

        def timed(name: str, step: Callable[[], T]) -> T:
            started = time.perf_counter()
            result = step()
            out[f"{name}_s"] = round(time.perf_counter() - started, 2)
            print(name, out[f"{name}_s"], "s", flush=True)
            return result

        manifest = timed("build", lambda: build_index(settings, folder, embedder=embedder, progress=False))
        out["chunks"] = manifest.chunks
        timed("sync_unchanged", lambda: sync(settings, folder))
        n = max(1, math.ceil(args.changed * len(chosen)))
        for doc in chosen[:: max(1, len(chosen) // n)][:n]:
            path = folder / f"{doc}.txt"
            path.write_text(path.read_text() + "\nUpdated: this page now also covers regional failover.\n")
        result = timed("sync_changed", lambda: sync(settings, folder))
        out["changed_files"] = len(result.plan.changed)
        out["embedded_chunks"] = result.embedded_chunks
        out["reused_chunks"] = result.reused_chunks
        if args.moved:  # a reorganised folder: files moved into a subfolder (a deletion plus an addition each)
            (folder / "archive").mkdir()
            moved = chosen[1:: max(1, round(1 / args.moved))]
            for doc in moved:
                (folder / f"{doc}.txt").rename(folder / "archive" / f"{doc}.txt")
            result = timed("sync_moved", lambda: sync(settings, folder))
            out["moved_files"] = len(result.plan.added)
            out["moved_embedded_chunks"] = result.embedded_chunks
            out["moved_reused_chunks"] = result.reused_chunks
        if args.rebuild:
            fresh = settings.model_copy(update={"index": "fresh"})
            timed("rebuild", lambda: build_index(fresh, folder, embedder=embedder, progress=False))
            checksum = embedder.checksum if embedder else None
            a = open_index(settings, model_checksum=checksum)
            b = open_index(fresh, model_checksum=checksum)
            out["same_as_rebuild"] = a.manifest.corpus_hash == b.manifest.corpus_hash and (
                sorted(c.id for c in a.chunks) == sorted(c.id for c in b.chunks))
    full = float(out["rebuild_s" if args.rebuild else "build_s"])  # type: ignore[arg-type]
    out["speedup"] = round(full / float(out["sync_changed_s"]), 1)  # type: ignore[arg-type]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out))

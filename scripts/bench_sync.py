"""`index sync` with 1% of the files changed against a full rebuild of the same folder.

    python scripts/bench_sync.py --out runs/i28/sync.json [--files 300] [--changed 0.01] [--profile cpu-test]

The folder: ``--files`` IBM Cloud documentation pages rebuilt from the MTRAG cloud pool (see bench_headers.py), one
.txt file each (about 2,200 words a page). Steps, each timed: a full build; a sync with nothing changed; a sync after
``--changed`` of the files got a new paragraph; a full rebuild of the changed folder (what one would do without
sync). Both indexes are then compared: same passages and corpus hash.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import math
import tempfile
import time
from pathlib import Path

from local_rag.embed import load_embedder
from local_rag.index import build_index, open_index
from local_rag.index.sync import sync_index
from local_rag.settings import load_settings

_spec = importlib.util.spec_from_file_location("bench_headers", Path(__file__).with_name("bench_headers.py"))
assert _spec and _spec.loader
bench_headers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_headers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--profile", default="cpu-test")
    args = parser.parse_args()
    pages = bench_headers.pages(bench_headers.MTRAG / "corpora" / "pool" / "cloud.jsonl")
    chosen = sorted(pages)[: args.files]
    out: dict[str, object] = {"files": len(chosen), "profile": args.profile}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for doc in chosen:
            (folder / f"{doc}.txt").write_text(pages[doc] + "\n", encoding="utf-8")
        settings = load_settings(args.profile, overrides={"indexes_dir": str(Path(tmp) / "indexes"), "index": "sync"})
        embedder = load_embedder(settings.embedder, settings.models_dir)

        def timed(name: str, step) -> object:
            started = time.perf_counter()
            result = step()
            out[f"{name}_s"] = round(time.perf_counter() - started, 2)
            print(name, out[f"{name}_s"], "s", flush=True)
            return result

        manifest = timed("build", lambda: build_index(settings, folder, embedder=embedder, progress=False))
        out["chunks"] = manifest.chunks
        timed("sync_unchanged", lambda: sync_index(settings, folder, embedder=embedder, progress=False))
        n = max(1, math.ceil(args.changed * len(chosen)))
        for doc in chosen[:: max(1, len(chosen) // n)][:n]:
            path = folder / f"{doc}.txt"
            path.write_text(path.read_text() + "\nUpdated: this page now also covers regional failover.\n")
        result = timed("sync_changed", lambda: sync_index(settings, folder, embedder=embedder, progress=False))
        out["changed_files"] = len(result.plan.changed)
        out["embedded_chunks"] = result.embedded_chunks
        fresh = settings.model_copy(update={"index": "fresh"})
        timed("rebuild", lambda: build_index(fresh, folder, embedder=embedder, progress=False))
        a = open_index(settings, model_checksum=embedder.checksum)
        b = open_index(fresh, model_checksum=embedder.checksum)
        out["same_as_rebuild"] = a.manifest.corpus_hash == b.manifest.corpus_hash and (
            sorted(c.id for c in a.chunks) == sorted(c.id for c in b.chunks))
        digest = hashlib.sha256("".join(sorted(c.text for c in a.chunks)).encode()).hexdigest()[:12]
        out["chunk_texts_digest"] = digest
    out["speedup"] = round(float(out["rebuild_s"]) / float(out["sync_changed_s"]), 1)  # type: ignore[arg-type]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out))


if __name__ == "__main__":
    main()

"""What the load-time integrity check of an index costs (``scripts/bench_load_check.py``; issue 27 target: at most
5% of the index's load time).

    # an existing index (settings from the profile / LOCAL_RAG_* variables)
    python scripts/bench_load_check.py --index mtrag-govt
    # a synthetic index of N passages (random 384-d unit vectors, real bm25s + FAISS Flat), in a temporary folder
    python scripts/bench_load_check.py --synthetic 50000

Prints one JSON object: median load wall and CPU time without and with the check, the check's CPU time and its
share of the load's CPU time (the figure in docs/reliability.md).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from local_rag.embed.base import Embedder
from local_rag.index import build_index
from local_rag.index.verify import load_check_cost
from local_rag.settings import EmbedderConfig, load_settings


class RandomEmbedder(Embedder):
    backend = "sentence-transformers"

    def __init__(self, config: EmbedderConfig, dimension: int = 384) -> None:
        super().__init__(config)
        self.name, self.checksum, self.dimension = config.model, "random", dimension
        self.rng = np.random.default_rng(0)

    def embed_batch(self, texts: list[str], kind: str) -> np.ndarray:
        return self.rng.standard_normal((len(texts), self.dimension)).astype(np.float32)


def synthetic(folder: Path, n: int) -> dict[str, Any]:
    words = [f"w{i}" for i in range(5000)]
    rng = np.random.default_rng(1)
    corpus = folder / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as fh:
        for i in range(n):
            text = " ".join(rng.choice(words, size=120))
            fh.write(json.dumps({"_id": f"p{i}", "title": f"doc {i}", "text": text, "url": ""}) + "\n")
    return {"indexes_dir": str(folder / "indexes"), "index": "synthetic",
            "chunker": {"tokenizer": "whitespace", "size": 256, "overlap": 64}}


def run(args: argparse.Namespace) -> None:
    """Run the benchmark with the options parsed by ``scripts/bench_load_check.py``."""
    if bool(args.index) == bool(args.synthetic):
        sys.exit("give --index NAME or --synthetic N")
    with tempfile.TemporaryDirectory() as tmp:
        if args.synthetic:
            overrides = synthetic(Path(tmp), args.synthetic)
            settings = load_settings(overrides=overrides)
            build_index(settings, Path(tmp) / "corpus.jsonl", embedder=RandomEmbedder(settings.embedder), progress=False)
        else:
            settings = load_settings(overrides={"index": args.index})
        result: dict[str, Any] = dict(load_check_cost(settings, args.repeats))
    result.update({"index": args.index or f"synthetic-{args.synthetic}", "machine": platform.processor() or platform.machine()})
    print(json.dumps(result))

"""The embedded demo: index the project's own documentation (package data) and run a scripted session."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from local_rag.settings import Settings

DEMO_INDEX = "demo"

# a scripted multi-turn session: the second turn only makes sense with the first one (the rewrite resolves "it"),
# and the last one is not answered by the documents
SCRIPT: list[str] = [
    "How does local-rag keep an index safe when a build is interrupted?",
    "And how do I add new documents to it?",
    "Which fusion method merges the ranked lists?",
    "What is the capital of Australia?",
]

# all-MiniLM-L6-v2 cosines on the demo index: on-topic questions 0.6+, off-topic ones ~0.1 (measured), so passages
# below 0.3 are dropped and an off-topic question gets the IDK answer without an LLM call
# an answer Qwen2.5-Coder-1.5B leaves uncited gets its citations by word overlap (`local_rag.llm.attribute`)
DEMO_OVERRIDES: dict[str, Any] = {"pipeline.min_dense_score": 0.3, "retrieval.query_modes": ["lastturn"],
                                  "generate.attribute": True}


# The demo runs on the best CPU profile whose LLM is present: SmolLM2-135M (cpu-test, what CI uses) neither resolves
# follow-ups nor cites (measured), Qwen2.5-Coder-1.5B (cpu: cpu-qwen with the speed levers, imported by `make demo`)
# does both.
DEMO_PROFILES = ("cpu", "cpu-test")


def demo_profile(models_dir: Path | None = None) -> str:
    """The first of `DEMO_PROFILES` whose LLM is in ``models_dir`` (default: the settings' ``models_dir``), the last
    one otherwise. The first is also the default profile (`local_rag.settings.DEFAULT_PROFILE`)."""
    from local_rag.errors import ModelError
    from local_rag.modelstore.manifest import Manifest
    from local_rag.settings import load_settings

    models_dir = models_dir or load_settings(DEMO_PROFILES[-1]).models_dir
    try:
        manifest = Manifest.load(models_dir)
    except ModelError:
        return DEMO_PROFILES[-1]
    for name in DEMO_PROFILES:
        model = load_settings(name).llm.model
        if model in manifest.entries and manifest.is_present(manifest.entries[model]):
            return name
    return DEMO_PROFILES[-1]


def docs_folder() -> Path:
    """The bundled documentation folder (the demo corpus)."""
    return Path(str(resources.files("local_rag") / "data" / "docs"))


def ensure_demo_index(settings: Settings, progress: bool = True) -> bool:
    """Build the demo index unless an up-to-date one exists. Returns True when it (re)built."""
    from local_rag.corpus.readers import CorpusReport, read_corpus
    from local_rag.embed import load_embedder
    from local_rag.errors import IndexError_
    from local_rag.index import build_index
    from local_rag.index.folder import check_compatible
    from local_rag.index.manifest import IndexManifest

    report = CorpusReport()
    for _ in read_corpus(docs_folder(), report=report):
        pass
    try:
        manifest = IndexManifest.load(settings.index_dir)
        check_compatible(manifest, settings, settings.index_dir)
        if manifest.corpus_hash == report.corpus_hash:
            return False
    except IndexError_:
        pass
    embedder = load_embedder(settings.embedder, settings.models_dir) if settings.dense.enabled else None
    build_index(settings, docs_folder(), embedder=embedder, progress=progress)
    return True

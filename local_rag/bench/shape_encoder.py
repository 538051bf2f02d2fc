"""A sentence-transformers encoder with random weights in the shape of a real one, for timing the pipeline on a
machine the real weights cannot reach (a lent GPU machine takes 64 MiB; all-MiniLM-L6-v2's weights are 87 MiB).

Like `local_rag.bench.shape_gguf` for the LLM: an encoder's speed and memory depend on its shapes and dtypes, not on
its values. Only the small files travel (``config.json``, the tokenizer, the pooling settings: under 1 MB for
MiniLM); the weights are drawn where they run, by transformers from the config. Retrieval over such an encoder is
noise, so what a run with it shows is time, memory and where each stage ran, not quality.

Example:
    >>> write_random_encoder("models/all-MiniLM-L6-v2", "/tmp/minilm-random")  # doctest: +SKIP
    >>> write_random_encoder("models/all-MiniLM-L6-v2", "/tmp/ce-random", cross_encoder=True)  # doctest: +SKIP
"""

from __future__ import annotations

import shutil
from pathlib import Path

from local_rag._optional import require
from local_rag.errors import BadInputError

# what a sentence-transformers folder holds besides the weights (those present are copied)
SMALL_FILES = ("config.json", "config_sentence_transformers.json", "modules.json", "sentence_bert_config.json",
               "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt")
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def copy_small_files(src: str | Path, out: str | Path) -> Path:
    """The files of ``src`` an encoder needs except its weights (and ``1_Pooling``), into ``out``."""
    src, out = Path(src), Path(out)
    if not (src / "config.json").is_file():
        raise BadInputError(f"{src} has no config.json: not a transformers / sentence-transformers model folder")
    out.mkdir(parents=True, exist_ok=True)
    for name in SMALL_FILES:
        if (src / name).is_file():
            shutil.copy2(src / name, out / name)
    if (src / "1_Pooling").is_dir():
        shutil.copytree(src / "1_Pooling", out / "1_Pooling", dirs_exist_ok=True)
    return out


def write_random_encoder(src: str | Path, out: str | Path, cross_encoder: bool = False, seed: int = 0) -> Path:
    """Write into ``out`` a model of ``src``'s shape with random weights (transformers' own initialisation).

    ``src`` is a model folder, or one `copy_small_files` wrote (no weights needed). A bi-encoder keeps ``src``'s
    sentence-transformers modules (pooling, normalisation); ``cross_encoder=True`` writes a sequence classifier with
    one label, the shape of a reranker trained from that encoder (`local-rag train reranker`).
    """
    transformers = require("transformers", "random-weight encoders")
    torch = require("torch", "random-weight encoders")
    src, out = Path(src), Path(out)
    if out.resolve() != src.resolve():
        copy_small_files(src, out)
    for name in WEIGHT_FILES:
        (out / name).unlink(missing_ok=True)
    config = transformers.AutoConfig.from_pretrained(str(out))
    torch.manual_seed(seed)
    if cross_encoder:
        config.num_labels = 1
        config.architectures = [type(config).__name__.replace("Config", "ForSequenceClassification")]
        model = transformers.AutoModelForSequenceClassification.from_config(config)
        for name in ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json"):
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / "1_Pooling", ignore_errors=True)
    else:
        model = transformers.AutoModel.from_config(config)
    model.save_pretrained(str(out))
    return out

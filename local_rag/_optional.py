"""Lazy imports of heavy, optional dependencies, with an error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from local_rag.errors import MissingDependencyError

# module name -> (extra, pip hint)
_EXTRAS: dict[str, tuple[str, str]] = {
    "faiss": ("cpu", "pip install 'local-rag[cpu]' (or 'local-rag[gpu]' on a CUDA machine)"),
    "torch": ("cpu", "pip install torch==2.13.0 (CPU wheel) then pip install 'local-rag[cpu]'"),
    "sentence_transformers": ("cpu", "pip install 'local-rag[cpu]'"),
    "transformers": ("cpu", "pip install 'local-rag[cpu]'"),
    "onnxruntime": ("cpu", "pip install 'local-rag[cpu]' (onnxruntime-gpu comes with 'local-rag[gpu]')"),
    "tokenizers": ("cpu", "pip install 'local-rag[cpu]'"),
    "llama_cpp": ("llm", "bash scripts/install_llama_cpp.sh (builds llama-cpp-python for this machine)"),
    "gguf": ("llm", "pip install 'local-rag[llm]'"),
    "huggingface_hub": ("download", "pip install 'local-rag[download]'"),
    "matplotlib": ("plot", "pip install 'local-rag[plot]'"),
    "qdrant_client": ("qdrant", "pip install 'local-rag[qdrant]'"),
    "pypdf": ("docs", "pip install 'local-rag[docs]'"),
    "docx": ("docs", "pip install 'local-rag[docs]'"),
    "pptx": ("docs", "pip install 'local-rag[docs]'"),
    "openpyxl": ("docs", "pip install 'local-rag[docs]'"),
    "xlrd": ("docs", "pip install 'local-rag[docs]'"),
    "olefile": ("docs", "pip install 'local-rag[docs]'"),
    "pypff": ("docs", "pip install 'local-rag[docs]'"),
    "icalendar": ("docs", "pip install 'local-rag[docs]'"),
    "pylatexenc": ("docs", "pip install 'local-rag[docs]'"),
    "trafilatura": ("docs", "pip install 'local-rag[docs]'"),
    "watchfiles": ("docs", "pip install 'local-rag[docs]'"),
    "fpdf": ("bench", "pip install 'local-rag[bench]'"),
    "rapidocr_onnxruntime": ("ocr", "pip install 'local-rag[ocr]' (Python 3.11-3.12)"),
    "pypdfium2": ("ocr", "pip install 'local-rag[ocr]'"),
    "pynvml": ("gpu", "pip install nvidia-ml-py"),
    "rouge_score": ("eval", "pip install 'local-rag[eval]'"),
    "bert_score": ("eval", "pip install --no-deps bert-score (torch must already be installed)"),
}


def require(module: str, purpose: str = "") -> ModuleType:
    """Import ``module`` or raise `MissingDependencyError` naming the extra that provides it.

    Example:
        >>> faiss = require("faiss", "dense retrieval")  # doctest: +SKIP
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra, hint = _EXTRAS.get(module.split(".")[0], ("", f"pip install {module}"))
        what = f" for {purpose}" if purpose else ""
        raise MissingDependencyError(
            f"{module} is needed{what} but is not installed ({exc}). Install it with: {hint}"
        ) from exc


def available(module: str) -> bool:
    """True when ``module`` can be imported (does not import it if it is already known missing)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True

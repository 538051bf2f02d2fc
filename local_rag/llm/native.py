"""Importing llama-cpp-python so that its native libraries bind to the C++ runtime, whatever was imported first.

On a lent NVIDIA H100 (session 25) and H200 (session 37) a CUDA build of llama-cpp-python 0.3.36 crashed (SIGSEGV)
inside ``llama_model_load_from_file`` → ``llama_model::print_info`` → ``std::ostream::_M_insert<long>``, resolved in
``libggml-cuda.so``, whenever numpy (anything of local-rag imports it) had been imported before ``llama_cpp``; the
same load with ``llama_cpp`` imported first ran. Making the system's ``libstdc++.so.6`` global (``RTLD_GLOBAL``)
before ``llama_cpp``'s libraries load binds them to the one runtime (docs/benchmarks.md, "The LLM on a lent NVIDIA
H200"). ``LOCAL_RAG_CXX_GLOBAL=0`` turns it off. It does nothing on other systems or once ``llama_cpp`` is imported.

Example:
    >>> llama_cpp = import_llama_cpp()  # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import os
import sys
from types import ModuleType

from local_rag._optional import require

CXX_RUNTIME = "libstdc++.so.6"


def make_cxx_runtime_global() -> bool:
    """Load the C++ runtime with ``RTLD_GLOBAL`` (Linux, before ``llama_cpp``); True when it was done here."""
    if not sys.platform.startswith("linux") or "llama_cpp" in sys.modules or os.environ.get("LOCAL_RAG_CXX_GLOBAL") == "0":
        return False
    try:
        ctypes.CDLL(CXX_RUNTIME, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return False
    return True


def import_llama_cpp(purpose: str = "the local LLM") -> ModuleType:
    """``llama_cpp``, its libraries bound to the global C++ runtime (`make_cxx_runtime_global`)."""
    make_cxx_runtime_global()
    return require("llama_cpp", purpose)

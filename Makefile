# Joinery — everything a fresh machine needs is installed from here.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: all install test lint typecheck unit k8s-bin deploy-tools temporal-bin dev bench clean

all: test

$(STAMP): pyproject.toml requirements-lock.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c requirements-lock.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

## Control-plane binaries (kube-apiserver, etcd, scheduler, controller-manager, kwok), built once
## from Go modules and cached outside the repository.
k8s-bin:
	bash sandbox/k8s/build.sh

## helm and docker-compose (for the deploy/ tests), built from Go modules and cached likewise.
deploy-tools:
	bash deploy/tools/build.sh

## Production-shaped Temporal: temporal-server and temporal-sql-tool built once from the Go
## module and cached outside the repository; PostgreSQL from Debian packages (installed as root).
temporal-bin:
	bash sandbox/temporal/build.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python scripts/layers.py

typecheck: install
	$(BIN)/mypy

unit: install
	$(BIN)/pytest -q tests/unit

## Test processes: N > 0 spreads the suite's files over N processes (pytest-xdist, slowest
## files first; see tests/conftest.py); 0 runs it in this process. Two (CI's) keep both of
## the 2-core machine's cores busy: docs/performance.md, "Test suite time".
TEST_WORKERS ?= 2

test: install k8s-bin deploy-tools temporal-bin lint typecheck
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=40

dev: install k8s-bin
	$(BIN)/joinery dev

bench: install
	$(BIN)/python benchmarks/scheduling.py
	$(BIN)/python benchmarks/catalog.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

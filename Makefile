# Set-up and everyday commands. `make demo` and `make test` create .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export OPENBLAS_NUM_THREADS ?= 1

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

.PHONY: install demo test lint docs test-all bench bench-spectral bench-streaming bench-cluster
install: $(BIN)/.installed

demo: $(BIN)/.installed
	$(BIN)/topicdp demo

test: $(BIN)/.installed
	$(BIN)/python -m ruff check topicdp tests benchmarks examples
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs/api build/docs

# the API reference and tutorial (docs/api), warnings as errors; open build/docs/index.html
docs: $(BIN)/.installed
	$(BIN)/python -m sphinx -W --keep-going -b html docs/api build/docs

# mypy reads [tool.mypy] in pyproject.toml (the whole topicdp package, no module skipped)
lint: $(BIN)/.installed
	$(BIN)/python -m ruff check topicdp tests benchmarks examples
	$(BIN)/python -m mypy

test-all: $(BIN)/.installed
	$(BIN)/python -m pytest -m "slow or cluster or not slow"

bench: $(BIN)/.installed
	$(BIN)/python benchmarks/speed/bench_sampler.py

bench-spectral: $(BIN)/.installed
	$(BIN)/python benchmarks/speed/bench_spectral.py

bench-streaming: $(BIN)/.installed
	$(BIN)/python benchmarks/speed/bench_streaming.py

bench-cluster: $(BIN)/.installed
	$(BIN)/python benchmarks/speed/bench_cluster.py

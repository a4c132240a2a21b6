# ccarena: set-up, quick start, tests and benchmark.
#   make quickstart   build everything into .venv and run scenarios/quickstart.toml
#   make test         build, then run every test (cargo and pytest)
#   make bench        engine packets per second on fixed scenarios

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.ccarena-built
SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml pyproject.toml

.PHONY: install quickstart test test-rust test-python bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) $(SOURCES)
	$(PY) -m pip install --quiet "maturin>=1.5,<2"
	$(VENV)/bin/maturin develop --quiet --release --extras test
	touch $(STAMP)

install: $(STAMP)

quickstart: $(STAMP)
	$(VENV)/bin/ccarena run scenarios/quickstart.toml

test-rust:
	cargo test --quiet --workspace --exclude ccarena-py

test-python: $(STAMP)
	$(PY) -m pytest -q tests

test: test-rust test-python

bench:
	bash bench/run.sh

clean:
	rm -rf $(VENV) target

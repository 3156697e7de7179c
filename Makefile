# The two commands of the README's Quick start: `make build` and `make test`.
# Both create a virtual environment in .venv on first use and install derive into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: build test lint bench fuzz docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

build: $(STAMP)
	$(BIN)/derive build

# the suite on the machine's CPUs (at most 4 processes), each test file whole on one of them: its module fixtures
# (a built site, a checked library) are made once
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check derive theorems tests bench

bench: $(STAMP)
	$(BIN)/python bench/run.py

# the long fuzz and fault campaign (tests/fuzz/ scaled up, a fresh seed); FUZZ_ARGS="--scale 100 --seed 7"
fuzz: $(STAMP)
	$(BIN)/python bench/fuzz.py $(FUZZ_ARGS)

# the documentation site (docs/, mkdocs.yml) into build/site; strict: a broken link fails
docs: $(STAMP)
	$(BIN)/python -m mkdocs build --strict

clean:
	rm -rf build $(VENV)

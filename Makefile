# Every target builds the environment it needs, so a fresh machine with only python3 and pip works.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The oldest pydantic-evals we support (the first with the agentic built-ins), tested in its own venv.
MIN_PYDANTIC_EVALS := 2.4.0
MIN_VENV := .venv-min

.PHONY: install demo test lint typecheck pytest test-min bench clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/python -m examples.demo

lint: install
	$(BIN)/ruff check agentic_evals tests benchmarks fixtures examples docs
	$(BIN)/ruff format --check agentic_evals tests benchmarks fixtures examples docs

typecheck: install
	$(BIN)/mypy

pytest: install
	$(BIN)/pytest -q

test: lint typecheck pytest

$(MIN_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install -q --upgrade pip
	$(MIN_VENV)/bin/python -m pip install -q -e '.[dev]' 'pydantic-evals==$(MIN_PYDANTIC_EVALS)' 'pydantic-ai-slim==$(MIN_PYDANTIC_EVALS)'
	touch $@

# The whole suite against the oldest supported pydantic-evals (and its matching pydantic-ai).
test-min: $(MIN_VENV)/.installed
	$(MIN_VENV)/bin/pytest -q

bench: install
	$(BIN)/python -m benchmarks.run

clean:
	rm -rf $(VENV) $(MIN_VENV)

# Every target builds the environment it needs, so a fresh machine with only python3 and pip works.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The oldest versions we declare support for, tested in their own venv: pydantic-evals 2.4.0 (the
# first with the agentic built-ins) with its pydantic-ai, and the lower bounds in pyproject.toml,
# on the oldest Python we support when the machine has it.
MIN_PYDANTIC_EVALS := 2.4.0
MIN_PINS := 'pydantic-evals==$(MIN_PYDANTIC_EVALS)' 'pydantic-ai-slim==$(MIN_PYDANTIC_EVALS)' 'pydantic==2.12.0' \
	'opentelemetry-api==1.30.0' 'opentelemetry-sdk==1.30.0' 'opentelemetry-proto==1.30.0' 'rich==13.9.4' 'orjson==3.10.0' \
	'opentelemetry-exporter-otlp-proto-http==1.30.0' 'opentelemetry-exporter-otlp-proto-grpc==1.30.0' \
	'ray[data]==2.40.0' 'pyarrow==17.0.0'
PY310_CANDIDATES := python3.10 $(wildcard $(HOME)/.pyenv/versions/3.10*/bin/python3.10 /root/.pyenv/versions/3.10*/bin/python3.10)
MIN_PYTHON ?= $(firstword $(shell for p in $(PY310_CANDIDATES); do $$p -c '' >/dev/null 2>&1 && echo $$p; done) $(PYTHON))
MIN_VENV := .venv-min

.PHONY: install demo test test-fast lint typecheck pytest test-min bench bench-frameworks bench-langchain bench-html bench-run bench-scale fuzz clean browser

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

install: $(BIN)/.installed

# The demo's own venv: the package and its runtime dependencies, all that examples/demo.py imports (not the
# development tools, Ray and Playwright of `install`).
DEMO_VENV ?= .venv-demo

$(DEMO_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install -q --upgrade pip
	$(DEMO_VENV)/bin/python -m pip install -q -e .
	touch $@

demo: $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/python -m examples.demo

lint: install
	$(BIN)/ruff check agentic_evals tests benchmarks fixtures examples docs
	$(BIN)/ruff format --check agentic_evals tests benchmarks fixtures examples docs

# Debian's chromium, which the HTML report's browser tests open reports in (Playwright drives it and never
# downloads a browser). Installed with apt-get as root, through sudo otherwise; nothing to do when it is there.
# AGENTIC_EVALS_CHROMIUM names another chromium; AGENTIC_EVALS_SKIP_BROWSER=1 skips the browser tests instead.
browser:
	@if command -v chromium >/dev/null 2>&1 || [ -x "$$AGENTIC_EVALS_CHROMIUM" ] || [ "$$AGENTIC_EVALS_SKIP_BROWSER" = 1 ]; then \
		exit 0; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
		echo "make browser: chromium is missing and there is no apt-get; install chromium, set AGENTIC_EVALS_CHROMIUM" \
			"to its path, or set AGENTIC_EVALS_SKIP_BROWSER=1 to skip the browser tests" >&2; exit 1; \
	elif [ "$$(id -u)" = 0 ]; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; \
	elif command -v sudo >/dev/null 2>&1; then \
		sudo apt-get update -q && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; \
	else \
		echo "make browser: chromium is missing; as root: apt-get install chromium (or set AGENTIC_EVALS_CHROMIUM, or" \
			"AGENTIC_EVALS_SKIP_BROWSER=1 to skip the browser tests)" >&2; exit 1; \
	fi

typecheck: install
	$(BIN)/mypy

# The suite spread over the machine's cores (pytest-xdist), one test file per worker at a time.
XDIST := -n auto --dist loadgroup

pytest: install browser
	$(BIN)/pytest -q $(XDIST)

test: lint typecheck pytest

# Everything but the tests marked slow (they start a Python interpreter): a quick check while working.
# `make test` and CI still run every test.
test-fast: install
	$(BIN)/pytest -q $(XDIST) -m "not slow"

$(MIN_VENV)/.installed: pyproject.toml Makefile
	rm -rf $(MIN_VENV)
	$(MIN_PYTHON) -m venv $(MIN_VENV)
	$(MIN_VENV)/bin/python -m pip install -q --upgrade pip
	$(MIN_VENV)/bin/python -m pip install -q -e '.[dev]' $(MIN_PINS)
	touch $@

# The whole suite against the oldest supported versions.
test-min: $(MIN_VENV)/.installed browser
	$(MIN_VENV)/bin/python --version
	$(MIN_VENV)/bin/pytest -q $(XDIST)

bench: install
	$(BIN)/python -m benchmarks.run

# Extraction on every framework fixture replicated to 2,000 calls: about 5 minutes, so not part of `bench`.
bench-frameworks: install
	$(BIN)/python -m benchmarks.frameworks_bench

# tool_call_match against LangChain agentevals' trajectory match (about 5.5 minutes). agentevals is never our
# dependency: the benchmark makes its own venv (AGENTEVALS_VENV), pinned as scripts/langchain_reference.py pins it.
AGENTEVALS_VENV ?= /tmp/agentevals-venv
bench-langchain:
	$(PYTHON) -m benchmarks.langchain_bench --venv $(AGENTEVALS_VENV)

# The HTML report of 1,000 and 10,000 cases: size, render time, and paint and first rows in Debian's chromium.
bench-html: install browser
	$(BIN)/python -m benchmarks.html_bench

# `run` on 10,000 generated support-agent traces: wall time and the share of each part under cProfile.
bench-run: install
	$(BIN)/python -m benchmarks.run_profile

# Scale (benchmarks/scale_bench.py): 100,000 traces of 10 to 50 spans, scored at 10k and 100k by one process,
# two workers and Ray on this machine (about 25 minutes; the set, 330 MB gzipped, is made once in SCALE_DIR).
SCALE_DIR ?= /tmp/agentic-evals-scale
bench-scale: install
	test -f $(SCALE_DIR)/traces-0009.otlp.jsonl.gz || $(BIN)/python -m benchmarks.scale_bench generate $(SCALE_DIR) --traces 100000 --lean --gzip
	$(BIN)/python -m benchmarks.scale_bench measure $(SCALE_DIR) --files 1 --workers 1 2 --ray
	$(BIN)/python -m benchmarks.scale_bench measure $(SCALE_DIR) --files 10 --workers 1 2 --ray

# The fuzzing harness (tests/fuzz) at a size CI does not afford: FUZZ_CASES cases or examples per test.
FUZZ_CASES ?= 5000
FUZZ_CLI_CASES ?= 200
fuzz: install
	AGENTIC_EVALS_FUZZ_CASES=$(FUZZ_CASES) AGENTIC_EVALS_FUZZ_CLI_CASES=$(FUZZ_CLI_CASES) $(BIN)/pytest -q tests/fuzz

clean:
	rm -rf $(VENV) $(MIN_VENV) $(DEMO_VENV)

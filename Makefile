# Two commands do everything on a bare machine (Python 3.11+ with pip):
#   make demo   set up .venv and run the main job against the local sandbox
#   make test   set up .venv and run lint, types, import layers and the test suite
#   make test-fast  the same without the tests marked slow
# Set-up is idempotent: it reinstalls only when pyproject.toml changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO_OUT ?= demo-output

.PHONY: help setup browser airflow demo lab explorer test test-fast lint format types layers pytest pytest-fast docs bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "edgereports needs Python 3.11 or newer (PYTHON=$(PYTHON))"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) \
		|| { $(PYTHON) -m pip install --user virtualenv && $(PYTHON) -m virtualenv $(VENV); }
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,sandbox,docs,delta,iceberg,notebook,polars]'
	@# the bytecode a regular install compiles (an editable one does not, and with
	@# PYTHONDONTWRITEBYTECODE set every process would compile the package again)
	$(BIN)/python -m compileall -q edgereports >/dev/null
	@touch $(STAMP)

setup: $(STAMP) browser  ## create .venv and install the package with the test tools

# Airflow 3 pins versions the project's other tools do not share, so it has an environment of
# its own; the suite runs the Airflow example's DAG in it (airflow dags test).
AIRFLOW_VENV  := .venv-airflow
AIRFLOW_STAMP := $(AIRFLOW_VENV)/.installed

$(AIRFLOW_STAMP): pyproject.toml
	@test -x $(AIRFLOW_VENV)/bin/python || $(PYTHON) -m venv $(AIRFLOW_VENV)
	$(AIRFLOW_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(AIRFLOW_VENV)/bin/python -m pip install --quiet 'apache-airflow>=3.0' -e '.[delta]'
	@touch $(AIRFLOW_STAMP)

airflow: $(AIRFLOW_STAMP)  ## Airflow 3 in .venv-airflow, for the test of the Airflow example

# The browser test drives Debian's Chromium through its chromedriver (a test tool's own browser
# download does not work here). Installed only when missing, and only where apt-get exists.
browser:  ## install Debian's chromium and chromium-driver when missing (as root)
	@command -v chromium >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			chromium chromium-driver; }

demo: $(STAMP)  ## run every preset against the local sandbox: Parquet, PNG charts, index.html
	$(BIN)/edgereports demo --out $(DEMO_OUT)

lab: $(STAMP)  ## JupyterLab on notebooks/ with a sandbox running, settings exported (loopback)
	$(BIN)/edgereports lab --notebooks notebooks

explorer: $(STAMP)  ## the explorer notebook as a web app (Voila) with a sandbox (loopback)
	$(BIN)/edgereports explorer --notebooks notebooks

lint: $(STAMP)  ## ruff lint and format check
	$(BIN)/ruff check edgereports tests benchmarks sample_data examples docs/_griffe
	$(BIN)/ruff format --check edgereports tests benchmarks sample_data examples docs/_griffe

format: $(STAMP)  ## apply ruff's fixes and formatting
	$(BIN)/ruff check --fix edgereports tests benchmarks sample_data examples docs/_griffe
	$(BIN)/ruff format edgereports tests benchmarks sample_data examples docs/_griffe

types: $(STAMP)  ## mypy --strict on the package
	$(BIN)/mypy

layers: $(STAMP)  ## the import-layer contracts (docs/design.md)
	$(BIN)/lint-imports

pytest: $(STAMP) browser airflow  ## the test suite (installs Debian's chromium and Airflow's environment when missing)
	$(BIN)/pytest

pytest-fast: $(STAMP)  ## the test suite without the tests marked slow
	$(BIN)/pytest -m "not slow"

docs: $(STAMP)  ## build the docs site into site/ (mkdocs --strict; the suite builds it too)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

test: lint types layers pytest  ## everything CI runs (the suite builds the docs with --strict)

test-fast: lint types layers pytest-fast  ## lint, types, layers and the suite without slow tests

clean:  ## remove the environment and caches
	rm -rf $(VENV) $(AIRFLOW_VENV) site .pytest_cache .mypy_cache .ruff_cache .hypothesis .import_linter_cache $(DEMO_OUT)

# Two entry points for a fresh machine (see README): `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE := examples/eventlogs/etl-local2.zstd

.PHONY: install demo test lint clean

$(STAMP): pyproject.toml $(wildcard perfmodel/simulate/*.c) $(wildcard jvm/src/*/*.java jvm/src/*/*/*.java jvm/src/*/*/*/*.java)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,dask]'
	$(BIN)/pip check
	PYTHON=$(BIN)/python ./jvm/build.sh
	PYTHON=$(BIN)/python scripts/install_jdk_sources.sh
	scripts/install_chromium.sh
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/perfmodel diagnose $(EXAMPLE)

test: install lint
	$(BIN)/python -m pytest -q -p no:cacheprovider

# Style, types and architecture (import-linter's contracts in .importlinter); `make test` runs it.
lint: install
	$(BIN)/ruff check perfmodel tests benchmarks scripts experiments
	$(BIN)/ruff format --check perfmodel tests benchmarks scripts experiments
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build

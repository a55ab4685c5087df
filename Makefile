# Two entry points for a fresh machine (see README): `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE := examples/eventlogs/etl-local2.zstd
LOCK := requirements.lock
JAVA_SOURCES := $(shell find jvm/src -name '*.java')

.PHONY: install demo test test-fast lint docs wheel wheel-check lock clean

# Development and CI: every version pinned by the lock (all extras), the plugin jar, then
# perfmodel itself, editable, built with the lock's setuptools (no isolated build
# environment, so nothing but the lock's packages is fetched).
$(STAMP): $(LOCK) pyproject.toml setup.py $(wildcard perfmodel/simulate/*.c) $(JAVA_SOURCES)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -r $(LOCK)
	PYTHON=$(BIN)/python ./jvm/build.sh
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/pip check
	PYTHON=$(BIN)/python scripts/install_jdk_sources.sh
	scripts/install_chromium.sh
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/perfmodel diagnose $(EXAMPLE)

# The whole suite, tests/unit and tests/e2e, on three workers (pytest-xdist): a file's tests
# stay on one worker, so its module fixtures run once; the 15 slowest are listed at the end.
# Three workers on two cores: while one waits (on a server, a timeout, a retry's back-off),
# the others' work fills its core. The static checks run beside the suite (scripts/test.sh).
#
# The suite starts a few hundred Python processes (the CLI, PySpark's workers), each compiling
# perfmodel's modules again where no bytecode was kept, as when PYTHONDONTWRITEBYTECODE is set;
# their bytecode goes to build/pycache instead (nothing is written beside the sources), and
# pytest keeps its rewritten test modules there too: about 6 s less per pytest process start.
PYTEST := env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$(CURDIR)/build/pycache \
	$(BIN)/python -m pytest -q -p no:cacheprovider
TEST_WORKERS ?= 3
FAST_WORKERS ?= 2

test: install
	MAKE="$(MAKE)" scripts/test.sh $(PYTEST) -n $(TEST_WORKERS) --dist loadfile \
		--no-loadscope-reorder --durations=15

# The unit tests alone (no Spark, no Chromium, no recording): under a minute. They never wait,
# so one worker per core.
test-fast: install
	$(PYTEST) -n $(FAST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 tests/unit

# Style, types and architecture (import-linter's contracts in .importlinter); `make test` runs it.
lint: install
	$(BIN)/ruff check perfmodel tests benchmarks scripts experiments setup.py
	$(BIN)/ruff format --check perfmodel tests benchmarks scripts experiments setup.py
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

# The documentation site (mkdocs.yml); --strict turns a broken link into a failure.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

# The wheel users install (dist/), with the plugin jar, plotly.js and the models inside.
wheel: install
	rm -rf build/lib build/lib.* build/bdist.*
	$(BIN)/python -m build --wheel --no-isolation --outdir dist .

# The light install, checked in a clean venv (scripts/check_wheel.sh); `make test` runs it.
wheel-check: install
	VENV_PYTHON=$(BIN)/python BASE_PYTHON=$(PYTHON) scripts/check_wheel.sh

# Re-resolve the lock from pyproject.toml (all extras) and lock-pins.txt. pip-compile pins
# the CPU build of torch as found on this machine (torch==X+cpu); the lock names the version
# without the local label (see lock-pins.txt).
lock:
	$(BIN)/python -m piptools compile --all-extras --strip-extras --no-allow-unsafe --unsafe-package perfmodel \
		--no-emit-index-url --no-emit-find-links -c lock-pins.txt --quiet \
		--output-file $(LOCK) pyproject.toml
	sed -i -E 's/^torch==([0-9.]+)\+cpu$$/torch==\1/' $(LOCK)

clean:
	rm -rf $(VENV) build dist

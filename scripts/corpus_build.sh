#!/usr/bin/env bash
# Build the labeled code corpus (corpora/build/v1) from source installed on this machine:
# the JDK's src.zip, the Python standard library and the project's site-packages.
# Installs the JDK sources (Debian/Ubuntu: openjdk-17-source) when no src.zip is found;
# note that apt may pull a newer openjdk-17 patch release along with it.
# Extra arguments go to `corpus build` (e.g. --jobs 4, --root jdk=/path/to/src.zip).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}

PYTHON="$PY" scripts/install_jdk_sources.sh

exec "$PY" -m perfmodel.cli.corpus build --out corpora/build/v1 --split corpora/split.json "$@"

#!/usr/bin/env bash
# Make the JDK's src.zip available: the source locator and the corpus builder read the JDK's
# own code from it. Installs Debian's openjdk-17-source when the JDK that runs Spark (JAVA_HOME
# or the java on PATH) has no src.zip: frames come from that JDK, and another JDK's sources
# differ (apt may pull a newer openjdk-17 patch release along with it; fine for perfmodel).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
if "$PY" -c 'import sys; from perfmodel.embed.source.roots import find_runtime_jdk_src_zip as f; sys.exit(f() is None)'; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install_jdk_sources: no JDK src.zip and no apt-get; JDK frames will be located by name only" >&2
    exit 0
fi
echo "install_jdk_sources: the JDK on PATH has no src.zip; installing openjdk-17-source" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-source >/dev/null

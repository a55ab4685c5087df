#!/usr/bin/env bash
# Builds the perfmodel Spark plugin and JFR sample reader from source into the package:
#   perfmodel/profile/perfmodel-plugin.jar   (package data: wheels ship it, never committed)
# The plugin compiles against Spark's jars: $SPARK_HOME/jars when SPARK_HOME is set, else the
# jars that ship with pyspark, found through the given Python (default: .venv/bin/python, else
# python3). `make install` runs it, and so does the wheel build (setup.py) when the jar is
# missing or older than its sources.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
if [[ -n "${SPARK_HOME:-}" && -d "$SPARK_HOME/jars" ]]; then
  spark_jars="$SPARK_HOME/jars"
else
  spark_jars="$("$python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))' 2>/dev/null || true)"
fi
if [[ -z "$spark_jars" || ! -d "$spark_jars" ]]; then
  echo "jvm/build.sh: no Spark jars (set SPARK_HOME, or install pyspark for $python)" >&2
  exit 1
fi
for tool in javac jar; do
  if ! command -v "$tool" >/dev/null; then
    echo "jvm/build.sh: no $tool on PATH (a JDK 17 or newer is needed)" >&2
    exit 1
  fi
done
out="$root/perfmodel/profile"
classes="$(mktemp -d "${TMPDIR:-/tmp}/perfmodel-jvm.XXXXXX")"
trap 'rm -rf "$classes"' EXIT
mapfile -t sources < <(find "$root/jvm/src" -name '*.java' | sort)
javac --release 17 -nowarn -encoding UTF-8 -cp "$spark_jars/*" -d "$classes" "${sources[@]}"
jar --create --file "$out/perfmodel-plugin.jar.tmp" -C "$classes" .
mv "$out/perfmodel-plugin.jar.tmp" "$out/perfmodel-plugin.jar"
echo "built $out/perfmodel-plugin.jar"

#!/usr/bin/env bash
# Builds the perfmodel Spark plugin and JFR sample reader from source:
#   build/jvm/perfmodel-plugin.jar
# The plugin compiles against the Spark jars that ship with pyspark, found through the given
# Python (default: .venv/bin/python, else python3). Nothing built here is committed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
spark_jars="$("$python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
if [[ ! -d "$spark_jars" ]]; then
  echo "jvm/build.sh: no Spark jars at $spark_jars (is pyspark installed?)" >&2
  exit 1
fi
out="$root/build/jvm"
classes="$(mktemp -d "${TMPDIR:-/tmp}/perfmodel-jvm.XXXXXX")"
trap 'rm -rf "$classes"' EXIT
mkdir -p "$out"
mapfile -t sources < <(find "$root/jvm/src" -name '*.java' | sort)
javac --release 17 -nowarn -encoding UTF-8 -cp "$spark_jars/*" -d "$classes" "${sources[@]}"
jar --create --file "$out/perfmodel-plugin.jar.tmp" -C "$classes" .
mv "$out/perfmodel-plugin.jar.tmp" "$out/perfmodel-plugin.jar"
echo "built $out/perfmodel-plugin.jar"

"""The build step pyproject.toml cannot declare: a package-data file made at build time.

It is generated into the source tree (git ignores it), so an editable install and a wheel see
the same file:

- ``perfmodel/profile/perfmodel-plugin.jar``: the Spark plugin and the JFR sample reader,
  compiled from ``jvm/src`` by ``jvm/build.sh`` (a JDK and Spark's jars: pyspark in the build
  environment, or ``SPARK_HOME``). Built when missing or older than its sources. Without a
  JDK or Spark the build warns and the package has no jar; ``perfmodel record`` then says so
  and how to build it. ``make install`` and ``make wheel`` build it with the project's venv.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
JAR = ROOT / "perfmodel" / "profile" / "perfmodel-plugin.jar"
JVM_SOURCES = ROOT / "jvm" / "src"


def _warn(message: str) -> None:
    print(f"perfmodel build: warning: {message}", file=sys.stderr)


def plugin_jar() -> None:
    """Compile the jar unless it is newer than every Java source."""
    sources = list(JVM_SOURCES.rglob("*.java")) if JVM_SOURCES.is_dir() else []
    if JAR.is_file() and all(s.stat().st_mtime <= JAR.stat().st_mtime for s in sources):
        return
    if not sources:
        _warn(f"no jvm/src to compile; the package has no {JAR.name}")
        return
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(ROOT / "jvm" / "build.sh")], env=env, check=False)
    if done.returncode != 0:
        state = "an out-of-date" if JAR.is_file() else "no"
        _warn(
            f"could not compile the JVM plugin (see above); the package has {state} "
            f"{JAR.name}, which `perfmodel record` needs: install a JDK 17 and pyspark (or set "
            "SPARK_HOME) where the package is built, or run jvm/build.sh before building"
        )


class BuildPy(build_py):
    """build_py that makes the generated package data first."""

    def run(self) -> None:
        plugin_jar()
        super().run()


setup(cmdclass={"build_py": BuildPy})

"""Build steps pyproject.toml cannot declare: two package-data files made at build time.

Both are generated into the source tree (git ignores them), so an editable install and a
wheel see the same files:

- ``perfmodel/profile/perfmodel-plugin.jar``: the Spark plugin and the JFR sample reader,
  compiled from ``jvm/src`` by ``jvm/build.sh`` (a JDK and Spark's jars: pyspark in the build
  environment, or ``SPARK_HOME``). Built when missing or older than its sources. Without a
  JDK or Spark the build warns and the package has no jar; ``perfmodel record`` then says so
  and how to build it. ``make install`` and ``make wheel`` build it with the project's venv.
- ``perfmodel/report/html/assets/plotly.min.js``: plotly.js, inlined into every HTML report,
  copied from the ``plotly`` package of the build environment (a build requirement), so the
  installed package needs neither plotly nor the network to write a report.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
JAR = ROOT / "perfmodel" / "profile" / "perfmodel-plugin.jar"
JVM_SOURCES = ROOT / "jvm" / "src"
PLOTLY_JS = ROOT / "perfmodel" / "report" / "html" / "assets" / "plotly.min.js"


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


def plotly_js() -> None:
    """Copy plotly.min.js from the plotly package when it differs from the one we have."""
    spec = importlib.util.find_spec("plotly")
    locations = list(spec.submodule_search_locations or []) if spec else []
    source = Path(locations[0]) / "package_data" / "plotly.min.js" if locations else None
    if source is None or not source.is_file():
        if PLOTLY_JS.is_file():
            return
        raise SystemExit(
            "perfmodel build: plotly.js is needed to build the package (the HTML report inlines "
            "it): install the build requirement `plotly` (pyproject.toml [build-system])"
        )
    if not PLOTLY_JS.is_file() or PLOTLY_JS.read_bytes() != source.read_bytes():
        shutil.copyfile(source, PLOTLY_JS)


class BuildPy(build_py):
    """build_py that makes the generated package data first."""

    def run(self) -> None:
        plugin_jar()
        plotly_js()
        super().run()


setup(cmdclass={"build_py": BuildPy})

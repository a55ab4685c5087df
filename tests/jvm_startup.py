"""Cheaper Spark start-ups for the suite: a class-data archive, C1 only, the serial collector,
and a Spark home whose Python processes import the installed PySpark.

An empty PySpark application costs the 2-core development machine about 16 s of CPU (10 s of
wall time), most of it its driver JVM loading and verifying some 12,000 of Spark's classes and
compiling them with both JIT tiers, and the suite starts dozens of drivers. Two standard
HotSpot options cut that to about 6 s of CPU (4.7 s of wall time; three runs each,
2026-11-29):

* ``-XX:SharedArchiveFile``: a dynamic class-data archive (CDS) of the classes a small Spark
  application loads, dumped once by ``-XX:ArchiveClassesAtExit`` and kept under
  ``build/test-jvm/`` for later runs. The JVM checks the archive against its own version and
  class path and, where they differ (a recorded run puts the plugin jar first on the driver's
  class path), runs without it; its warning saying so is switched off.
* ``-XX:TieredStopAtLevel=1``: short test jobs never pay back C2's compilation.
* ``-XX:+UseSerialGC``: the small heaps of test jobs are collected in one thread, without
  G1's concurrent and parallel threads: about a tenth less of the JVM's CPU on the TPC-H
  test's 22 queries (26.6 s against 23.7 s, two runs each, 2026-11-30). A recording files
  the collector's work (the "VM Thread") under "jvm gc" as it does G1's threads.

They reach every driver through ``SPARK_SUBMIT_OPTS``, which Spark's launcher adds to the
driver's java command for `spark-submit` and for PySpark's in-process sessions alike, and the
History Servers and the standalone cluster's master and workers through
``SPARK_DAEMON_JAVA_OPTS`` (a History Server is up after 3.1 s of CPU instead of 7.2 s, two
runs each, 2026-11-29). No variable reaches the cluster's executors: its test gives them the
speed options through ``spark.executor.extraJavaOptions`` (their class path holds the plugin
jar, so the archive would not be used). The launcher's own small JVM keeps the JVM's
defaults. What the jobs compute does not change. How they run does, a little: in local mode
the tasks run in the driver, whose code is then compiled by C1 alone, so long tasks run slower
and a recording shows no C2 compiler threads and no G1 threads. A user's own settings of
either variable are left as they are.

Spark puts its home's ``python/lib/pyspark.zip`` first on the path of every Python process it
starts: the driver of a `spark-submit` and each executor's Python daemon. Python imports
PySpark from that archive, where it finds no compiled modules, so each of those processes
compiles PySpark's modules from source again, and each worker pays some 12 ms more when Spark
adds its files' directory to the path (``importlib.invalidate_caches`` reads the archive's
index anew). The suite's ``SPARK_HOME`` is therefore a directory of links to PySpark's
installation (``build/test-jvm/spark-home-*``) without ``python/lib``: the same jars, scripts
and Python code, with the Python processes importing PySpark from the installed package,
compiled once. A PySpark job with Python workers (tests/data/record/job.py at scale 0.5) took
14.0-17.5 s of CPU instead of 16.8-20.1 s (four runs each, alternated, 2026-12-01). Stack
samples of those processes name PySpark's files in site-packages rather than inside the
archive. A user's own ``SPARK_HOME`` is left as it is (the archive, dumped from the suite's
home, is then not used).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SPEED_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
QUIET_CDS = "-Xlog:cds=off -Xlog:cds+dynamic=off"

_DUMP_APP = """
import sys
from pyspark.sql import SparkSession, functions as F
out = sys.argv[1]
spark = (SparkSession.builder.master("local[2]").appName("perfmodel test CDS dump")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
         .getOrCreate())
df = spark.range(2000).withColumn("k", F.col("id") % 7)
df.groupBy("k").agg(F.count("*"), F.sum("id")).write.mode("overwrite").parquet(out + "/p")
spark.read.parquet(out + "/p").join(df, "k").count()
spark.sparkContext.parallelize(range(100), 2).map(lambda x: (x % 3, x)).reduceByKey(max).collect()
spark.stop()
"""


def _installation() -> tuple[str, Path] | None:
    """What the archive and the home depend on (the java that runs Spark and the PySpark
    installation) as a key, and PySpark's directory."""
    try:
        import pyspark
    except ImportError:
        return None
    java_home = os.environ.get("JAVA_HOME")
    java = Path(java_home) / "bin" / "java" if java_home else shutil.which("java")
    if java is None or not Path(java).exists():
        return None
    java = Path(java).resolve()
    parts = [str(java), str(java.stat().st_mtime_ns), pyspark.__file__, pyspark.__version__]
    # An archive holds the class path of the Spark home it was dumped from.
    parts.append("dumped from the home of links")
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]
    return key, Path(pyspark.__file__).parent


def _link_home(home: Path, source: Path) -> None:
    """Make ``home`` a Spark home of links to ``source`` (PySpark's installation) but for
    ``python/lib``, whose archives Spark puts first on its Python processes' path."""
    partial = Path(tempfile.mkdtemp(prefix="home-", dir=home.parent))
    for entry in source.iterdir():
        if entry.name != "python":
            (partial / entry.name).symlink_to(entry)
    if (source / "python" / "pyspark").exists():
        (partial / "python").mkdir()
        (partial / "python" / "pyspark").symlink_to(source / "python" / "pyspark")
    partial.rename(home)  # whole or absent


def _dump(archive: Path, home: Path) -> bool:
    """Run a small Spark application from ``home`` that writes ``archive`` as its driver
    exits."""
    work = Path(tempfile.mkdtemp(prefix="dump-", dir=archive.parent))
    partial = work / "dump.jsa"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_HOME": str(home)}
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.pop("SPARK_CONF_DIR", None)
    env["SPARK_SUBMIT_OPTS"] = f"-XX:ArchiveClassesAtExit={partial} {SPEED_OPTIONS}"
    script = work / "dump_app.py"
    script.write_text(_DUMP_APP)
    try:
        proc = subprocess.run(
            [sys.executable, str(script), str(work)],
            capture_output=True,
            env=env,
            timeout=300,
            cwd=work,
        )
        ok = proc.returncode == 0 and partial.exists()
    except subprocess.TimeoutExpired:
        ok = False
    if ok:
        partial.replace(archive)  # whole or absent: a cut-off dump is never used
    shutil.rmtree(work, ignore_errors=True)
    return ok


def jvm_environment(cache: Path) -> dict[str, str]:
    """``SPARK_HOME``, ``SPARK_SUBMIT_OPTS`` for the suite's drivers and
    ``SPARK_DAEMON_JAVA_OPTS`` for its History Servers and standalone daemons, making the
    Spark home of links and dumping the archive into ``cache`` when they are not there yet
    (one session at a time; earlier ones are removed). Without Java or PySpark, nothing (those
    tests skip anyway); where no archive can be made or used (a dump that failed once,
    remembered by a marker file; a path with blanks, which Spark's launcher would split), the
    home and C1 alone."""
    installed = _installation()
    if installed is None:
        return {}
    key, source = installed
    archive = cache / f"spark-{key}.jsa"
    home = cache / f"spark-home-{key}"
    failed = archive.with_suffix(".failed")
    usable = not any(c.isspace() for c in str(archive))
    if not home.is_dir() or (usable and not archive.exists() and not failed.exists()):
        try:
            cache.mkdir(parents=True, exist_ok=True)
            with (cache / "dump.lock").open("w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not home.is_dir():
                    for old in cache.glob("spark-home-*"):
                        shutil.rmtree(old)  # links only: what they point to stays
                    _link_home(home, source)
                if usable and not archive.exists() and not failed.exists():
                    for old_archive in cache.glob("spark-*.jsa"):
                        old_archive.unlink()
                    if not _dump(archive, home):
                        failed.touch()
        except OSError:  # a read-only checkout: the JVMs start as they come
            return {}
    if usable and archive.exists():
        options = f"-XX:SharedArchiveFile={archive} {QUIET_CDS} {SPEED_OPTIONS}"
    else:
        options = SPEED_OPTIONS
    return {
        "SPARK_HOME": str(home),
        "SPARK_SUBMIT_OPTS": options,
        "SPARK_DAEMON_JAVA_OPTS": options,
    }

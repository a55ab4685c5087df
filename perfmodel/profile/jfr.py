"""Java Flight Recorder: the JVM flags that record samples, and reading recordings into samples.

Reading uses the small ``perfmodel.jfr.SampleDump`` program (jvm/src, built into
``perfmodel/profile/perfmodel-plugin.jar``, package data, when the package is built) rather than
``jfr print --json``: the JSON of a 40 s job is tens of MB of every event field, while the
reader walks the recording once with the JDK's ``jdk.jfr.consumer`` API and emits only
deduplicated frames, stacks, threads and compact sample lines. The same jar holds the Spark
plugin whose task start/end events let samples join to tasks exactly (by thread and time) in
:func:`read_recordings`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from perfmodel.profile import sample_dump
from perfmodel.profile.sample_dump import (  # re-exported: the JFR side's names
    ADD_EXPORTS as ADD_EXPORTS,
)
from perfmodel.profile.sample_dump import JfrError as JfrError
from perfmodel.profile.sample_dump import JfrRecording as JfrRecording
from perfmodel.profile.sample_dump import TaskSpan as TaskSpan
from perfmodel.profile.sample_dump import spans_table as spans_table

PLUGIN_CLASS = "perfmodel.spark.PerfmodelPlugin"
READER_CLASS = "perfmodel.jfr.SampleDump"
JAR_ENV = "PERFMODEL_JVM_JAR"
STACK_DEPTH = 2048
"""JFR's maximum; its default of 64 cuts Spark's deep stacks off above the task code."""

TASK_THREAD_PREFIX = "Executor task launch worker"


PACKAGED_JAR = Path(__file__).resolve().parent / "perfmodel-plugin.jar"
"""Where the build puts the jar (jvm/build.sh, run by `make install` and by the wheel build)."""


def plugin_jar() -> Path:
    """The built jar with the plugin and the reader (``$PERFMODEL_JVM_JAR`` overrides)."""
    override = os.environ.get(JAR_ENV)
    jar = Path(override) if override else PACKAGED_JAR
    if not jar.is_file():
        raise JfrError(
            f"the perfmodel JVM jar is missing ({jar}): this installation was built without "
            f"a JDK or pyspark to compile it; in a source checkout run `jvm/build.sh` (part of "
            f"`make install`), or point {JAR_ENV} at a built copy"
        )
    return jar


def java_executable() -> str:
    """The ``java`` to run the reader with: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise JfrError(
            "no Java runtime found (set JAVA_HOME or put `java` on PATH); JFR recordings need "
            "a JDK 17 or newer to be read"
        )
    return found


def default_native_interval(interval_ms: int) -> int:
    """Native-method sampling period for a Java sampling period.

    JFR samples up to five threads running Java per period but only *one* thread in native
    code, round-robin. A PySpark JVM keeps threads parked in native reads all its life; the
    plugin takes those that only ever wait out of sampling (IdleThreadExcluder.java), but
    py4j's connection threads stay (they run the driver's work), so a task thread blocked on a
    socket or file still shares the native samples with two or three others. A quarter of the
    Java period gives a task thread about as many native samples as a tenth did before the
    exclusion (benchmarks/native_coverage.py); ``weight_ms`` in the samples table corrects for
    the difference between the periods.
    """
    return max(1, int(interval_ms) // 4)


def jfc_settings(interval_ms: int, native_interval_ms: int | None = None) -> str:
    """A JFR settings file that records only what attribution and the models need.

    Fewer events than JDK's ``default.jfc`` means less overhead; both sample kinds are on
    because file and socket reads show up only as native-method samples, and waits (park,
    monitor) because a blocked task thread is otherwise invisible.
    """
    period = f"{int(interval_ms)} ms"
    native = native_interval_ms or default_native_interval(interval_ms)
    # Blocked threads are invisible to both samplers; waits longer than half an interval are
    # recorded as events with their stack and duration instead.
    wait = max(1, int(interval_ms) // 2)

    def event(name: str, **settings: str) -> str:
        body = "".join(f'<setting name="{k}">{v}</setting>' for k, v in settings.items())
        return f'  <event name="{name}">{body}</event>\n'

    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<configuration version="2.0" label="perfmodel" '
        'description="perfmodel: stack samples and Spark task boundaries">\n'
        + event("jdk.ExecutionSample", enabled="true", period=period)
        + event("jdk.NativeMethodSample", enabled="true", period=f"{int(native)} ms")
        + event("jdk.ActiveSetting", enabled="true")
        + event("jdk.ThreadPark", enabled="true", stackTrace="true", threshold=f"{wait} ms")
        + event("jdk.JavaMonitorWait", enabled="true", stackTrace="true", threshold=f"{wait} ms")
        + event("jdk.JavaMonitorEnter", enabled="true", stackTrace="true", threshold=f"{wait} ms")
        + event("jdk.JVMInformation", enabled="true", period="beginChunk")
        + event("jdk.GarbageCollection", enabled="true", threshold="0 ms")
        + event("jdk.CPULoad", enabled="true", period="1000 ms")
        + event("jdk.CPUInformation", enabled="true", period="beginChunk")
        + event("perfmodel.TaskStart", enabled="true")
        + event("perfmodel.TaskEnd", enabled="true")
        + event("perfmodel.ExecutorInfo", enabled="true")
        + event("perfmodel.ThreadExclusion", enabled="true")
        + "</configuration>\n"
    )


def jvm_options(output_dir: Path, settings: Path, repository: Path) -> str:
    """JVM flags that start a recording at launch and write it into ``output_dir`` on exit.

    ``filename`` is a directory, so every JVM (driver, executors) writes its own
    ``hotspot-pid-<pid>-...jfr``; the repository (where JFR streams chunks while it runs) is
    kept beside it so a JVM that is killed still leaves its chunks behind. The startup log
    line goes off, because the user's output must pass through unchanged. ``ADD_EXPORTS``
    lets the plugin take threads that only wait out of sampling.
    """
    return (
        f"-XX:StartFlightRecording=filename={output_dir}/,settings={settings},dumponexit=true "
        f"-XX:FlightRecorderOptions=stackdepth={STACK_DEPTH},repository={repository} "
        f"-Xlog:jfr+startup=error {ADD_EXPORTS}"
    )


PLUGIN_SAMPLES_SUFFIX = ".jvmsamples"
"""Files the plugin's own sampler writes (TaskSampler.java), in the reader's line format."""
SAMPLES_DIR_KEY = "spark.perfmodel.samples.dir"
SAMPLES_INTERVAL_KEY = "spark.perfmodel.samples.intervalMs"
SAMPLES_WITH_JFR_KEY = "spark.perfmodel.samples.withJfr"
"""With the samples directory: the plugin marks tasks for JFR as well (``--jvm-sampler both``)."""


def is_recording(path: str | Path) -> bool:
    """A JVM sample file ``read_recordings`` reads: a JFR recording or the plugin's samples."""
    return str(path).endswith((".jfr", PLUGIN_SAMPLES_SUFFIX))


def read_recordings(
    paths: Sequence[str | Path], *, jar: Path | None = None, names: Sequence[str] | None = None
) -> list[JfrRecording]:
    """Read JVM sample files into samples with tasks joined from the plugin's events.

    JFR files go through one run of the JVM reader; the plugin's own sample files
    (:data:`PLUGIN_SAMPLES_SUFFIX`) are already in its line format and are parsed here. A file
    that cannot be read gives a :class:`JfrRecording` with ``error`` set rather than an
    exception, so one bad file does not lose the others. ``names`` (default: the paths) is what
    the ``recording`` column says, e.g. a path inside a bundle. The result is in ``paths``'
    order.
    """
    if not paths:
        return []
    labels = list(names) if names is not None else [str(p) for p in paths]
    out: dict[int, JfrRecording] = {}
    jfr_idx = []
    for i, path in enumerate(paths):
        if str(path).endswith(PLUGIN_SAMPLES_SUFFIX):
            out[i] = sample_dump.read_plugin_samples(Path(path), labels[i])
        else:
            jfr_idx.append(i)
    if jfr_idx:
        jar = jar or plugin_jar()
        cmd = [java_executable(), "-XX:+UseSerialGC", "-cp", str(jar), READER_CLASS]
        cmd += [str(paths[i]) for i in jfr_idx]
        proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", check=False)
        if proc.returncode != 0:
            raise JfrError(f"the JFR reader failed (exit {proc.returncode}): {proc.stderr.strip()}")
        read = sample_dump.parse_dump(proc.stdout.splitlines(), [labels[i] for i in jfr_idx])
        out.update(zip(jfr_idx, read, strict=True))
    return [out[i] for i in range(len(paths))]

"""How ``perfmodel record`` is set up: its options, and the Spark configuration that switches
recording on without changing the user's command.

A private ``SPARK_CONF_DIR`` holds a copy of the user's own configuration with perfmodel's
settings *appended* through Spark's administrator keys (``spark.plugins.defaultList``,
``spark.{driver,executor}.defaultJavaOptions`` and ``.defaultExtraClassPath``), which Spark
combines with the user's ``spark.plugins``/``extraJavaOptions``/``extraClassPath`` instead of
being replaced by them.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from perfmodel.profile import bundle, jfr
from perfmodel.profile.record.defaults import DEFAULT_INTERVAL_MS, DEFAULT_JVM_SAMPLER

CONF_DIR = "raw/conf"
JFR_REPOSITORY = "raw/jfr-repository"
PLUGIN_SAMPLES_DIR = "raw/plugin-samples"
"""``jvm_sampler="both"``: the plugin's sample files, kept beside the JFR recordings that the
bundle is read from (`bundle_write.with_plugin_samples` reads the run from these instead)."""
JVM_SAMPLERS = ("jfr", "plugin", "both")
RECORD_DIR_KEY = "spark.perfmodel.record.dir"
DEFAULTS = "spark-defaults.conf"


@dataclass(slots=True)
class RecordOptions:
    """How to record; the defaults are what ``perfmodel record`` uses."""

    out: Path
    interval_ms: int = DEFAULT_INTERVAL_MS
    native_interval_ms: int | None = None
    python_interval_ms: int | None = None
    """py-spy's interval (None: ``interval_ms``). Python workers are sampled by one py-spy
    each, whose CPU grows with the rate and the number of workers; JFR's cost does not. Each
    sample is weighted by its own recording's interval, so the rates may differ."""
    jfr: bool = True
    """JVM stack samples (with ``jvm_sampler``); off: the JVMs run without a sampler."""
    jvm_sampler: str = DEFAULT_JVM_SAMPLER
    """"jfr": a flight recording in every JVM. "plugin": the plugin samples the task threads
    itself (TaskSampler.java), so no JVM starts JFR, whose start-up costs each JVM 0.5-0.6 s
    of CPU (docs/cluster.md); its samples are safepoint-biased and cover task threads only.
    "both" (research): JFR as with "jfr", and the plugin's samples of the same run kept in
    :data:`PLUGIN_SAMPLES_DIR`, so the two samplers can be compared on identical runs; it
    costs the sum of both."""
    plugin_interval_ms: int | None = None
    """The plugin's sampling period with ``jvm_sampler="both"`` (None: ``interval_ms``), so a
    slower plugin period can be compared with JFR's on the same run."""
    pyspy: bool = True
    poll_s: float = 0.25
    """How often the command's process tree is listed: new Python processes get a py-spy,
    idle ones lose theirs, and the resource monitor takes a sample."""
    jvm_exit_timeout_s: float = 120.0
    """How long to wait, after the command ends, for its JVMs to finish writing recordings."""
    monitor: bool = True
    """Process-tree resource monitoring (CPU, memory, I/O) every ``poll_s``."""
    thread_cpu: bool = True
    """Per-thread CPU of the JVMs and Python workers every ``poll_s`` (`thread_cpu`)."""
    daemon_pids: tuple[int, ...] = ()
    """Long-running processes outside the command that start its executors (a standalone
    cluster's workers): what they start while the command runs (executor JVMs, their Python
    workers) is sampled and waited for like the command's own processes; the daemons are not.
    The resource monitor still covers the command's own tree only."""


def uses_jfr(options: RecordOptions) -> bool:
    return options.jfr and options.jvm_sampler in ("jfr", "both")


def plugin_samples_dir(out: Path, options: RecordOptions) -> Path | None:
    """Where the plugin's own sampler writes, or None when it does not run."""
    if not options.jfr or options.jvm_sampler == "jfr":
        return None
    return out / (PLUGIN_SAMPLES_DIR if options.jvm_sampler == "both" else bundle.JFR_DIR)


def python_interval(options: RecordOptions) -> int:
    """py-spy's sampling interval in milliseconds."""
    return options.python_interval_ms or options.interval_ms


def user_conf_dir(env: Mapping[str, str]) -> Path | None:
    """The configuration directory Spark would use for this environment, if any."""
    if env.get("SPARK_CONF_DIR"):
        path = Path(env["SPARK_CONF_DIR"])
        return path if path.is_dir() else None
    home = env.get("SPARK_HOME")
    if not home:
        try:
            import pyspark

            home = str(Path(pyspark.__file__).parent)
        except ImportError:
            return None
    path = Path(home) / "conf"
    return path if path.is_dir() else None


_PROP_LINE = re.compile(r"^\s*([^\s=:#!][^\s=:]*)\s*[\s=:]\s*(.*?)\s*$")


def parse_defaults(text: str) -> dict[str, str]:
    """Keys and values of a ``spark-defaults.conf`` (the last occurrence wins, as in Spark)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        match = _PROP_LINE.match(line)
        if match:
            out[match.group(1)] = match.group(2)
    return out


def recording_settings(
    out: Path, options: RecordOptions, jar: Path
) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """perfmodel's settings: (keys appended to the user's values with a separator, keys set
    only where the user has not set them)."""
    append: dict[str, tuple[str, str]] = {
        "spark.plugins.defaultList": (jfr.PLUGIN_CLASS, ","),
        "spark.driver.defaultExtraClassPath": (str(jar), os.pathsep),
        "spark.executor.defaultExtraClassPath": (str(jar), os.pathsep),
    }
    only_if_unset = {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": (out / bundle.EVENTLOG_DIR).resolve().as_uri(),
        RECORD_DIR_KEY: str((out / "raw").resolve()),
    }
    if uses_jfr(options):
        settings = out / "raw" / "perfmodel.jfc"
        java = jfr.jvm_options(out / bundle.JFR_DIR, settings, out / JFR_REPOSITORY)
        append["spark.driver.defaultJavaOptions"] = (java, " ")
        append["spark.executor.defaultJavaOptions"] = (java, " ")
    samples_dir = plugin_samples_dir(out, options)
    if samples_dir is not None:
        only_if_unset[jfr.SAMPLES_DIR_KEY] = str(samples_dir.resolve())
        only_if_unset[jfr.SAMPLES_INTERVAL_KEY] = str(plugin_interval(options))
        if options.jvm_sampler == "both":
            only_if_unset[jfr.SAMPLES_WITH_JFR_KEY] = "true"
    return append, only_if_unset


def plugin_interval(options: RecordOptions) -> int:
    """The plugin sampler's period in milliseconds (where it runs)."""
    if options.jvm_sampler == "both" and options.plugin_interval_ms:
        return options.plugin_interval_ms
    return options.interval_ms


def merged_defaults(
    user_text: str, append: Mapping[str, tuple[str, str]], only_if_unset: Mapping[str, str]
) -> str:
    """The user's ``spark-defaults.conf`` verbatim, then perfmodel's lines (last one wins)."""
    user = parse_defaults(user_text)
    lines = [user_text.rstrip("\n"), "", "# appended by perfmodel record"] if user_text else []
    if not user_text:
        lines.append("# written by perfmodel record")
    for key, (value, sep) in append.items():
        mine = f"{user[key]}{sep}{value}" if user.get(key) else value
        lines.append(f"{key} {mine}")
    for key, value in only_if_unset.items():
        if key not in user:
            lines.append(f"{key} {value}")
    return "\n".join(lines) + "\n"


def write_conf_dir(out: Path, env: Mapping[str, str], options: RecordOptions, jar: Path) -> Path:
    """A copy of the user's configuration directory with perfmodel's settings appended."""
    conf = out / CONF_DIR
    conf.mkdir(parents=True, exist_ok=True)
    source = user_conf_dir(env)
    user_text = ""
    if source is not None:
        for item in source.iterdir():
            if item.name == DEFAULTS or not item.is_file():
                continue
            shutil.copy2(item, conf / item.name)
        if (source / DEFAULTS).is_file():
            user_text = (source / DEFAULTS).read_text(encoding="utf-8", errors="replace")
    append, only_if_unset = recording_settings(out, options, jar)
    (conf / DEFAULTS).write_text(merged_defaults(user_text, append, only_if_unset), "utf-8")
    if uses_jfr(options):
        settings = out / "raw" / "perfmodel.jfc"
        settings.write_text(jfr.jfc_settings(options.interval_ms, options.native_interval_ms))
        (out / JFR_REPOSITORY).mkdir(parents=True, exist_ok=True)
    return conf


DASK_PLUGIN = Path(__file__).resolve().parents[2] / "dask" / "plugin.py"
"""Dask's preload for recording (`perfmodel.dask.plugin`), given to Dask as a file so that it
loads in any Python that has Dask, with or without perfmodel."""
DASK_DIR_ENV = "PERFMODEL_DASK_DIR"
DASK_PRELOAD_KEYS = ("scheduler", "worker", "client")


def dask_env(out: Path, env: Mapping[str, str]) -> dict[str, str]:
    """Environment variables that make a ``dask.distributed`` command write its task stream
    into the bundle (``raw/dask``), without changing the command: Dask's own preload settings
    name `DASK_PLUGIN` for the scheduler, the workers and the clients. Preloads the user's
    configuration already names (files or ``DASK_*`` variables) are kept, ours after them.
    Nothing is set where Dask is not installed; a command that does not use Dask ignores it.
    """
    if importlib.util.find_spec("dask") is None:
        return {}
    import dask.config  # only where installed; ~50 ms

    config = dask.config.collect(env=dict(env))
    out_env = {DASK_DIR_ENV: str((out / bundle.DASK_DIR).resolve())}
    for key in DASK_PRELOAD_KEYS:
        current = dask.config.get(f"distributed.{key}.preload", default=[], config=config)
        preloads = [current] if isinstance(current, str) else list(current or [])
        argv = dask.config.get(f"distributed.{key}.preload-argv", default=[], config=config)
        out_env[f"DASK_DISTRIBUTED__{key.upper()}__PRELOAD"] = repr([*preloads, str(DASK_PLUGIN)])
        if argv and not isinstance(argv[0], str):  # one list per preload: ours takes none
            out_env[f"DASK_DISTRIBUTED__{key.upper()}__PRELOAD_ARGV"] = repr([*argv, []])
    return out_env

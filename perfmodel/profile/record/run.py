"""``perfmodel record``: run a user's unmodified Spark command with recording switched on.

Everything is switched on by configuration, never by changing the command
(`perfmodel.profile.record.setup`). The event log goes into the bundle unless the user's
configuration sends it elsewhere; then the plugin reports where, and it is copied. The
command's output and exit code pass through untouched, and the bundle is written even when the
command fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import psutil

from perfmodel.profile import bundle, jfr, pyspy
from perfmodel.profile.bundle import BundleManifest
from perfmodel.profile.record import (
    bundle_write,
    cgroup_cpu,
    children,
    pyspy_recorder,
    thread_sampler,
)
from perfmodel.profile.record.cost import (
    JvmRecordingThreads,
    RecordingCost,
    own_cpu_s,
    usable_cores,
)
from perfmodel.profile.record.monitor import ProcessTreeMonitor, ResourceSummary
from perfmodel.profile.record.proctree import ProcessTree
from perfmodel.profile.record.setup import (
    JFR_REPOSITORY,
    PLUGIN_SAMPLES_DIR,
    RecordOptions,
    dask_env,
    plugin_interval,
    plugin_samples_dir,
    python_interval,
    uses_jfr,
    write_conf_dir,
)


@dataclass(slots=True)
class RecordResult:
    exit_code: int
    bundle: Path
    manifest: BundleManifest
    warnings: list[str] = field(default_factory=list)
    resources: ResourceSummary | None = None
    """What the process-tree monitor measured (None when monitoring was off)."""
    cost: RecordingCost | None = None
    """The samplers' CPU time while the command ran (`recording_cost`)."""


def _pidfd(pid: int) -> int | None:
    """A descriptor that turns readable when ``pid`` exits (Linux 5.3+), else None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _sleep_unless_exit(pidfd: int | None, seconds: float) -> None:
    """Sleep ``seconds``, or until the command exits: the command's end time (the manifest's
    ``command_ended_ms``) is then exact rather than up to a poll period late."""
    if pidfd is None:
        time.sleep(seconds)
    else:
        select.select([pidfd], [], [], seconds)


def _has_exited(proc: psutil.Process) -> bool:
    """Gone, or a zombie none of whose threads runs any more.

    A JVM orphaned by the command's exit is reparented to init, and a container's init may reap
    it seconds later (measured here: 1.3-1.9 s after its last thread ended); its recording is
    complete once its threads have ended, so waiting for the reaping is only time lost. The
    leader alone being a zombie is not enough: Java's launcher thread may end before the
    others (seen: the leader a zombie while a compiler thread still ran).
    """
    try:
        if not proc.is_running():
            return True
        if proc.status() != psutil.STATUS_ZOMBIE:
            return False
        return len(os.listdir(f"/proc/{proc.pid}/task")) <= 1
    except (psutil.NoSuchProcess, FileNotFoundError):
        return True


def _wait_for_exit(procs: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """Wait until every process has exited (`_has_exited`); those still running after
    ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    running = [p for p in procs if not _has_exited(p)]
    while running and time.monotonic() < deadline:
        time.sleep(0.02)
        running = [p for p in running if not _has_exited(p)]
    return running


def _is_java(proc: psutil.Process) -> bool:
    try:
        cmd = proc.cmdline()
    except (psutil.Error, OSError):
        return False
    return bool(cmd) and os.path.basename(cmd[0]) == "java"


def _exit_status(code: int) -> int:
    """A shell's view of the status: a command killed by signal N exits 128+N."""
    return 128 - code if code < 0 else code


def _command_warnings(command: Sequence[str]) -> list[str]:
    if "--properties-file" in command:
        return [
            "the command passes --properties-file, so Spark ignores spark-defaults.conf and "
            "perfmodel's settings: the bundle may lack samples and the event log"
        ]
    return []


def record(
    command: Sequence[str], options: RecordOptions, env: Mapping[str, str] | None = None
) -> RecordResult:
    """Run ``command`` with recording on and write a bundle to ``options.out``.

    The bundle is built in a hidden stage beside ``options.out`` and renamed into place at the
    end (`bundle_write.staged_directory`): a command that cannot start leaves nothing behind.
    """
    with bundle_write.staged_directory(options.out) as stage:
        result = _record_into(stage, command, options, env)
    result.bundle = options.out
    # Messages name files by where they now are, not by the stage's path.
    result.manifest = bundle.read_manifest(options.out)
    result.warnings = list(result.manifest.warnings)
    return result


def _record_into(
    out: Path, command: Sequence[str], options: RecordOptions, env: Mapping[str, str] | None
) -> RecordResult:
    base_env = dict(os.environ if env is None else env)
    jar = jfr.plugin_jar()
    conf = write_conf_dir(out, base_env, options, jar)
    run_env = {**base_env, "SPARK_CONF_DIR": str(conf.resolve()), **dask_env(out, base_env)}
    warnings = _command_warnings(command)
    warnings.extend(orphan.describe() for orphan in children.find_orphans())

    recorder: pyspy_recorder.PySpyRecorder | None = None
    py_spy = pyspy.py_spy_executable() if options.pyspy else None
    if options.pyspy and py_spy is None:
        warnings.append("py-spy is not installed: no Python samples were recorded")
    elif py_spy is not None:
        recorder = pyspy_recorder.PySpyRecorder(
            out / bundle.PYSPY_DIR, python_interval(options), py_spy
        )

    started = bundle_write.now_ms()
    interrupted: list[int] = []

    started_child: list[int] = []

    def _remember(signum: int, _frame: FrameType | None) -> None:
        # The command runs in a process group of its own, so the terminal's Ctrl-C reaches
        # perfmodel only: pass it on, and stay to write the bundle.
        interrupted.append(signum)
        for pid in started_child:
            children.signal_group(pid, signum)

    previous = signal.signal(signal.SIGINT, _remember)
    jvms: dict[int, psutil.Process] = {}
    jvm_threads = JvmRecordingThreads()
    own_cpu_before = own_cpu_s()
    monitor: ProcessTreeMonitor | None = None
    resources: ResourceSummary | None = None
    threads = thread_sampler.ThreadCpuSampler() if options.thread_cpu else None
    jvm_executors: dict[int, str] = {}
    limits: dict[str, float | None] = {}
    monitor_cpu_s = 0.0
    reaper = contextlib.ExitStack()
    try:
        # Disarmed in the finally below, once the workload's JVMs have had their time to end.
        preexec = reaper.enter_context(children.group_dies_with_us())
        try:
            child = subprocess.Popen(
                list(command),
                env=run_env,
                stdin=children.workload_stdin(),
                preexec_fn=preexec,
            )
        except OSError as exc:
            raise bundle.BundleError(f"cannot run {command[0]!r}: {exc}") from None
        started_child.append(child.pid)
        note = children.register(child.pid, command)
        if options.monitor:
            monitor = ProcessTreeMonitor(child.pid, options.poll_s)
            monitor.start(background=False)
        # One listing of the tree per poll serves the tracker and the monitor: listing it is
        # most of perfmodel's own CPU while the job runs (docs/recording-overhead.md).
        walker = ProcessTree(child.pid)
        daemons = [ProcessTree(pid) for pid in options.daemon_pids]
        exit_signal = _pidfd(child.pid)
        try:
            while child.poll() is None:
                tree = walker.processes()
                everything = tree + _started_by(daemons, started)
                _track(everything, jvms, recorder)
                jvm_threads.poll(jvms)
                if threads is not None or options.daemon_pids:
                    executors = _executors_of(jvms, jvm_executors)
                    if threads is not None:
                        threads.poll(executors, everything)
                    if options.daemon_pids:
                        _note_limits(executors, limits)
                if monitor is not None:
                    began = time.thread_time()
                    monitor.sample(tree)
                    monitor_cpu_s += time.thread_time() - began
                _sleep_unless_exit(exit_signal, options.poll_s)
        finally:
            if exit_signal is not None:
                os.close(exit_signal)
        exit_code = _exit_status(child.returncode)
        children.unregister(note)
        command_ended = bundle_write.now_ms()
        own_cpu = own_cpu_s() - own_cpu_before
        jvm_threads.poll(jvms)  # JVMs that outlive the command (executors shutting down)
        if threads is not None:
            threads.poll(_executors_of(jvms, jvm_executors), walker.processes())
        leftover = _wait_for_exit(list(jvms.values()), options.jvm_exit_timeout_s)
        for proc in leftover:
            warnings.append(
                f"JVM {proc.pid} was still running {options.jvm_exit_timeout_s:.0f} s after the "
                "command ended; its recording is missing or incomplete"
            )
        pyspy_files = recorder.stop() if recorder is not None else []
        cost = RecordingCost(
            command_s=(command_ended - started) / 1000.0,
            cores=usable_cores(),
            pyspy_cpu_s=recorder.cpu_s if recorder is not None else 0.0,
            jvm_recording_cpu_s=jvm_threads.cpu_s,
            perfmodel_cpu_s=own_cpu,
        )
    finally:
        reaper.close()
        signal.signal(signal.SIGINT, previous)
        if threads is not None:
            threads.close()
        if monitor is not None:
            resources = monitor.stop()
    if recorder is not None:
        warnings.extend(recorder.warnings)
    ended = bundle_write.now_ms()

    apps = _app_infos(out)
    warnings.extend(_collect_event_logs(out, apps))
    jfr_files = sorted(p for p in (out / bundle.JFR_DIR).iterdir() if jfr.is_recording(p))
    jfr_files += sorted((out / JFR_REPOSITORY).glob("*/*.jfr"))
    dask_files = sorted((out / bundle.DASK_DIR).glob("*.jsonl"))
    if options.jfr and not jfr_files and not dask_files:  # a Dask run starts no JVM
        what = "JFR recording" if uses_jfr(options) else "JVM sample file (plugin sampler)"
        warnings.append(f"no {what} was written (did the application start a JVM?)")
    plugin_dir = plugin_samples_dir(out, options)
    plugin_copy: dict[str, Any] = {}
    if options.jvm_sampler == "both" and plugin_dir is not None:
        kept = sorted(plugin_dir.glob(f"*{jfr.PLUGIN_SAMPLES_SUFFIX}"))
        if not kept:
            warnings.append("no JVM sample file of the plugin's sampler was written (both)")
        plugin_copy = {
            "dir": PLUGIN_SAMPLES_DIR,
            "files": len(kept),
            "interval_ms": plugin_interval(options),
        }

    manifest = BundleManifest(
        # With daemons (a cluster's workers) the executors run on their hosts, not this one:
        # this machine's cores say nothing about theirs (the model then takes the cores the
        # cluster manager gave the executors).
        host_cores=None if options.daemon_pids else os.cpu_count(),
        command=list(command),
        cwd=os.getcwd(),
        exit_code=exit_code,
        started_ms=started,
        ended_ms=ended,
        command_ended_ms=command_ended,
        py_spy=pyspy.py_spy_version(py_spy) if py_spy else "",
        sampling={
            "interval_ms": options.interval_ms,
            "jvm_sampler": options.jvm_sampler if options.jfr else "",
            **({"plugin_samples": plugin_copy} if plugin_copy else {}),
            "jfr": {
                "enabled": uses_jfr(options),
                "events": [
                    "jdk.ExecutionSample",
                    "jdk.NativeMethodSample",
                    "jdk.ThreadPark",
                    "jdk.JavaMonitorWait",
                    "jdk.JavaMonitorEnter",
                ],
                "wait_threshold_ms": max(1, options.interval_ms // 2),
                "java_interval_ms": options.interval_ms,
                "native_interval_ms": options.native_interval_ms
                or jfr.default_native_interval(options.interval_ms),
                "stack_depth": jfr.STACK_DEPTH,
                "plugin": jfr.PLUGIN_CLASS,
            },
            **({"dask": {"dir": bundle.DASK_DIR, "files": len(dask_files)}} if dask_files else {}),
            "pyspy": {
                "enabled": recorder is not None,
                "rate_hz": round(1000.0 / python_interval(options)),
                "mode": (
                    "one sampler per Python process, chrometrace, --idle, --nonblocking, "
                    "--nolineno; stopped after 1 s without CPU, restarted when it runs"
                ),
            },
        },
        apps=apps,
        recording_cost=cost.to_dict(),
        executor_hosts=(
            {
                "machine_cores": usable_cores(),
                "executors": {e: {"cpu_limit_cores": q} for e, q in sorted(limits.items())},
            }
            if limits
            else {}
        ),
        warnings=warnings,
    )
    if resources is not None:
        manifest.resources = bundle_write.write_resources(out, resources)
        manifest.resources["monitor_cpu_s"] = round(monitor_cpu_s, 4)
    if threads is not None:
        try:
            manifest.thread_cpu = thread_sampler.write(out, threads, options.poll_s)
        except (OSError, ValueError) as exc:  # the rest of the bundle is still written
            manifest.warnings.append(f"per-thread CPU not written: {exc}")
    if interrupted:
        manifest.warnings.append("interrupted (Ctrl-C): the recording covers the run until then")
    # The JVMs record watched ran on this machine (local mode, or the namespace cluster).
    written = bundle_write.assemble(
        out,
        jfr_files=jfr_files,
        pyspy_files=pyspy_files,
        manifest=manifest,
        host_cpus=os.cpu_count(),
    )
    # Chunks left by a JVM that died are now read into the samples; the copies stay in raw/.
    return RecordResult(exit_code, out, written, list(written.warnings), resources, cost)


def _track(
    tree: list[psutil.Process],
    jvms: dict[int, psutil.Process],
    recorder: pyspy_recorder.PySpyRecorder | None,
) -> None:
    """Remember the command's JVMs (to wait for their recordings) and sample new Pythons.

    ``tree`` is the command's process and its descendants. A process is checked again until
    it is a JVM: ``spark-submit`` runs shell scripts that ``exec`` java under the same pid.
    """
    for proc in tree:
        if proc.pid not in jvms and _is_java(proc):
            jvms[proc.pid] = proc
    if recorder is not None:
        recorder.poll(tree)


def _executors_of(jvms: dict[int, psutil.Process], known: dict[int, str]) -> dict[int, str]:
    """Executor id of each JVM (its command line, read until it names an executor).

    A worker starts its executor by forking: the child is seen with the worker's own
    command line for a moment before it becomes the executor's ``java``, so a reading
    without ``--executor-id`` is taken again at the next poll (a cluster bundle filed one
    executor's threads under the driver before)."""
    for pid, proc in jvms.items():
        if known.get(pid, "driver") == "driver":
            try:
                known[pid] = thread_sampler.executor_of_jvm(proc.cmdline())
            except (psutil.Error, OSError):
                known[pid] = "driver"
    return {pid: known[pid] for pid in jvms}


def _note_limits(executors: Mapping[int, str], limits: dict[str, float | None]) -> None:
    """The CPU limit (cgroup quota) of each executor JVM on this machine, read once it names
    its executor: a worker's executors run in the worker's group."""
    for pid, executor in executors.items():
        if executor != "driver" and executor not in limits:
            limits[executor] = cgroup_cpu.cpu_limit_cores(pid)


def _started_by(daemons: list[ProcessTree], since_ms: float) -> list[psutil.Process]:
    """Descendants of the daemons started since ``since_ms`` (not executors of earlier
    applications still shutting down, nor the daemons themselves). A process's start time
    counts from the boot time, which Linux gives in whole seconds: hence the 2 s allowance."""
    found = []
    for daemon in daemons:
        for proc in daemon.processes():
            try:
                if proc.pid != daemon.root_pid and proc.create_time() * 1000.0 >= since_ms - 2000.0:
                    found.append(proc)
            except psutil.Error:
                continue
    return found


def _app_infos(out: Path) -> list[dict[str, str]]:
    apps = []
    for path in sorted((out / bundle.APPS_DIR).glob("*.json")):
        try:
            apps.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return apps


def _local_dir(uri: str) -> Path | None:
    if uri.startswith("file://"):
        return Path(uri[len("file://") :])
    if uri.startswith("file:"):
        return Path(uri[len("file:") :])
    if "://" in uri:
        return None
    return Path(uri)


def _collect_event_logs(out: Path, apps: list[dict[str, str]]) -> list[str]:
    """Copy event logs the user's settings sent elsewhere into the bundle."""
    warnings: list[str] = []
    ours = (out / bundle.EVENTLOG_DIR).resolve()
    for app in apps:
        app_id = app.get("app_id", "")
        enabled = app.get("spark.eventLog.enabled", "") or "false"
        if enabled.lower() != "true":
            warnings.append(
                f"application {app_id} ran with spark.eventLog.enabled={enabled} "
                "(set by your configuration): the bundle has no event log for it"
            )
            continue
        directory = _local_dir(app.get("spark.eventLog.dir", ""))
        if directory is None:
            warnings.append(
                f"application {app_id} wrote its event log to {app.get('spark.eventLog.dir')}, "
                "which perfmodel cannot read; copy it and use `perfmodel profile`"
            )
            continue
        if directory.resolve() == ours:
            continue
        matches = [p for p in directory.glob(f"*{app_id}*") if not p.name.endswith(".crc")]
        if not matches:
            warnings.append(f"no event log for application {app_id} found in {directory}")
        for match in matches:
            dest = out / bundle.EVENTLOG_DIR / match.name
            if match.is_dir():
                shutil.copytree(match, dest, dirs_exist_ok=True)
            else:
                shutil.copy2(match, dest)
    return warnings
